"""The ticket page's Macros card and the composer's canned responses picker: the team sees a
button per macro it may apply and the picker's hooks, the applicant neither; Apply runs the
macro (a message, the history's one entry) or shows the refusal with its status, nothing
changed; the history folds a run's steps under its entry."""

import pytest
from django.urls import reverse

from tests.toolbox.macros_cast import canned, macro, make_cast
from ticketing.models import Ticket, TicketRecord

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast(applicant, approver):
    return make_cast(applicant, approver)


def page(client, user, ticket):
    client.force_login(user)
    return client.get(reverse("console:ticket", args=[ticket.pk]))


def apply(client, user, ticket, item):
    client.force_login(user)
    return client.post(reverse("console:ticket-macro-apply", args=[ticket.pk, item.pk]))


def test_the_team_sees_a_button_per_macro_it_may_use_and_the_picker(client, cast):
    ticket = cast["ticket"]()
    mine = macro(cast["handlers"][0], [{"action": "pause"}], name="Wait for part")
    macro(
        cast["other_leader"],
        [{"action": "pause"}],
        scope="group",
        group=cast["other_group"],
        name="Facilities only",
    )
    canned(cast["handlers"][0])
    html = page(client, cast["handlers"][0], ticket).content.decode()
    assert 'data-testid="macros-card"' in html
    assert f'data-testid="macro-apply" data-macro-id="{mine.pk}"' in html
    assert "Wait for part" in html and "Facilities only" not in html
    assert 'data-testid="canned-open"' in html
    assert f'data-canned-render-url="/api/tickets/{ticket.pk}/canned-responses/0/render/"' in html
    assert "js/canned.js" in html


def test_the_applicant_sees_neither_the_macros_nor_the_picker(client, cast):
    ticket = cast["ticket"]()
    macro(cast["staff"], [{"action": "pause"}], scope="global")
    html = page(client, cast["applicant"], ticket).content.decode()
    assert 'data-testid="macros-card"' not in html
    assert "data-canned-url" not in html and 'data-testid="canned-open"' not in html


def test_apply_runs_the_macro_and_says_so(client, cast):
    ticket = cast["ticket"]()
    agent = cast["handlers"][0]
    item = macro(agent, [{"action": "set_priority", "priority": 4}, {"action": "pause"}])
    response = apply(client, agent, ticket, item)
    assert response.status_code == 302
    assert response["Location"] == reverse("console:ticket", args=[ticket.pk])
    ticket.refresh_from_db()
    assert ticket.priority == 4 and ticket.sla_paused
    html = client.get(response["Location"]).content.decode()
    assert "“Printer: awaiting part” was applied to" in html


def test_a_refused_step_shows_the_page_with_its_status_and_changes_nothing(client, cast):
    ticket = cast["ticket"]()
    agent = cast["handlers"][0]
    item = macro(agent, [{"action": "set_priority", "priority": 1}, {"action": "resume"}])
    records = TicketRecord.objects.filter(ticket=ticket).count()
    response = apply(client, agent, ticket, item)
    assert response.status_code == 409
    assert (
        "Nothing was changed: step 2 (resume the clock) could not run." in response.content.decode()
    )
    assert Ticket.objects.get(pk=ticket.pk).priority == 3
    assert TicketRecord.objects.filter(ticket=ticket).count() == records
    # A step the viewer may not take: 403.
    other = macro(cast["handlers"][1], [{"action": "complete"}])
    assert apply(client, cast["handlers"][1], ticket, other).status_code == 403


def test_another_groups_macro_is_a_404(client, cast):
    ticket = cast["ticket"]()
    theirs = macro(
        cast["other_leader"], [{"action": "pause"}], scope="group", group=cast["other_group"]
    )
    assert apply(client, cast["handlers"][0], ticket, theirs).status_code == 404
    assert not Ticket.objects.get(pk=ticket.pk).sla_paused


def test_a_transfer_out_of_the_viewers_groups_lands_on_the_pool(client, cast):
    ticket = cast["ticket"]()
    item = macro(cast["handlers"][0], [{"action": "set_priority", "priority": 1}])
    # The leader's macro hands it to facilities; the leader is no member there.
    moving = macro(cast["leader"], [{"action": "transfer", "group_id": cast["other_group"].pk}])
    assert apply(client, cast["handlers"][0], ticket, item).status_code == 302
    response = apply(client, cast["leader"], ticket, moving)
    assert response.status_code == 302 and response["Location"] == reverse("console:pool")


def test_the_history_shows_the_run_as_one_entry(client, cast):
    ticket = cast["ticket"]()
    agent = cast["handlers"][0]
    item = macro(agent, [{"action": "set_priority", "priority": 4}, {"action": "pause"}])
    assert apply(client, agent, ticket, item).status_code == 302
    html = page(client, agent, ticket).content.decode()
    assert html.count('class="record-macro"') == 1
    entry = html.split('class="record-macro"')[1].split("</ul>")[0]
    assert "Printer: awaiting part" in entry
    # Its two steps under it, not beside it.
    assert 'data-testid="history-steps"' in entry and entry.count("<li>") == 2
    assert html.count('class="record-priority"') == 0


def test_the_admin_checks_a_macros_steps_and_a_responses_placeholders(client, cast):
    from django.contrib.auth import get_user_model

    from toolbox.models import CannedResponse, Macro

    root = get_user_model().objects.create_superuser("root", "root@example.test", "pw")
    client.force_login(root)
    base = {"scope": "global", "owner": "", "group": ""}
    bad = {**base, "name": "Bad", "actions": '[{"action": "fly"}]'}
    response = client.post(reverse("admin:toolbox_macro_add"), bad)
    assert response.status_code == 200 and "actions[0].action" in response.content.decode()
    assert not Macro.objects.exists()
    good = {**base, "name": "Good", "actions": '[{"action": "add_tags", "tags": [" A "]}]'}
    assert client.post(reverse("admin:toolbox_macro_add"), good).status_code == 302
    assert Macro.objects.get().actions == [{"action": "add_tags", "tags": ["a"]}]
    canned_bad = {**base, "name": "Hi", "body": "{{ nope }}", "language": ""}
    response = client.post(reverse("admin:toolbox_cannedresponse_add"), canned_bad)
    assert response.status_code == 200 and not CannedResponse.objects.exists()
    for name in ("toolbox_macro", "toolbox_cannedresponse", "toolbox_savedview"):
        assert client.get(reverse(f"admin:{name}_changelist")).status_code == 200
