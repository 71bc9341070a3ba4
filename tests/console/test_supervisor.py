"""The supervisor dashboard through HTTP: leaders see their groups, staff all; the live part
(agents, queues, what falls due) renders alone for the refresh; the day part has today's
counts and spread and the required vs available chart."""

from datetime import timedelta

import pytest
from django.utils import timezone

from routing.models import AgentPresence, AssignmentEvent
from sla.models import SlaEvent
from tests.factories import HandlerGroupFactory, StaffFactory, TicketFactory, UserFactory
from ticketing.models import ProcessStatus, TicketStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def floor(handlers, leader, group):
    """The support group: one agent available, one busy; two tickets waiting (the oldest for
    25 minutes), one in progress with a level due in 10 minutes; three assignments today."""
    now = timezone.now()
    AgentPresence.objects.create(
        user=handlers[0], state="available", state_since=now, last_heartbeat=now
    )
    AgentPresence.objects.create(
        user=handlers[1], state="busy", state_since=now, last_heartbeat=now
    )
    for minutes in (25, 5):
        TicketFactory(
            handler_group=group,
            process_status=ProcessStatus.APPROVED,
            ticket_status=TicketStatus.PENDING_ASSIGN,
            approved_time=now - timedelta(minutes=minutes),
            queued_time=now - timedelta(minutes=minutes),
        )
    busy = TicketFactory(
        title="Printer on fire",
        handler_group=group,
        handler=handlers[0],
        process_status=ProcessStatus.APPROVED,
        ticket_status=TicketStatus.PROCESSING,
        approved_time=now,
        responded_time=now,
    )
    SlaEvent.objects.create(
        ticket=busy, clock="resolve", level=3, due_at=now + timedelta(minutes=10)
    )
    SlaEvent.objects.create(
        ticket=busy, clock="resolve", level=4, due_at=now + timedelta(minutes=50)
    )
    for user in (handlers[0], handlers[0], handlers[1]):
        AssignmentEvent.objects.create(
            group=group, ticket=busy, user=user, kind="assigned", strategy=1, created=now
        )
    other = HandlerGroupFactory(name="facilities", members=[UserFactory(username="fixer")])
    return {"busy": busy, "other": other}


def test_a_leader_sees_their_groups_floor_now_and_today(as_user, leader, floor):
    response = as_user(leader).get("/console/supervisor/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "support" in html and "facilities" not in html and "fixer" not in html
    assert "2 tickets waiting" in html and "oldest" in html and "25 min" in html
    assert "1 of 2 available" in html
    assert "handler0" in html and "state-available" in html and "state-busy" in html
    assert "Printer on fire" in html  # resolve level due in 10 minutes
    assert html.count("<time datetime=") >= 1
    assert "3 in all; spread (standard deviation) 0.5" in html
    assert 'class="staffing-chart"' in html  # required vs available per hour today


def test_the_live_part_renders_alone_for_the_refresh(as_user, leader, floor):
    response = as_user(leader).get("/console/supervisor/?part=live")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html and "2 tickets waiting" in html


def test_staff_see_every_group(as_user, floor):
    html = as_user(StaffFactory()).get("/console/supervisor/").content.decode()
    assert "support" in html and "facilities" in html


def test_members_and_applicants_are_refused_and_strangers_sent_to_log_in(
    as_user, handlers, client, floor
):
    assert as_user(handlers[0]).get("/console/supervisor/").status_code == 403
    assert as_user(UserFactory()).get("/console/supervisor/").status_code == 403
    client.logout()
    assert client.get("/console/supervisor/").status_code == 302


def test_the_navigation_links_the_dashboard_for_leaders_only(as_user, leader, handlers, floor):
    assert "/console/supervisor/" in as_user(leader).get("/console/").content.decode()
    assert "/console/supervisor/" not in as_user(handlers[0]).get("/console/").content.decode()


def test_the_latest_simulation_is_shown_side_by_side(as_user, leader, group, floor):
    from insight.models import Simulation

    rows = [
        {"strategy": code, "strategy_label": label, "wait_p50_seconds": p50,
         "wait_p95_seconds": p95, "sla_response_breaches": 0, "max_queue_length": 2,
         "count_stddev": spread, "occupancy_stddev": 0.1}
        for code, label, p50, p95, spread in [
            (1, "round robin", 10.0, 95.0, 1.0), (4, "longest idle", 8.0, 60.0, 2.0)
        ]
    ]  # fmt: skip
    Simulation.objects.create(
        group=group, params={}, status="done", result={"strategies": rows},
        created_by=leader, finished=timezone.now(),
    )  # fmt: skip
    html = as_user(leader).get("/console/supervisor/").content.decode()
    assert 'id="simulation-wait"' in html and 'id="simulation-spread"' in html
    assert "round robin" in html and "longest idle" in html and "1 min 35 s" in html


def test_the_button_starts_a_simulation_and_the_page_follows_it(as_user, leader, group, floor):
    from unittest import mock

    from insight import services
    from insight.models import Simulation

    with mock.patch("insight.services.current_app.send_task") as send:
        with_commit = as_user(leader)
        response = with_commit.post("/console/supervisor/simulate/", {"group": group.pk})
    simulation = Simulation.objects.get()
    assert response.status_code == 302
    assert response["Location"].endswith(f"?group={group.pk}&simulation={simulation.pk}#simulation")
    assert simulation.params["group"] == group.pk and simulation.created_by == leader
    assert simulation.params["strategies"] == [1, 2, 3, 4]
    del send
    html = with_commit.get(response["Location"]).content.decode()
    assert 'data-status="queued"' in html and 'http-equiv="refresh"' in html
    assert services.run_simulation(simulation.pk) == "done"
    html = with_commit.get(response["Location"]).content.decode()
    assert 'data-status="done"' in html and 'http-equiv="refresh"' not in html
    assert 'id="simulation-wait"' in html


def test_only_the_groups_leader_may_start_one(as_user, handlers, group, floor):
    from insight.models import Simulation

    response = as_user(handlers[0]).post("/console/supervisor/simulate/", {"group": group.pk})
    assert response.status_code == 403
    assert not Simulation.objects.exists()
    assert as_user(handlers[0]).get("/console/supervisor/simulate/").status_code == 405
