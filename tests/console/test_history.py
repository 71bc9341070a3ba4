"""The ticket's history in words (console/history.py): one sentence per record kind, with
names, not ids. `describe` is pure: these tests build records in memory."""

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from console.history import Names, describe, describe_all, join_names

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
NAMES = Names(
    users={1: "approver", 2: "it_bob", 3: "it_carol", 4: "lead_it", 5: "alice"},
    groups={10: "Tier 1", 20: "Tier 2"},
)


def rec(action, actor_id=None, created=T0, **detail):
    return SimpleNamespace(action=action, actor_id=actor_id, created=created, detail=detail)


@pytest.mark.parametrize(
    ("record", "words"),
    [
        (rec("submit", 5, field="ticket_status"), "Submitted by alice"),
        (rec("approve", 1), "Approved by approver"),
        (rec("approve"), "Approved"),  # the applicant's view: the approver is not named
        (rec("reject", 1, reason="duplicate"), "Rejected by approver: duplicate"),
        (rec("cancel", 5), "Cancelled by alice"),
        (rec("enter_pool", 1), "Waiting in the pool for someone to take it"),
        (rec("assign", 1, handler_id=2, strategy=1), "Round robin chose it_bob"),
        (
            rec("assign", 1, handler_id=2, strategy=1, after_id=3),
            "Round robin chose it_bob (next after it_carol)",
        ),
        (rec("assign", None, handler_id=3, strategy=2), "Least load chose it_carol"),
        (
            rec("reclaim", handler_id=3, reason="timeout"),
            "Offered to it_carol — not accepted in time, reclaimed",
        ),
        (
            rec("reclaim", handler_id=3, reason="offer push failed"),
            "Offered to it_carol — reclaimed (offer push failed)",
        ),
        (
            rec("decline", 2, handler_id=2, group_id=10, reason="not my area"),
            "Declined by it_bob: not my area",
        ),
        (rec("decline", 2, handler_id=2, group_id=10, reason=""), "Declined by it_bob"),
        (rec("accept", 2), "Accepted by it_bob"),
        (rec("complete", 2), "Completed by it_bob"),
        (rec("close", 5), "Closed by alice"),
        (
            rec("overflow", from_group_id=10, to_group_id=20),
            "Moved from Tier 1 to Tier 2: nobody there could take it in time",
        ),
        (
            rec("transfer", from_group_id=10, to_group_id=20, sla_level=2),
            "Moved to Tier 2 by the SLA escalation (level 2)",
        ),
        (
            rec("transfer", 4, from_group_id=10, to_group_id=10, to_handler_id=3),
            "Transferred to it_carol in Tier 1 by lead_it",
        ),
        (
            rec("transfer", 4, from_group_id=10, to_group_id=20, to_handler_id=None),
            "Transferred to Tier 2 by lead_it",
        ),
        (rec("reply", 2, reply_id=1, reply_type="public"), "Reply from it_bob"),
        (rec("reply", 2, reply_id=2, reply_type="internal"), "Internal note by it_bob"),
        (
            rec("sla_pause", 2),
            "Waiting on the applicant: the resolve clock was paused by it_bob",
        ),
        (rec("sla_resume", 2), "The resolve clock was resumed by it_bob"),
        (
            rec(
                "sla_response_level",
                level=1,
                due_at="2026-03-02T09:45:00+00:00",
                deadline="2026-03-02T10:00:00+00:00",
                recipients=[2, 4],
            ),
            "SLA warning sent to it_bob and lead_it (response, level 1)",
        ),
        (
            rec(
                "sla_resolve_level",
                level=2,
                due_at="2026-03-02T10:00:00+00:00",
                deadline="2026-03-02T10:00:00+00:00",
                recipients=[2, 4, 1],
                reassign={"group_id": 20, "moved": False, "reason": "disabled"},
            ),
            "SLA escalation sent to it_bob, lead_it and approver (resolve, level 2); "
            "could not move it to Tier 2",
        ),
        (
            rec("sla_response_timeout", deadline="2026-03-02T10:00:00+00:00"),
            "The response deadline passed without a response",
        ),
        (
            rec("sla_resolve_timeout", deadline="2026-03-02T10:00:00+00:00"),
            "The resolve deadline passed before the ticket was resolved",
        ),
        (rec("admin_edit", 4, fields=["priority"]), "Edited in the admin by lead_it (priority)"),
        (
            rec("attachment_removed", 4, attachment_id=7, filename="vpn.log", reply_id=None),
            "The file vpn.log was removed by lead_it",
        ),
        (rec("something_new", 2), "Something new by it_bob"),
    ],
)
def test_each_record_kind_in_words(record, words):
    assert describe(record, NAMES) == words


def test_no_ids_leak_when_a_name_is_unknown():
    assert describe(rec("accept", 99), NAMES) == "Accepted by user #99"


def test_a_reclaim_says_how_long_the_offer_waited():
    offered = rec("assign", None, T0, handler_id=3, strategy=1)
    reclaimed = rec("reclaim", None, T0 + timedelta(minutes=2), handler_id=3, reason="timeout")
    assert describe(reclaimed, NAMES, offered_at=offered.created) == (
        "Offered to it_carol — not accepted in 2 min, reclaimed"
    )


@pytest.mark.django_db
def test_describe_all_reads_the_names_in_one_query_each(django_assert_num_queries):
    from tests.factories import HandlerGroupFactory, UserFactory

    bob, carol = UserFactory(username="it_bob"), UserFactory(username="it_carol")
    tier = HandlerGroupFactory(name="Tier 2", members=[bob, carol])
    records = [
        rec("assign", None, T0, handler_id=carol.pk, strategy=1),
        rec("reclaim", None, T0 + timedelta(minutes=2), handler_id=carol.pk, reason="timeout"),
        rec("assign", None, T0 + timedelta(minutes=2), handler_id=bob.pk, strategy=1),
        rec("transfer", None, from_group_id=None, to_group_id=tier.pk, sla_level=2),
        rec("accept", bob.pk),
    ]
    with django_assert_num_queries(2):  # the users, the groups
        lines = describe_all(records)
    assert lines == [
        "Round robin chose it_carol",
        "Offered to it_carol — not accepted in 2 min, reclaimed",
        "Round robin chose it_bob",
        "Moved to Tier 2 by the SLA escalation (level 2)",
        "Accepted by it_bob",
    ]


def test_names_are_listed_in_words():
    assert join_names(["a"]) == "a"
    assert join_names(["a", "b"]) == "a and b"
    assert join_names(["a", "b", "c"]) == "a, b and c"


def test_a_round_robin_pick_names_who_came_before_in_chinese():
    from django.utils import translation

    with translation.override("zh-hans"):
        words = describe(rec("assign", None, handler_id=2, strategy=1, after_id=3), NAMES)
    assert words == "轮询：分配给 it_bob（接在 it_carol 之后）"
