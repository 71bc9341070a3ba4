import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from io import StringIO

from notifications.models import Notification
from sla.models import SlaOutcome, SlaRule
from sla.scanner import sla_scan
from tests.factories import ApproverFactory, HandlerGroupFactory, StaffFactory, UserFactory
from ticketing import services
from ticketing.models import Ticket

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def show(label, resp):
    try:
        body = resp.json()
    except Exception:
        body = resp.content[:300]
    print(f"\n## {label}: {resp.status_code} {json.dumps(body, default=str)[:600]}")


@pytest.fixture
def setup(db):
    handler = UserFactory(username="h1")
    leader = UserFactory(username="lead1")
    other_leader = UserFactory(username="lead2")
    g1 = HandlerGroupFactory(name="g1", members=[handler], leader=leader, assign_strategy=1)
    g2 = HandlerGroupFactory(name="g2", members=[], leader=other_leader, assign_strategy=0)
    approver = ApproverFactory(username="appr")
    applicant = UserFactory(username="app")
    rule = SlaRule.objects.create(
        name="high", priority=3, response_hours=Decimal("1"), resolve_hours=Decimal("4"),
        warn_before_minutes=15, sort=10,
    )
    return dict(handler=handler, leader=leader, other_leader=other_leader, g1=g1, g2=g2,
                approver=approver, applicant=applicant, rule=rule)


def mk(s, group="g1", now=T0, priority=3):
    t = services.ticket_submit(creator=s["applicant"], title="T", content="c", priority=priority,
                               handler_group_id=s[group].pk if group else None, now=now)
    return services.ticket_approve(ticket_id=t.pk, approver=s["approver"], now=now)


def test_report_probe(api, setup, staff):
    s = setup
    t = mk(s)
    services.ticket_accept(ticket_id=t.pk, handler=s["handler"], now=T0 + timedelta(minutes=10))
    services.ticket_complete(ticket_id=t.pk, handler=s["handler"], now=T0 + timedelta(hours=2))
    c = api.as_user(staff)
    for q in [
        "",
        "?from=2026-03-01&to=2026-03-05",
        "?from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z",
        "?from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z&group_by=priority",
        "?from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z&group_by=group",
        "?from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z&grouping=priority",
        "?from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z&group_by=handler",
        "?from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z&group_by=category",
        "?from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z&handler_group=abc",
        "?from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z&handler_group=99999999999999999999",
        "?from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z&handler_group=999999",
        "?from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z&priority=abc",
        "?from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z&priority=high",
        "?from=garbage&to=2026-03-05",
        "?from=2026-03-05&to=2026-03-01",
        "?from=2026-03-01",
        "?to=2026-03-05",
        "?from=0001-01-01T00:00:00Z&to=9999-12-31T23:59:59Z",
        "?from=2026-03-01T00:00:00&to=2026-03-05T00:00:00",
        "?from=1700000000&to=1800000000",
        "?from=2026-03-01&to=2026-03-05&category=" + "x" * 60,
        "?from=2026-03-01&to=2026-03-05&category=%00",
    ]:
        show("staff report " + q, c.get("/api/sla/report/" + q))
    show("leader own", api.as_user(s["leader"]).get("/api/sla/report/?from=2026-03-01&to=2026-03-05"))
    show("leader own grp", api.as_user(s["leader"]).get(f"/api/sla/report/?from=2026-03-01&to=2026-03-05&handler_group={s['g1'].pk}"))
    show("leader other grp", api.as_user(s["leader"]).get(f"/api/sla/report/?from=2026-03-01&to=2026-03-05&handler_group={s['g2'].pk}"))
    show("other leader", api.as_user(s["other_leader"]).get("/api/sla/report/?from=2026-03-01&to=2026-03-05"))
    show("handler", api.as_user(s["handler"]).get("/api/sla/report/?from=2026-03-01&to=2026-03-05"))
    show("approver", api.as_user(s["approver"]).get("/api/sla/report/?from=2026-03-01&to=2026-03-05"))
    api.credentials()
    show("anon", api.get("/api/sla/report/?from=2026-03-01&to=2026-03-05"))
    o = SlaOutcome.objects.get(ticket=t)
    print("\n## outcome", o.response_minutes, o.resolve_minutes, o.response_met, o.resolve_met)


def test_inbox_probe(api, setup):
    s = setup
    t = mk(s)  # round robin assigns to handler -> ticket-assigned
    c = api.as_user(s["handler"])
    show("list", c.get("/api/notifications/"))
    show("list unread=1", c.get("/api/notifications/?unread=1"))
    show("list unread=true", c.get("/api/notifications/?unread=true"))
    show("list unread=0", c.get("/api/notifications/?unread=0"))
    show("list unread=abc", c.get("/api/notifications/?unread=abc"))
    show("list unread=", c.get("/api/notifications/?unread="))
    show("list page=abc", c.get("/api/notifications/?page=abc"))
    show("list page=999", c.get("/api/notifications/?page=999"))
    show("list page_size=abc", c.get("/api/notifications/?page_size=abc"))
    show("count", c.get("/api/notifications/unread-count/"))
    n = Notification.objects.filter(recipient=s["handler"]).first()
    show("retrieve", c.get(f"/api/notifications/{n.pk}/"))
    show("read other (leader)", api.as_user(s["leader"]).post(f"/api/notifications/{n.pk}/read/"))
    c = api.as_user(s["handler"])
    show("read abc", c.post("/api/notifications/abc/read/"))
    show("read huge", c.post("/api/notifications/99999999999999999999/read/"))
    show("read missing", c.post("/api/notifications/999999/read/"))
    show("read get", c.get(f"/api/notifications/{n.pk}/read/"))
    show("read nonjson", c.post(f"/api/notifications/{n.pk}/read/", data="{bad", content_type="application/json"))
    show("read ok", c.post(f"/api/notifications/{n.pk}/read/"))
    show("read again", c.post(f"/api/notifications/{n.pk}/read/"))
    show("count after", c.get("/api/notifications/unread-count/"))
    show("read-all", c.post("/api/notifications/read-all/"))
    show("read-all nonjson", c.post("/api/notifications/read-all/", data="xx", content_type="application/json"))
    show("read-all get", c.get("/api/notifications/read-all/"))
    show("unread-count post", c.post("/api/notifications/unread-count/"))
    show("tickets huge", c.get("/api/tickets/99999999999999999999/"))
    c.raise_request_exception = False
    show("tickets abc", c.get("/api/tickets/abc/"))
    show("pause abc", c.post("/api/tickets/abc/pause/"))
    show("pause huge", c.post("/api/tickets/99999999999999999999/pause/"))
    api.credentials()
    show("anon count", api.get("/api/notifications/unread-count/"))


