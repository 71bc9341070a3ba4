"""The escalation scanner: every branch, exactly once, with time given explicitly."""

import os
from datetime import timedelta

import pytest
from django.core.management import call_command

from notifications.models import Notification
from sla.scanner import sla_scan
from sla.services import sla_pause
from tests.sla.conftest import T0
from ticketing.models import Ticket
from workflow import services

pytestmark = pytest.mark.django_db

# rule fixture: response 1 h, resolve 4 h, warn 15 min before.
RESPONSE_WARN = T0 + timedelta(minutes=46)
RESPONSE_DUE = T0 + timedelta(hours=1)
RESOLVE_WARN = T0 + timedelta(hours=3, minutes=50)
RESOLVE_DUE = T0 + timedelta(hours=4)


def inbox(ticket):
    return sorted(
        (n.recipient.username, n.template_code, n.params["type"])
        for n in Notification.objects.filter(ticket=ticket).exclude(template_code="ticket-assigned")
    )


def test_nothing_happens_before_the_warning_window(approved, rule):
    ticket = approved()
    assert sla_scan(now=T0 + timedelta(minutes=44)).total == 0
    assert inbox(ticket) == []


def test_response_warning_uses_the_rules_warn_minutes_and_goes_out_once(approved, rule):
    ticket = approved()
    assert sla_scan(now=T0 + timedelta(minutes=44)).counts["response_warn"] == 0  # 16 min left
    assert sla_scan(now=RESPONSE_WARN).counts["response_warn"] == 1
    assert sla_scan(now=RESPONSE_WARN + timedelta(minutes=1)).counts["response_warn"] == 0
    assert inbox(ticket) == [
        ("handler", "ticket-sla-warn", "response"),
        ("leader", "ticket-sla-warn", "response"),
    ]
    ticket.refresh_from_db()
    assert ticket.response_warned and not ticket.response_timeout


def test_response_timeout_marks_records_and_notifies_once(approved, rule):
    ticket = approved()
    result = sla_scan(now=RESPONSE_DUE)
    assert result.counts["response_timeout"] == 1
    assert sla_scan(now=RESPONSE_DUE + timedelta(minutes=5)).counts["response_timeout"] == 0
    ticket.refresh_from_db()
    assert ticket.response_timeout
    assert ticket.records.filter(action="sla_response_timeout").count() == 1
    timeouts = [n for n in inbox(ticket) if n[1] == "ticket-sla-timeout"]
    assert timeouts == [
        ("handler", "ticket-sla-timeout", "response"),
        ("leader", "ticket-sla-timeout", "response"),
    ]
    message = Notification.objects.get(
        recipient__username="handler", template_code="ticket-sla-timeout"
    )
    assert message.content == (
        f"[SLA timeout] Ticket {ticket.bill_code} (Broken): response deadline passed, "
        "please act now."
    )


def test_no_warning_for_a_deadline_already_passed(approved, rule):
    """The scanner was down across the warning window: only the timeout goes out."""
    ticket = approved()
    sla_scan(now=RESPONSE_DUE + timedelta(minutes=2))
    assert inbox(ticket) == [
        ("handler", "ticket-sla-timeout", "response"),
        ("leader", "ticket-sla-timeout", "response"),
    ]


def test_accepted_tickets_have_no_response_events(approved, rule, people):
    ticket = approved()
    services.ticket_accept(
        ticket_id=ticket.pk, handler=people["handler"], now=T0 + timedelta(minutes=5)
    )
    result = sla_scan(now=RESPONSE_DUE + timedelta(minutes=1))
    assert result.counts["response_warn"] == result.counts["response_timeout"] == 0


def test_resolve_warning_then_timeout(approved, rule, people):
    ticket = approved()
    services.ticket_accept(
        ticket_id=ticket.pk, handler=people["handler"], now=T0 + timedelta(minutes=5)
    )
    assert sla_scan(now=RESOLVE_WARN).counts["resolve_warn"] == 1
    assert sla_scan(now=RESOLVE_DUE).counts["resolve_timeout"] == 1
    assert sla_scan(now=RESOLVE_DUE + timedelta(hours=1)).total == 0
    assert inbox(ticket) == [
        ("handler", "ticket-sla-timeout", "resolve"),
        ("handler", "ticket-sla-warn", "resolve"),
        ("leader", "ticket-sla-timeout", "resolve"),
        ("leader", "ticket-sla-warn", "resolve"),
    ]


def test_paused_clock_neither_warns_nor_times_out(approved, rule, people):
    ticket = approved()
    services.ticket_accept(ticket_id=ticket.pk, handler=people["handler"], now=T0)
    sla_pause(ticket_id=ticket.pk, user=people["handler"], now=T0 + timedelta(hours=1))
    result = sla_scan(now=RESOLVE_DUE + timedelta(hours=2))
    assert result.counts["resolve_warn"] == result.counts["resolve_timeout"] == 0


