"""The send service: exactly once, template errors, outbox rows."""

import pytest

from notifications.models import DeliveryStatus, Notification, NotifyTemplate, OutboxDelivery
from notifications.rendering import TemplateError, render
from notifications.sending import send
from tests.concurrency import run_in_parallel
from tests.factories import UserFactory

PARAMS = {"billCode": "TK1", "title": "VPN", "type": "resolve", "deadline": "17:00"}


def test_render_fills_placeholders_and_refuses_holes():
    assert render("Ticket {{billCode}} ({{ title }})", {"billCode": "TK1", "title": "x"}) == (
        "Ticket TK1 (x)"
    )
    with pytest.raises(TemplateError, match="title"):
        render("Ticket {{billCode}} ({{title}})", {"billCode": "TK1"})


@pytest.mark.django_db
def test_default_templates_are_installed():
    codes = set(NotifyTemplate.objects.values_list("code", flat=True))
    assert {
        "ticket-assigned",
        "ticket-offered",
        "ticket-reclaimed",
        "ticket-replied",
        "ticket-completed",
        "ticket-rejected",
        "ticket-sla-warn",
        "ticket-sla-timeout",
    } <= codes
    timeout = NotifyTemplate.objects.get(code="ticket-sla-timeout")
    assert render(timeout.content, PARAMS) == (
        "[SLA timeout] Ticket TK1 (VPN): resolve deadline passed, please act now."
    )


@pytest.mark.django_db
def test_same_dedupe_key_never_produces_a_second_message():
    alice, bob = UserFactory(email="a@example.test"), UserFactory(email="")
    first = send(
        recipients=[alice, bob, alice],
        template_code="ticket-sla-timeout",
        params=PARAMS,
        dedupe_key="sla:resolve:timeout:1",
    )
    again = send(
        recipients=[alice, bob],
        template_code="ticket-sla-timeout",
        params=PARAMS,
        dedupe_key="sla:resolve:timeout:1",
    )
    assert len(first) == 2 and again == []
    assert Notification.objects.filter(recipient=alice).count() == 1
    assert first[0].title == "[SLA timeout] TK1"
    # email goes only where there is an address; no webhooks configured.
    assert list(OutboxDelivery.objects.values_list("channel", "target")) == [
        ("email", "a@example.test")
    ]


@pytest.mark.django_db
def test_a_new_recipient_for_the_same_event_still_gets_theirs():
    alice, bob = UserFactory(), UserFactory()
    send(recipients=[alice], template_code="ticket-sla-warn", params=PARAMS, dedupe_key="k")
    added = send(
        recipients=[alice, bob], template_code="ticket-sla-warn", params=PARAMS, dedupe_key="k"
    )
    assert [n.recipient_id for n in added] == [bob.pk]


@pytest.mark.django_db
def test_unknown_template_and_missing_params_write_nothing():
    alice = UserFactory()
    with pytest.raises(TemplateError, match="unknown"):
        send(recipients=[alice], template_code="nope", params={}, dedupe_key="x")
    with pytest.raises(TemplateError, match="missing parameter"):
        send(
            recipients=[alice],
            template_code="ticket-sla-warn",
            params={"billCode": "TK1"},
            dedupe_key="y",
        )
    assert Notification.objects.count() == 0
    assert OutboxDelivery.objects.count() == 0


@pytest.mark.django_db
def test_template_errors_are_counted():
    from prometheus_client import REGISTRY

    def count():
        return (
            REGISTRY.get_sample_value(
                "notifications_template_errors_total", {"template": "ticket-sla-warn"}
            )
            or 0
        )

    before = count()
    with pytest.raises(TemplateError):
        send(recipients=[UserFactory()], template_code="ticket-sla-warn", params={}, dedupe_key="z")
    assert count() == before + 1


@pytest.mark.django_db
def test_disabled_template_sends_nothing():
    NotifyTemplate.objects.filter(code="ticket-sla-warn").update(enabled=False)
    assert (
        send(
            recipients=[UserFactory()],
            template_code="ticket-sla-warn",
            params=PARAMS,
            dedupe_key="k",
        )
        == []
    )


@pytest.mark.django_db
def test_messages_are_written_in_the_callers_transaction():
    from django.db import transaction

    alice = UserFactory()
    with pytest.raises(RuntimeError), transaction.atomic():
        send(recipients=[alice], template_code="ticket-sla-warn", params=PARAMS, dedupe_key="k")
        raise RuntimeError("caller rolls back")
    assert Notification.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_senders_of_one_event_write_one_message_each_recipient():
    users = [UserFactory(email=f"u{i}@example.test") for i in range(3)]
    results = run_in_parallel(
        [
            lambda: len(
                send(
                    recipients=users,
                    template_code="ticket-sla-timeout",
                    params=PARAMS,
                    dedupe_key="sla:resolve:timeout:7",
                )
            )
            for _ in range(8)
        ]
    )
    assert not [r for r in results if isinstance(r, BaseException)], results
    assert sum(results) == 3
    assert Notification.objects.count() == 3
    assert OutboxDelivery.objects.filter(status=DeliveryStatus.PENDING).count() == 3


@pytest.mark.django_db
def test_unknown_channel_codes_are_refused_in_admin_and_skipped_by_senders():
    from django.core.exceptions import ValidationError

    template = NotifyTemplate.objects.get(code="ticket-sla-warn")
    template.channels = ["in_app", "emial"]
    with pytest.raises(ValidationError, match="emial"):
        template.full_clean()
    template.save()  # written past admin: the message still goes to the inbox
    alice = UserFactory(email="a@example.test")
    assert (
        len(
            send(recipients=[alice], template_code="ticket-sla-warn", params=PARAMS, dedupe_key="k")
        )
        == 1
    )
    assert OutboxDelivery.objects.count() == 0
