import pytest
from django.utils import timezone

from attachments.models import Attachment, Blob
from tests.factories import HandlerGroupFactory, UserFactory
from ticketing.models import ReplyType
from workflow import services


@pytest.fixture
def agent(db):
    return UserFactory(username="agent")


@pytest.fixture
def group(agent):
    """A manual-strategy group: approved tickets wait in its pool, seen by its agent."""
    return HandlerGroupFactory(name="support", members=[agent], assign_strategy=0)


@pytest.fixture
def stranger(db):
    """Another applicant: sees only their own tickets."""
    return UserFactory(username="stranger")


@pytest.fixture
def ticket(submit, group, approver):
    """`ticket(title=..., content=...)`: a ticket approved into the group's pool."""

    def _ticket(**kwargs):
        kwargs.setdefault("handler_group_id", group.pk)
        made = submit(**kwargs)
        return services.ticket_approve(ticket_id=made.pk, approver=approver)

    return _ticket


@pytest.fixture
def reply(agent):
    """`reply(ticket, content, internal=False)`: the group's agent replies (or notes)."""

    def _reply(ticket, content, *, internal=False, author=None):
        return services.ticket_reply(
            ticket_id=ticket.pk,
            author=author or agent,
            reply_type=ReplyType.INTERNAL if internal else ReplyType.PUBLIC,
            content=content,
        )

    return _reply


@pytest.fixture
def attach(db):
    """`attach(ticket, filename, reply=None)`: a file on the ticket (or on one of its
    replies), written as the attachments app stores it."""
    blob = Blob.objects.create(
        sha256="0" * 64, size=10, content_type="text/plain", created=timezone.now()
    )

    def _attach(ticket, filename, reply=None):
        now = timezone.now()
        return Attachment.objects.create(
            blob=blob, filename=filename, uploaded=now, attached=now, ticket=ticket, reply=reply
        )

    return _attach


@pytest.fixture
def search(api):
    """`search(user, q, **filters)`: GET /api/search/ as the user; the response."""

    def _search(user, q=None, **params):
        if q is not None:
            params["q"] = q
        return api.as_user(user).get("/api/search/", params)

    return _search


def ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]