def test_completed_and_closed_tickets_are_not_scanned(approved, rule, people):
    ticket = approved()
    services.ticket_accept(ticket_id=ticket.pk, handler=people["handler"], now=T0)
    services.ticket_complete(ticket_id=ticket.pk, handler=people["handler"], now=T0)
    assert sla_scan(now=RESOLVE_DUE + timedelta(hours=1)).total == 0


def test_handler_who_is_also_leader_gets_one_message(approved, rule, people):
    group = people["group"]
    group.leader = people["handler"]
    group.save()
    ticket = approved()
    sla_scan(now=RESPONSE_DUE)
    assert inbox(ticket) == [("handler", "ticket-sla-timeout", "response")]


def test_no_handler_and_no_leader_goes_to_the_approvers(approved, rule, people):
    ticket = approved(group=False)  # no group: waits in the pool, nobody leads it
    assert ticket.handler_id is None
    sla_scan(now=RESPONSE_DUE)
    assert inbox(ticket) == [("approver", "ticket-sla-timeout", "response")]


def test_management_command_replays_a_moment(approved, rule, capsys):
    ticket = approved()
    call_command("sla_scan", "--now", RESPONSE_DUE.isoformat())
    assert "response_timeout: 1" in capsys.readouterr().out
    assert Ticket.objects.get(pk=ticket.pk).response_timeout


def test_management_command_rejects_bad_now():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="ISO-8601"):
        call_command("sla_scan", "--now", "yesterday")


def test_management_command_reads_a_naive_now_in_the_server_timezone(approved, rule, capsys):
    approved()
    naive = RESPONSE_DUE.replace(tzinfo=None)  # settings.TIME_ZONE is UTC in tests
    call_command("sla_scan", "--now", naive.isoformat())
    assert "response_timeout: 1" in capsys.readouterr().out


def test_a_scan_that_dies_before_commit_loses_and_duplicates_nothing(approved, rule, monkeypatch):
    from sla import escalation
    from sla.models import SlaEvent

    ticket = approved()

    def crash(*args, **kwargs):
        raise RuntimeError("worker killed between claim and notify")

    monkeypatch.setattr(escalation, "send_batch", crash)
    with pytest.raises(RuntimeError):
        sla_scan(now=RESPONSE_DUE)
    # The level's claim rolled back with the failed notify: still pending, nobody told.
    level = SlaEvent.objects.get(ticket=ticket, clock="response", level=2)
    assert level.state == "pending" and level.fired_at is None
    assert inbox(ticket) == []
    monkeypatch.undo()
    assert sla_scan(now=RESPONSE_DUE).counts["response_escalation"] == 1
    assert sla_scan(now=RESPONSE_DUE).counts["response_escalation"] == 0
    ticket.refresh_from_db()
    assert ticket.response_timeout
    assert len([n for n in inbox(ticket) if n[1] == "ticket-sla-timeout"]) == 2


def test_the_beat_schedule_is_installed():
    from django_celery_beat.models import PeriodicTask

    task = PeriodicTask.objects.get(task="sla.scan")
    assert task.enabled and task.interval.every == 1 and task.interval.period == "minutes"
    tick = PeriodicTask.objects.get(task="sla.tick")
    assert tick.enabled and tick.interval.every == 1 and tick.interval.period == "seconds"
    assert tick.expire_seconds == 2  # a late tick is dropped, never queued up


def _test_database_url(test_database: str) -> str:
    """DATABASE_URL with the test database's name: same server, same options (a socket
    directory for the embedded server travels in the query string)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path=f"/{test_database}"))


@pytest.mark.django_db(transaction=True)
def test_two_scans_in_parallel_processes_notify_each_event_once(approved, rule):
    """Three `manage.py sla_scan` processes at the same moment, as two beat instances and a
    retried task would be: each event is claimed and notified exactly once."""
    import subprocess
    import sys

    from django.conf import settings
    from django.db import connection

    tickets = [approved() for _ in range(100)]
    env = {
        **os.environ,
        "DATABASE_URL": _test_database_url(connection.settings_dict["NAME"]),
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
    }
    command = [
        sys.executable,
        str(settings.BASE_DIR / "manage.py"),
        "sla_scan",
        "--now",
        RESPONSE_DUE.isoformat(),
    ]
    processes = [
        subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=120) for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0], outputs
    claimed = [
        int(line.split(":")[1])
        for out, _ in outputs
        for line in out.splitlines()
        if line.startswith("response_timeout:")
    ]
    assert sum(claimed) == 100, outputs  # each ticket's timeout claimed by exactly one process
    for ticket in tickets:
        assert inbox(ticket) == [
            ("handler", "ticket-sla-timeout", "response"),
            ("leader", "ticket-sla-timeout", "response"),
        ]
    assert Notification.objects.filter(template_code="ticket-sla-timeout").count() == 200
