"""Attachments under real parallel connections: one upload attached by two replies at once
lands on one of them; two uploads of the same bytes at once store them once; removing a
file's last reference while the same bytes are uploaded again never leaves a row without
its bytes."""

import pytest
from rest_framework.test import APIClient

from attachments import services
from attachments.models import Attachment, Blob
from tests.attachments.helpers import png, post_file
from tests.concurrency import run_in_parallel
from tests.factories import HandlerGroupFactory, UserFactory
from ticketing.models import TicketReply
from workflow import services as ticket_services


@pytest.fixture
def desk(transactional_db, media):
    agent = UserFactory(username="agent")
    applicant = UserFactory(username="applicant")
    approver = UserFactory(username="approver", is_staff=True)
    group = HandlerGroupFactory(name="desk", members=[agent], assign_strategy=0)
    ticket = ticket_services.ticket_submit(
        creator=applicant, title="VPN", content="down", priority=2, handler_group_id=group.pk
    )
    ticket_services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    return {"agent": agent, "ticket": ticket, "media": media}


def _client(user) -> APIClient:
    from knox.models import AuthToken

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {AuthToken.objects.create(user=user)[1]}")
    return client


def test_one_upload_attached_by_two_replies_at_once_lands_once(desk):
    agent, ticket = desk["agent"], desk["ticket"]
    client = _client(agent)
    file_id = post_file(client, "a.png", png()).json()["id"]

    def reply(text):
        return lambda: (
            _client(agent)
            .post(
                f"/api/tickets/{ticket.pk}/replies/",
                {"content": text, "attachment_ids": [file_id]},
                format="json",
            )
            .status_code
        )

    codes = run_in_parallel([reply("one"), reply("two")])
    assert sorted(codes) == [201, 400]
    assert TicketReply.objects.filter(ticket=ticket).count() == 1
    attachment = Attachment.objects.get(pk=file_id)
    assert attachment.reply_id == TicketReply.objects.get(ticket=ticket).pk


def test_the_same_bytes_uploaded_at_once_are_stored_once(desk):
    agent = desk["agent"]
    data = png(colour=(4, 5, 6))

    def send():
        client = _client(agent)
        return post_file(client, "x.png", data).status_code

    assert run_in_parallel([send] * 4) == [201] * 4
    assert Blob.objects.count() == 1 and Attachment.objects.count() == 4
    assert len([p for p in desk["media"].rglob("*") if p.is_file()]) == 1


def test_removing_the_last_reference_while_uploading_again_keeps_the_bytes(desk):
    agent = desk["agent"]
    data = png(colour=(7, 7, 7))
    for _ in range(5):
        client = _client(agent)
        first = Attachment.objects.get(pk=post_file(client, "a.png", data).json()["id"])

        def remove(first=first):
            services.remove(user=agent, attachment=first)

        def again(client=client):
            return post_file(client, "b.png", data).json()["id"]

        _, kept_id = run_in_parallel([remove, again])
        kept = Attachment.objects.select_related("blob").get(pk=kept_id)
        path = desk["media"] / kept.blob.key
        assert path.read_bytes() == data  # a row never outlives its bytes
        services.remove(user=agent, attachment=kept)
        assert not Blob.objects.exists()