def test_scanner_probes(setup, staff):
    s = setup
    # handler is the leader -> one message
    g3 = HandlerGroupFactory(name="g3", members=[s["leader"]], leader=s["leader"], assign_strategy=1)
    t = services.ticket_submit(creator=s["applicant"], title="T", content="c", priority=3,
                               handler_group_id=g3.pk, now=T0)
    t = services.ticket_approve(ticket_id=t.pk, approver=s["approver"], now=T0)
    # no group -> approvers
    t2 = mk(s, group=None)
    r = sla_scan(now=T0 + timedelta(hours=1))
    print("\n## counts", r.counts)
    print("## t msgs", list(Notification.objects.filter(ticket=t).values_list("recipient__username", "template_code", "dedupe_key")))
    print("## t2 msgs", list(Notification.objects.filter(ticket=t2).values_list("recipient__username", "template_code", "dedupe_key")))


def test_staff_only_approver(db):
    staff = StaffFactory(username="onlystaff")
    applicant = UserFactory(username="a2")
    SlaRule.objects.create(name="x", priority=3, response_hours=Decimal("1"), resolve_hours=Decimal("4"), sort=1)
    t = services.ticket_submit(creator=applicant, title="T", content="c", priority=3, now=T0)
    t = services.ticket_approve(ticket_id=t.pk, approver=staff, now=T0)
    r = sla_scan(now=T0 + timedelta(hours=5))
    print("\n## staff-only approver counts", r.counts, list(Notification.objects.filter(ticket=t).values_list("recipient__username", "template_code")))


def test_pause_complete_outcome(setup):
    s = setup
    t = mk(s)
    services.ticket_accept(ticket_id=t.pk, handler=s["handler"], now=T0 + timedelta(minutes=10))
    from sla.services import sla_pause
    sla_pause(ticket_id=t.pk, user=s["handler"], now=T0 + timedelta(hours=1))
    # paused for 10 hours, then completed while paused (only 1h of resolve clock ran)
    r = sla_scan(now=T0 + timedelta(hours=6))
    print("\n## scan while paused", r.counts)
    services.ticket_complete(ticket_id=t.pk, handler=s["handler"], now=T0 + timedelta(hours=11))
    o = SlaOutcome.objects.get(ticket=t)
    print("## paused-complete outcome", o.response_minutes, o.resolve_minutes, o.response_met, o.resolve_met)


def test_transfer_after_accept_response_clock(setup):
    s = setup
    t = mk(s)
    services.ticket_accept(ticket_id=t.pk, handler=s["handler"], now=T0 + timedelta(minutes=10))
    h2 = UserFactory(username="h2")
    s["g1"].member_ids = [s["handler"].pk, h2.pk]
    s["g1"].save()
    services.ticket_transfer(ticket_id=t.pk, user=s["leader"], handler_id=h2.pk, now=T0 + timedelta(minutes=90))
    r = sla_scan(now=T0 + timedelta(minutes=91))
    print("\n## after transfer scan", r.counts)


def test_commands(setup):
    s = setup
    mk(s)
    for args in [["--now", "2026-03-02T10:00:00+00:00"], ["--now", "2026-03-02T10:00:00Z"],
                 ["--now", "2026-03-02T10:00:00"], ["--now", "garbage"], []]:
        out = StringIO()
        try:
            call_command("sla_scan", *args, stdout=out)
            print("\n## sla_scan", args, repr(out.getvalue()))
        except Exception as e:
            print("\n## sla_scan", args, type(e).__name__, e)
    s["rule"].resolve_hours = Decimal("1")
    s["rule"].save()
    out = StringIO()
    call_command("sla_recompute", "--dry-run", stdout=out)
    print("## recompute dry", repr(out.getvalue()))
    out = StringIO()
    call_command("sla_recompute", stdout=out)
    print("## recompute", repr(out.getvalue()))


def test_send_probe(setup):
    from notifications.services import send
    s = setup
    p = {"billCode": "B", "title": "T", "type": "resolve", "deadline": "x"}
    r1 = send(recipients=[s["handler"], s["handler"].pk], template_code="ticket-sla-warn", params=p, dedupe_key="k1")
    r2 = send(recipients=[s["handler"]], template_code="ticket-sla-warn", params=p, dedupe_key="k1")
    print("\n## send", len(r1), len(r2))
    for bad in [dict(template_code="nope", params=p), dict(template_code="ticket-sla-warn", params={"billCode": "x"})]:
        try:
            send(recipients=[s["handler"]], dedupe_key="k2", **bad)
        except Exception as e:
            print("## send err", type(e).__mro__, e)
    try:
        send([s["handler"]], "ticket-sla-warn", p, "k3")
    except TypeError as e:
        print("## positional refused", e)
