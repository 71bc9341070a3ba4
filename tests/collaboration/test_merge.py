"""Merging duplicates through POST /api/tickets/{id}/merge/: who may, every refusal (nothing
changed), and a merge that moves everything and loses nothing (counts before and after), in
time order and marked, with the source closed, its SLA outcome `merged` and both applicants
told; and two merges of the same pair at once (exactly one wins)."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from accounts.models import Profile
from attachments.models import Attachment
from attachments.services import upload
from collaboration.models import Watcher
from collaboration.services.merging import ticket_merge
from config.errors import ConflictError
from notifications.models import Notification
from sla.escalation import fire_due
from sla.models import SlaEvent, SlaOutcome
from tests.concurrency import run_in_parallel
from tests.factories import ApproverFactory, HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import ProcessStatus, ReplyType, Ticket, TicketRecord, TicketReply
from workflow import services


@pytest.fixture
def people(db):
    leader = UserFactory(username="leader")
    h1, h2 = UserFactory(username="h1"), UserFactory(username="h2")
    return SimpleNamespace(
        leader=leader,
        h1=h1,
        h2=h2,
        g1=HandlerGroupFactory(name="one", leader=leader, members=[h1]),
        g2=HandlerGroupFactory(name="two", leader=leader, members=[h2]),
        alice=UserFactory(username="alice"),  # the source's applicant
        bob=UserFactory(username="bob"),  # the target's applicant
        carol=UserFactory(username="carol"),  # watches the source
        dave=UserFactory(username="dave"),  # watches both
        approver=ApproverFactory(username="approver"),
        staff=StaffFactory(username="boss"),
    )


def pdf(media, user, name: str) -> int:
    data = b"%PDF-1.4\n%%EOF\n" + name.encode()
    return upload(
        uploader=user, file=SimpleUploadedFile(name, data, content_type="application/pdf")
    ).pk


def approved(people, creator, group, **kwargs) -> Ticket:
    ticket = services.ticket_submit(
        creator=creator,
        title=kwargs.pop("title", "VPN down"),
        content=kwargs.pop("content", "It does not connect."),
        priority=3,
        handler_group_id=group.pk,
        **kwargs,
    )
    return services.ticket_approve(ticket_id=ticket.pk, approver=people.approver)


def reply(ticket, author, content, reply_type=ReplyType.PUBLIC, **kwargs) -> TicketReply:
    return services.ticket_reply(
        ticket_id=ticket.pk, author=author, reply_type=reply_type, content=content, **kwargs
    )


@pytest.fixture
def pair(people, media):
    """The target (bob's, group two) and a duplicate submitted later (alice's, group one),
    with replies, a note and files on both, interleaved in time; watchers on both."""
    target = approved(people, people.bob, people.g2, title="Cannot reach the VPN")
    services.ticket_accept(ticket_id=target.pk, handler=people.h2)
    source = approved(
        people,
        people.alice,
        people.g1,
        attachment_ids=[pdf(media, people.alice, "screenshot.pdf")],
    )
    services.ticket_accept(ticket_id=source.pk, handler=people.h1)
    reply(source, people.h1, "Which office are you in?")
    reply(target, people.h2, "Looking into it.")
    reply(source, people.h1, "Same as TK…", reply_type=ReplyType.INTERNAL)
    reply(
        source,
        people.alice,
        "The second floor.",
        attachment_ids=[pdf(media, people.alice, "log.pdf")],
    )
    reply(target, people.bob, "Still down.")
    now = timezone.now()
    for ticket, user in ((source, people.carol), (source, people.dave), (target, people.dave)):
        Watcher.objects.create(ticket=ticket, user=user, source="team", added=now)
    # The target's applicant watching the duplicate is not made a watcher of their own ticket.
    Watcher.objects.create(ticket=source, user=people.bob, source="team", added=now)
    source.refresh_from_db()
    target.refresh_from_db()
    return source, target


def state(*tickets) -> dict:
    """Everything a merge changes, per ticket, and the notices sent."""
    out = {}
    for ticket in tickets:
        row = Ticket.objects.get(pk=ticket.pk)
        out[ticket.pk] = {
            "replies": sorted(
                TicketReply.objects.filter(ticket=ticket).values_list("pk", "created")
            ),
            "attachments": sorted(
                Attachment.objects.filter(ticket=ticket).values_list("pk", "reply_id")
            ),
            "watchers": sorted(
                Watcher.objects.filter(ticket=ticket).values_list("user_id", "source")
            ),
            "records": TicketRecord.objects.filter(ticket=ticket).count(),
            "counts": (row.reply_count, row.public_reply_count),
            "status": (row.process_status, row.ticket_status, row.merged_into_id, row.closed_time),
            "outcome": list(SlaOutcome.objects.filter(ticket=ticket).values()),
        }
    out["notices"] = Notification.objects.count()
    return out


def merge(api, user, source_id, body):
    return api.as_user(user).post(f"/api/tickets/{source_id}/merge/", body, format="json")


# --- merging -------------------------------------------------------------------------------


def test_a_merge_moves_everything_and_loses_nothing(api, people, pair):
    source, target = pair
    source_replies = list(
        TicketReply.objects.filter(ticket=source).values(
            "pk", "author_id", "reply_type", "created", "content"
        )
    )
    target_replies = list(TicketReply.objects.filter(ticket=target).values_list("pk", flat=True))
    files = set(Attachment.objects.filter(ticket=source).values_list("pk", flat=True))
    own_file = Attachment.objects.get(ticket=source, reply=None)
    assert (len(source_replies), len(target_replies), len(files)) == (3, 2, 2)
    assert (source.reply_count, source.public_reply_count) == (3, 2)
    assert (target.reply_count, target.public_reply_count) == (2, 2)

    response = merge(api, people.leader, source.pk, {"into": target.pk})

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["id"] == target.pk and body["merged_into"] is None
    target.refresh_from_db()
    source.refresh_from_db()
    # Every reply of both is on the target: the source's with their ids, authors, types and
    # times, marked; plus the source's description, a public reply by its applicant.
    moved = TicketReply.objects.filter(ticket=target, merged_from=source)
    assert moved.count() == 4
    for before in source_replies:
        after = TicketReply.objects.get(pk=before["pk"])
        assert after.ticket_id == target.pk and after.merged_from_id == source.pk
        assert (after.author_id, after.reply_type, after.created, after.content) == (
            before["author_id"],
            before["reply_type"],
            before["created"],
            before["content"],
        )
    description = moved.exclude(pk__in=[r["pk"] for r in source_replies]).get()
    assert description.author_id == people.alice.pk
    assert description.reply_type == ReplyType.PUBLIC
    assert description.content == f"{source.title}\n\n{source.content}"
    assert description.created == source.submitted_time
    assert TicketReply.objects.filter(ticket=target).count() == 2 + 3 + 1
    assert not TicketReply.objects.filter(ticket=source).exists()
    assert (target.reply_count, target.public_reply_count) == (6, 5)
    assert (source.reply_count, source.public_reply_count) == (0, 0)
    # The files: all on the target; the source's own under its description.
    assert set(Attachment.objects.filter(ticket=target).values_list("pk", flat=True)) == files
    own_file.refresh_from_db()
    assert own_file.reply_id == description.pk
    # Watchers: the source's (not twice, not the target's applicant) and its applicant.
    assert sorted(
        Watcher.objects.filter(ticket=target).values_list("user__username", "source")
    ) == [
        ("alice", "merge"),
        ("carol", "merge"),
        ("dave", "team"),
    ]
    assert not Watcher.objects.filter(ticket=source).exists()
    # The source is closed, merged, and says where it went.
    assert source.ticket_status == 5 and source.merged_into_id == target.pk
    assert source.closed_time is not None
    merge_record = TicketRecord.objects.get(ticket=source, action="merge")
    assert merge_record.detail == {
        "field": "ticket_status",
        "into_id": target.pk,
        "into_bill": target.bill_code,
    }
    assert merge_record.actor_id == people.leader.pk
    merged_from = TicketRecord.objects.get(ticket=target, action="merged_from")
    assert merged_from.detail == {
        "source_id": source.pk,
        "source_bill": source.bill_code,
        "replies": 4,
        "attachments": 2,
        "watchers": 2,
    }
    added = TicketRecord.objects.filter(ticket=target, action="watcher_added")
    assert sorted(r.detail["user_id"] for r in added) == sorted([people.alice.pk, people.carol.pk])


def test_the_targets_conversation_reads_in_time_order_each_moved_reply_marked(api, people, pair):
    source, target = pair
    assert merge(api, people.leader, source.pk, {"into": target.pk}).status_code == 200

    replies = api.as_user(people.leader).get(f"/api/tickets/{target.pk}/replies/").json()
    times = [r["created"] for r in replies]
    assert times == sorted(times)
    assert [r["content"].split("\n")[0] for r in replies] == [
        "VPN down",  # the source's description, at its submission
        "Which office are you in?",
        "Looking into it.",
        "Same as TK…",
        "The second floor.",
        "Still down.",
    ]
    marks = [r["merged_from"] for r in replies]
    source_ref = {"id": source.pk, "bill_code": source.bill_code}
    assert marks == [source_ref, source_ref, None, source_ref, source_ref, None]
    # The applicant of the target reads the public story only, marked too.
    public = api.as_user(people.bob).get(f"/api/tickets/{target.pk}/replies/").json()
    assert [r["merged_from"] is not None for r in public] == [True, True, False, True, False]


def test_the_source_still_answers_and_says_where_it_went(api, people, pair):
    source, target = pair
    merge(api, people.leader, source.pk, {"into": target.pk})
    into = {"id": target.pk, "bill_code": target.bill_code}
    for user in (people.alice, people.leader, people.h1):
        body = api.as_user(user).get(f"/api/tickets/{source.pk}/").json()
        assert body["merged_into"] == into, user
        assert body["ticket_status"] == 5
    listed = api.as_user(people.alice).get("/api/tickets/").json()["results"]
    assert {t["id"]: t["merged_into"] for t in listed}[source.pk] == into
    # The source's applicant now watches the target, and sees it.
    assert api.as_user(people.alice).get(f"/api/tickets/{target.pk}/").status_code == 200


def test_a_list_reads_the_merged_tickets_targets_in_one_query(
    api, people, pair, django_assert_num_queries
):
    source, target = pair
    merge(api, people.staff, source.pk, {"into": target.pk})
    client = api.as_user(people.staff)
    client.get("/api/tickets/")  # (warm: token, permissions)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as one:
        client.get("/api/tickets/")
    other = approved(people, people.alice, people.g1, title="Another one")
    third = approved(people, people.bob, people.g1, title="And its twin")
    merge(api, people.staff, third.pk, {"into": other.pk})
    with CaptureQueriesContext(connection) as two:
        client.get("/api/tickets/")
    assert len(two) == len(one)


def test_the_sources_sla_clocks_are_merged_and_the_report_counts_them_apart(api, people, pair):
    source, target = pair
    merge(api, people.leader, source.pk, {"into": target.pk})
    outcome = SlaOutcome.objects.get(ticket=source)
    assert (outcome.response_result, outcome.resolve_result) == ("merged", "merged")
    assert (outcome.response_met, outcome.resolve_met) == (None, None)

    # One more ticket of group one, completed: the only clock met or breached.
    other = approved(people, people.carol, people.g1, title="Printer")
    services.ticket_accept(ticket_id=other.pk, handler=people.h1)
    services.ticket_complete(ticket_id=other.pk, handler=people.h1)
    now = timezone.now()
    window = {
        "from": (now - timedelta(days=1)).isoformat(),
        "to": (now + timedelta(days=1)).isoformat(),
        "group_by": "handler_group",
    }
    response = api.as_user(people.leader).get("/api/sla/report/", window)
    assert response.status_code == 200, response.json()
    (row,) = [r for r in response.json()["rows"] if r["key"] == people.g1.pk]
    assert row["count"] == 2
    assert (row["response_merged"], row["resolve_merged"]) == (1, 1)
    assert (row["response_breaches"], row["resolve_breaches"]) == (0, 0)
    assert (row["response_breach_rate"], row["resolve_breach_rate"]) == (0.0, 0.0)
    assert (row["response_closed_before_due"], row["resolve_closed_before_due"]) == (0, 0)


def test_a_completed_source_keeps_its_sla_outcome(api, people, pair):
    source, target = pair
    services.ticket_complete(ticket_id=source.pk, handler=people.h1)
    before = SlaOutcome.objects.filter(ticket=source).values().get()
    assert before["resolve_result"] == "met"

    assert merge(api, people.leader, source.pk, {"into": target.pk}).status_code == 200

    assert SlaOutcome.objects.filter(ticket=source).values().get() == before
    assert Ticket.objects.get(pk=source.pk).merged_into_id == target.pk


def test_no_sla_level_fires_for_the_merged_source(api, people, pair):
    source, target = pair
    assert SlaEvent.objects.filter(ticket=source, state="pending").exists()
    merge(api, people.leader, source.pk, {"into": target.pk})
    before = Notification.objects.filter(ticket=source).count()

    fire_due(now=timezone.now() + timedelta(days=30))

    assert not SlaEvent.objects.filter(ticket=source, state__in=["pending", "fired"]).exists()
    assert Notification.objects.filter(ticket=source).count() == before
    assert not Notification.objects.filter(
        template_code__startswith="ticket-sla", ticket=source
    ).exists()


def test_both_applicants_are_told_once_in_their_language(api, people, pair):
    source, target = pair
    Profile.objects.update_or_create(user=people.bob, defaults={"language": "zh-hans"})

    merge(api, people.leader, source.pk, {"into": target.pk})

    notices = Notification.objects.filter(template_code="ticket-merged")
    assert sorted(notices.values_list("recipient__username", flat=True)) == ["alice", "bob"]
    alice = notices.get(recipient=people.alice)
    assert alice.ticket_id == target.pk
    assert alice.title == f"{source.bill_code} was merged into {target.bill_code}"
    assert "合并" in notices.get(recipient=people.bob).title
    # The source's watchers hear of its status change (not its applicant: told above).
    changed = Notification.objects.filter(template_code="ticket-status-changed", ticket=source)
    assert sorted(changed.values_list("recipient__username", flat=True)) == [
        "bob",
        "carol",
        "dave",
    ]


def test_staff_may_merge_tickets_of_any_group(api, people, pair):
    source, target = pair
    response = merge(api, people.staff, source.pk, {"into": target.pk})
    assert response.status_code == 200, response.json()
    assert Ticket.objects.get(pk=source.pk).merged_into_id == target.pk


# --- refusals: nothing changed ---------------------------------------------------------------


def refused(api, user, source, target, body, status):
    before = state(source, target)
    response = merge(api, user, source.pk, body)
    assert response.status_code == status, response.json()
    assert state(source, target) == before
    return response.json()


def test_merging_into_itself_is_a_conflict(api, people, pair):
    source, _target = pair
    body = refused(api, people.leader, source, source, {"into": source.pk}, 409)
    assert "itself" in body["detail"]


def test_merging_into_a_closed_ticket_is_a_conflict(api, people, pair):
    source, target = pair
    services.ticket_close(ticket_id=target.pk, user=people.bob)
    body = refused(api, people.leader, source, target, {"into": target.pk}, 409)
    assert "closed" in body["detail"]


def test_merging_into_a_merged_ticket_is_a_conflict(api, people, pair):
    source, target = pair
    elsewhere = approved(people, people.carol, people.g2, title="Third")
    ticket_merge(source_id=target.pk, target_id=elsewhere.pk, user=people.leader)
    body = refused(api, people.leader, source, target, {"into": target.pk}, 409)
    assert "merged" in body["detail"]


def test_merging_a_merged_or_closed_source_is_a_conflict(api, people, pair):
    source, target = pair
    elsewhere = approved(people, people.carol, people.g2, title="Third")
    ticket_merge(source_id=source.pk, target_id=elsewhere.pk, user=people.leader)
    body = refused(api, people.leader, source, target, {"into": target.pk}, 409)
    assert "already merged" in body["detail"]
    closed = approved(people, people.carol, people.g1, title="Fourth")
    services.ticket_close(ticket_id=closed.pk, user=people.carol)
    refused(api, people.leader, closed, target, {"into": target.pk}, 409)


def test_tickets_not_approved_are_neither_merged_nor_merged_into(api, people, pair):
    source, target = pair
    waiting = services.ticket_submit(
        creator=people.carol, title="t", content="c", priority=2, handler_group_id=people.g1.pk
    )
    rejected = services.ticket_submit(
        creator=people.carol, title="t", content="c", priority=2, handler_group_id=people.g1.pk
    )
    services.ticket_reject(ticket_id=rejected.pk, approver=people.approver, reason="no")
    for other in (waiting, rejected):
        refused(api, people.staff, other, target, {"into": target.pk}, 409)
        refused(api, people.staff, source, other, {"into": other.pk}, 409)
    assert Ticket.objects.get(pk=rejected.pk).process_status == ProcessStatus.REJECTED


def test_only_a_leader_of_both_groups_or_staff_may_merge(api, people, pair):
    source, target = pair
    # A member of both groups (sees both), leader of neither.
    people.g2.member_ids = [people.h2.pk, people.h1.pk]
    people.g2.save(update_fields=["member_user_ids"])
    refused(api, people.h1, source, target, {"into": target.pk}, 403)
    # The leader of the source's group only (a member of the target's).
    other_leader = UserFactory(username="other_leader")
    people.g2.leader = other_leader
    people.g2.member_ids = [people.h2.pk, people.leader.pk]
    people.g2.save(update_fields=["leader", "member_user_ids"])
    refused(api, people.leader, source, target, {"into": target.pk}, 403)
    # The source's applicant, copied in on the target (sees both).
    Watcher.objects.create(ticket=target, user=people.alice, source="cc", added=timezone.now())
    refused(api, people.alice, source, target, {"into": target.pk}, 403)


def test_a_ticket_the_caller_cannot_see_is_a_404(api, people, pair):
    source, target = pair
    outsider = HandlerGroupFactory(name="three", leader=UserFactory(username="lead3"))
    refused(api, outsider.leader, source, target, {"into": target.pk}, 404)
    # The leader of group one only sees the target through no group of theirs.
    people.g2.leader = UserFactory(username="lead2")
    people.g2.save(update_fields=["leader"])
    refused(api, people.leader, source, target, {"into": target.pk}, 404)
    refused(api, people.leader, source, target, {"into": 10**12}, 404)


@pytest.mark.parametrize("body", [{}, {"into": "abc"}, {"into": None}, {"into": 0}])
def test_a_missing_or_bad_into_is_a_400_naming_it(api, people, pair, body):
    source, target = pair
    answer = refused(api, people.leader, source, target, body, 400)
    assert "into" in answer["errors"]


# --- two merges at once ------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_to_b_and_b_to_a_at_once_exactly_one_wins(people, media):
    for _round in range(3):
        a = approved(people, people.alice, people.g1, title="A")
        b = approved(people, people.bob, people.g2, title="B")
        reply(a, people.alice, "a's reply")
        reply(b, people.bob, "b's reply")
        results = run_in_parallel(
            [
                lambda a=a, b=b: ticket_merge(source_id=a.pk, target_id=b.pk, user=people.leader),
                lambda a=a, b=b: ticket_merge(source_id=b.pk, target_id=a.pk, user=people.leader),
            ]
        )
        won = [r for r in results if isinstance(r, Ticket)]
        lost = [r for r in results if isinstance(r, ConflictError)]
        assert len(won) == 1 and len(lost) == 1, results
        winner_target = won[0]
        loser_source = Ticket.objects.get(pk=winner_target.pk)
        merged = Ticket.objects.filter(pk__in=[a.pk, b.pk], merged_into__isnull=False)
        assert [t.merged_into_id for t in merged] == [loser_source.pk]
        assert TicketReply.objects.filter(ticket=loser_source).count() == 3  # 2 + description
        assert loser_source.reply_count == 3
