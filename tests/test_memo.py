"""The per-process memo of rarely changing rows: one read while fresh, cleared at once by a
change in this process, re-read after its time runs out."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from config import memo
from notifications.models import NotifyTemplate
from notifications.sending import send
from sla.models import SlaRule
from sla.selectors import _enabled_rules, match_rule
from tests.factories import UserFactory


@pytest.fixture
def memo_on(settings):
    settings.REFERENCE_CACHE_SECONDS = 5
    _enabled_rules.clear()
    yield
    _enabled_rules.clear()


def rule_queries(callable_):
    with CaptureQueriesContext(connection) as queries:
        result = callable_()
    return result, [q for q in queries.captured_queries if "oa_sla_rule" in q["sql"]]


@pytest.mark.django_db
def test_rules_are_read_once_and_a_change_clears_them(memo_on):
    first, queries = rule_queries(lambda: match_rule(priority=3, category=""))
    assert len(queries) == 1
    again, queries = rule_queries(lambda: match_rule(priority=3, category=""))
    assert queries == [] and again == first
    urgent = SlaRule.objects.create(
        name="urgent", priority=3, response_hours=Decimal(1), resolve_hours=Decimal(4), sort=1
    )
    chosen, queries = rule_queries(lambda: match_rule(priority=3, category=""))
    assert chosen == urgent and len(queries) == 1


@pytest.mark.django_db
def test_an_entry_expires(memo_on, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(memo.time, "monotonic", lambda: clock[0])
    rule_queries(lambda: match_rule(priority=1, category=""))
    clock[0] += 4.9
    assert rule_queries(lambda: match_rule(priority=1, category=""))[1] == []
    clock[0] += 0.2
    assert len(rule_queries(lambda: match_rule(priority=1, category=""))[1]) == 1


@pytest.mark.django_db
def test_a_template_edit_applies_to_the_next_send(memo_on):
    user = UserFactory()
    template = NotifyTemplate.objects.get(code="ticket-assigned")
    send(recipients=[user], template_code=template.code, params=_params(), dedupe_key="a")
    template.title = "Yours now: {{billCode}}"
    template.save()
    [note] = send(recipients=[user], template_code=template.code, params=_params(), dedupe_key="b")
    assert note.title == "Yours now: TK1"


def _params():
    return {"billCode": "TK1", "title": "t", "ticketId": 1, "group": "g"}
