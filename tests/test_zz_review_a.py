import json
import pytest
from tests.factories import UserFactory, HandlerGroupFactory, StaffFactory, ApproverFactory
from ticketing import services as ts

pytestmark = pytest.mark.django_db

def show(label, r):
    try:
        body = r.json()
    except Exception:
        body = r.content[:300]
    print(f"\n### {label}: {r.status_code} {json.dumps(body, default=str)[:600]}")

def test_fuzz(api, applicant, approver, staff):
    api.raise_request_exception = False
    a, b, c = UserFactory(username="ha"), UserFactory(username="hb"), UserFactory(username="hc")
    lead = UserFactory(username="lead")
    g = HandlerGroupFactory(members=[a, b, c], assign_strategy=1, leader=lead)
    cl = api.as_user(applicant)
    r = cl.post("/api/tickets/", {"title": "t", "content": "c", "priority": 2, "handler_group_id": g.pk}, format="json"); show("create", r)
    tid = r.json()["id"]
    bad_bodies = [
        ("list body", [1, 2]), ("string body", "abc"), ("null", None),
        ("priority str", {"title": "t", "content": "c", "priority": "x"}),
        ("priority huge", {"title": "t", "content": "c", "priority": 10**30}),
        ("hg huge", {"title": "t", "content": "c", "priority": 2, "handler_group_id": 10**30}),
        ("hg 2**63", {"title": "t", "content": "c", "priority": 2, "handler_group_id": 2**63}),
        ("hg 2**63-1", {"title": "t", "content": "c", "priority": 2, "handler_group_id": 2**63-1}),
        ("hg neg", {"title": "t", "content": "c", "priority": 2, "handler_group_id": -1}),
        ("hg str", {"title": "t", "content": "c", "priority": 2, "handler_group_id": "abc"}),
        ("title NUL", {"title": "t\x00", "content": "c", "priority": 2}),
        ("content NUL", {"title": "t", "content": "c\x00", "priority": 2}),
        ("category NUL", {"title": "t", "content": "c", "priority": 2, "category": "a\x00"}),
        ("title obj", {"title": {"a": 1}, "content": "c", "priority": 2}),
        ("priority float", {"title": "t", "content": "c", "priority": 2.5}),
        ("priority bool", {"title": "t", "content": "c", "priority": True}),
    ]
    for label, body in bad_bodies:
        r = cl.post("/api/tickets/", json.dumps(body), content_type="application/json"); show("create " + label, r)
    r = cl.post("/api/tickets/", "not json", content_type="application/json"); show("create nonjson", r)
    r = cl.post("/api/tickets/", "a=b", content_type="application/x-www-form-urlencoded"); show("create form", r)
    r = cl.post("/api/tickets/"); show("create empty", r)
    for pk in ["abc", str(10**30), str(2**63), "-1", "0", "1e3"]:
        r = cl.get(f"/api/tickets/{pk}/"); show(f"get {pk}", r)
        r = api.as_user(approver).post(f"/api/tickets/{pk}/approve/"); show(f"approve {pk}", r)
    ap = api.as_user(approver)
    r = ap.post(f"/api/tickets/{tid}/reject/", json.dumps([1]), content_type="application/json"); show("reject list", r)
    r = ap.post(f"/api/tickets/{tid}/reject/", json.dumps({"reason": "a\x00"}), content_type="application/json"); show("reject NUL", r)
    r = ap.post(f"/api/tickets/{tid}/approve/"); show("approve", r)
    r = ap.post(f"/api/tickets/{tid}/approve/"); show("approve again", r)
    st = api.as_user(staff)
    for label, body in [("hid huge", {"handler_id": 10**30}), ("hgid huge", {"handler_group_id": 10**30}),
                        ("hid 2**63-1", {"handler_id": 2**63-1}), ("hgid 2**63-1", {"handler_group_id": 2**63-1}),
                        ("hid str", {"handler_id": "x"}), ("empty", {}), ("list", [1]), ("null", None), ("hid bool", {"handler_id": True})]:
        r = st.post(f"/api/tickets/{tid}/transfer/", json.dumps(body), content_type="application/json"); show("transfer " + label, r)
    for label, body in [("type bad", {"reply_type": "x", "content": "c"}), ("type int", {"reply_type": 1, "content": "c"}),
                        ("list", [1]), ("content NUL", {"content": "a\x00"}), ("none", None)]:
        r = st.post(f"/api/tickets/{tid}/replies/", json.dumps(body), content_type="application/json"); show("reply " + label, r)
    for q in ["view=bogus", "priority=x", "priority=99", "ticket_status=x", "handler_group=x", f"handler_group={10**30}",
              f"handler_group={2**63}", "page=abc", "page=99999", "page_size=abc", "page_size=-1", "category=a%00b", "view=all&ticket_status=9",
              "handler_group=-5", "priority=1&priority=2"]:
        r = st.get(f"/api/tickets/pool/?{q}"); show("pool " + q, r)
    for q in ["priority=x", "handler_group=x", f"handler_group={10**30}", "ticket_status=abc", "category=a%00b", f"priority={10**30}"]:
        r = st.get(f"/api/tickets/?{q}"); show("list " + q, r)
    # handler groups
    for label, body in [("ok", {"name": "n1", "member_ids": [a.pk], "assign_strategy": 1}),
                        ("members huge", {"name": "n2", "member_ids": [10**30], "assign_strategy": 1}),
                        ("members 2**63-1", {"name": "n2b", "member_ids": [2**63-1], "assign_strategy": 1}),
                        ("leader huge", {"name": "n3", "member_ids": [], "assign_strategy": 1, "leader_id": 10**30}),
                        ("leader 2**63-1", {"name": "n3b", "member_ids": [], "assign_strategy": 1, "leader_id": 2**63-1}),
                        ("strategy 99", {"name": "n4", "member_ids": [], "assign_strategy": 99}),
                        ("dup name", {"name": "n1", "member_ids": [], "assign_strategy": 1}),
                        ("members str", {"name": "n5", "member_ids": "1,2", "assign_strategy": 1}),
                        ("name NUL", {"name": "n\x00", "member_ids": [], "assign_strategy": 1}),
                        ("no strategy", {"name": "n6", "member_ids": []}),
                        ("no members", {"name": "n7", "assign_strategy": 1}),
                        ("list", [1]), ("null", None),
                        ("extra settings", {"name": "n8", "member_ids": [a.pk], "assign_strategy": 4, "requires_presence": True, "max_active": 2, "max_active_per_member": 2, "offer_timeout_seconds": 30, "wrap_up_seconds": 10, "overflow_after_seconds": 5}),
                        ]:
        r = st.post("/api/handler-groups/", json.dumps(body), content_type="application/json"); show("hg create " + label, r)
    r = st.patch(f"/api/handler-groups/{g.pk}/", json.dumps({"name": "n1"}), content_type="application/json"); show("hg patch dup name", r)
    r = st.patch(f"/api/handler-groups/{g.pk}/", json.dumps({"member_ids": [c.pk, a.pk]}), content_type="application/json"); show("hg patch members", r)
    r = st.get(f"/api/handler-groups/{10**30}/"); show("hg get huge", r)
    r = st.get("/api/handler-groups/abc/"); show("hg get abc", r)
    r = st.get("/api/handler-groups/"); show("hg list", r)
    r = api.as_user(applicant).post("/api/handler-groups/", {"name": "x", "member_ids": [], "assign_strategy": 0}, format="json"); show("hg create nonstaff", r)
    r = st.delete(f"/api/handler-groups/{g.pk}/"); show("hg delete", r)
    # presence
    hc = api.as_user(a)
    r = hc.post("/api/presence/heartbeat/"); show("hb", r)
    r = hc.post("/api/presence/heartbeat/", json.dumps([1]), content_type="application/json"); show("hb list", r)
    for body in [{"state": "bogus"}, {"state": 1}, {}, [1], None, {"state": None}, {"state": "busy"}, {"state": "wrap_up"}, {"state": "available"}, {"state": "offline"}]:
        r = hc.post("/api/presence/state/", json.dumps(body), content_type="application/json"); show(f"state {body}", r)
    r = api.as_user(lead).get("/api/presence/"); show("presence lead", r)
    r = st.get("/api/presence/"); show("presence staff", r)
    r = api.as_user(applicant).get("/api/presence/"); show("presence applicant", r)
    r = st.get("/api/presence/1/"); show("presence detail", r)
    # metrics
    for q in ["", f"group={g.pk}", "group=abc", f"group={10**30}", f"group={2**63}", "group=-1", f"group={g.pk}&date=bad", f"group={g.pk}&date=2024-13-45", f"group={g.pk}&date=0001-01-01", f"group={g.pk}&date=9999-12-31"]:
        r = st.get(f"/api/metrics/assignment/?{q}"); show("metrics " + q, r)
    r = api.as_user(lead).get(f"/api/metrics/assignment/?group={g.pk}"); show("metrics lead", r)
    r = api.as_user(applicant).get(f"/api/metrics/assignment/?group={g.pk}"); show("metrics applicant", r)
    from rest_framework.test import APIClient as _C
    def APIClient():
        c = _C(); c.raise_request_exception = False; return c
    r = APIClient().get("/metrics"); print("\n### /metrics anon", r.status_code, r["Content-Type"], r.content[:200])
    r = APIClient().get("/api/presence/"); show("presence anon", r)
    r = APIClient().get("/api/metrics/assignment/?group=1"); show("metrics anon", r)
    # token
    for body in [{"username": "x"}, [1], None, {"username": "a\x00", "password": "b"}, {"username": ["a"], "password": "b"}]:
        r = APIClient().post("/api/auth/token/", json.dumps(body), content_type="application/json"); show(f"token {body}", r)
