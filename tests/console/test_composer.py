"""The composer through HTTP: the note tab survives a send, a newer reply asks for a look
first (409, nothing saved, the draft kept), the Preview endpoint, and Markdown rendered by
one function — sanitised, old plain bodies unchanged, the same HTML on the page and in the
e-mail about a reply."""

import re
from html import unescape
from html.parser import HTMLParser

import pytest
from django.core import mail
from django.test import Client

from notifications import delivery as delivery_module
from notifications import sending
from notifications.delivery import delivery_attempt
from notifications.markup import render_markdown
from notifications.models import DeliveryStatus, NotifyTemplate, OutboxDelivery
from ticketing.models import ReplyType, TicketReply
from workflow import services

pytestmark = pytest.mark.django_db

XSS = [
    ("<script>alert(1)</script>", "<script"),
    ("[click](javascript:alert(1))", 'href="javascript'),
    ('<img src="x" onerror="alert(1)">', "<img"),
    ("<iframe src='https://evil.example/'></iframe>", "<iframe"),
    ("[data](data:text/html;base64,PHNjcmlwdD4=)", 'href="data:'),
    ('<a href="https://ok.example" onclick="steal()">x</a>', "<a href"),
    ("![pixel](https://tracker.example/p.gif)", "<img"),
]


def url(ticket, name=""):
    return f"/console/tickets/{ticket.pk}/{name + '/' if name else ''}"


@pytest.fixture
def accepted(pooled, handlers):
    services.ticket_accept(ticket_id=pooled.pk, handler=handlers[0])
    return pooled


# --- Markdown, sanitised -----------------------------------------------------------------


class Elements(HTMLParser):
    """The elements and attributes a browser would build from the HTML."""

    def __init__(self, html: str):
        super().__init__()
        self.found: list[tuple[str, dict]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


@pytest.mark.parametrize(("body", "forbidden"), XSS)
def test_markdown_removes_every_xss_vector(body, forbidden):
    html = render_markdown(body)
    assert forbidden not in html
    for tag, attrs in Elements(html).found:
        assert tag not in ("script", "iframe", "img", "object", "embed", "style")
        assert not [name for name in attrs if name.startswith("on")]
        assert not attrs.get("href", "https:").startswith(("javascript:", "data:"))


def test_old_plain_bodies_keep_their_paragraphs_and_line_breaks():
    assert render_markdown("Hello,\nthe VPN drops.\n\nThanks") == (
        "<p>Hello,<br>\nthe VPN drops.</p>\n<p>Thanks</p>"
    )


def test_markdown_renders_and_links_open_safely():
    html = render_markdown("**bold** and [docs](https://docs.example/x)\n\n- one\n- two")
    assert "<strong>bold</strong>" in html
    assert '<a href="https://docs.example/x"' in html
    assert 'rel="noopener noreferrer nofollow"' in html and 'target="_blank"' in html
    assert "<li>one</li>" in html


# --- the tab stays ----------------------------------------------------------------------


def test_after_an_internal_note_the_composer_stays_on_the_note_tab(as_user, handlers, accepted):
    client = as_user(handlers[0])
    response = client.post(url(accepted, "reply"), {"reply_type": "2", "content": "note one"})
    assert response.status_code == 302
    assert "composer=internal" in response["Location"]
    html = client.get(response["Location"]).content.decode()
    assert re.search(r'id="reply-type-internal" value="2" checked', html)
    assert not re.search(r'id="reply-type-public" value="1" checked', html)
    assert 'data-sent="1"' in html  # composer.js clears the draft now
    # Only once: a reload is not a second send.
    assert 'data-sent="1"' not in client.get(response["Location"]).content.decode()
    # A public reply comes back on the public tab.
    response = client.post(url(accepted, "reply"), {"reply_type": "1", "content": "hi"})
    assert "composer=internal" not in response["Location"]
    html = client.get(response["Location"]).content.decode()
    assert re.search(r'id="reply-type-public" value="1" checked', html)


def test_the_applicant_cannot_open_the_note_tab_by_the_address(as_user, applicant, accepted):
    html = as_user(applicant).get(url(accepted) + "?composer=internal").content.decode()
    assert 'id="reply-type-internal"' not in html
    assert 'name="reply_type" value="1"' in html


# --- a newer reply asks for a look first ----------------------------------------------------


def test_a_newer_reply_refuses_the_send_and_keeps_the_draft(as_user, handlers, applicant, accepted):
    client = as_user(handlers[0])
    html = client.get(url(accepted)).content.decode()
    seen = int(re.search(r'name="seen_reply_id" value="(\d+)"', html).group(1))
    newer = services.ticket_reply(
        ticket_id=accepted.pk, author=applicant, reply_type=ReplyType.PUBLIC, content="Still down!"
    )
    before = TicketReply.objects.count()
    data = {"reply_type": "1", "content": "Try again now.", "seen_reply_id": str(seen)}
    response = client.post(url(accepted, "reply"), data)
    assert response.status_code == 409
    assert TicketReply.objects.count() == before
    html = response.content.decode()
    notice = re.search(r'<p class="composer-notice"[^>]*>', html).group(0)
    assert "hidden" not in notice
    assert "A new reply arrived while you were writing" in unescape(html)
    assert "Still down!" in html
    assert re.search(r">\s*Try again now.</textarea>", html)
    assert f'name="seen_reply_id" value="{newer.pk}"' in html
    # The second Send (the form now remembers the newer reply) sends.
    data["seen_reply_id"] = str(newer.pk)
    assert client.post(url(accepted, "reply"), data).status_code == 302
    assert TicketReply.objects.filter(content="Try again now.").count() == 1


def test_the_senders_own_newer_reply_and_a_missing_field_do_not_refuse(as_user, handlers, accepted):
    client = as_user(handlers[0])
    mine = client.post(
        url(accepted, "reply"), {"reply_type": "1", "content": "first", "seen_reply_id": "0"}
    )
    assert mine.status_code == 302
    sent = {"reply_type": "1", "content": "second", "seen_reply_id": "0"}
    assert client.post(url(accepted, "reply"), sent).status_code == 302
    assert (
        client.post(url(accepted, "reply"), {"reply_type": "1", "content": "third"}).status_code
        == 302
    )
    assert TicketReply.objects.filter(ticket=accepted).count() == 3


def test_a_newer_internal_note_does_not_refuse_the_applicants_reply(
    as_user, handlers, applicant, accepted
):
    services.ticket_reply(
        ticket_id=accepted.pk, author=handlers[0], reply_type=ReplyType.INTERNAL, content="n"
    )
    data = {"reply_type": "1", "content": "any news?", "seen_reply_id": "0"}
    assert as_user(applicant).post(url(accepted, "reply"), data).status_code == 302


# --- Preview ------------------------------------------------------------------------------


def test_preview_renders_the_servers_html(as_user, handlers):
    response = as_user(handlers[0]).post(
        "/console/preview/", {"content": "**hi** <script>x</script>"}
    )
    assert response.status_code == 200
    assert response.json() == {"html": "<p><strong>hi</strong> &lt;script&gt;x&lt;/script&gt;</p>"}


def test_preview_names_the_field_on_bad_input(as_user, handlers):
    response = as_user(handlers[0]).post("/console/preview/", {"content": "x" * 50_001})
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["content"]
    assert as_user(handlers[0]).post("/console/preview/", {}).status_code == 400


def test_preview_needs_a_login_and_the_csrf_token(handlers):
    anonymous = Client()
    response = anonymous.post("/console/preview/", {"content": "x"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(handlers[0])
    assert strict.post("/console/preview/", {"content": "x"}).status_code == 403
    assert strict.get("/console/preview/").status_code == 405


# --- the same HTML on the page and in the e-mail --------------------------------------------


def reply_body(html: str) -> str:
    return re.search(r'<div class="reply-body"[^>]*>(.*?)</div>', html, re.S).group(1)


def test_the_console_and_the_email_carry_the_same_html(
    as_user, handlers, applicant, accepted, monkeypatch
):
    monkeypatch.setattr(sending, "enqueue_deliveries", lambda ids: None)
    monkeypatch.setattr(delivery_module, "_schedule", lambda *a: None)
    NotifyTemplate.objects.filter(code="ticket-replied").update(channels=["in_app", "email"])
    sending._templates.clear()
    applicant.email = "applicant@example.test"
    applicant.save(update_fields=["email"])
    body = "Hi,\nplease **restart**:\n\n1. [guide](https://docs.example/vpn)\n2. <b>x</b>"
    services.ticket_reply(
        ticket_id=accepted.pk, author=handlers[0], reply_type=ReplyType.PUBLIC, content=body
    )
    delivery = OutboxDelivery.objects.get(
        channel="email", notification__template_code="ticket-replied"
    )
    mail.outbox.clear()
    assert delivery_attempt(delivery_id=delivery.pk) == DeliveryStatus.SENT
    (message,) = mail.outbox
    assert body in message.body  # the plain-text part carries the reply as typed
    ((html_email, mimetype),) = message.alternatives
    assert mimetype == "text/html"
    page = as_user(handlers[0]).get(url(accepted)).content.decode()
    assert reply_body(page).strip() == reply_body(html_email).strip() == render_markdown(body)
    assert "<strong>restart</strong>" in html_email and "<b>" not in html_email
