"""The admin in the product's language: every registered model's pages render for a
superuser, under the product's name, with labels in the product's words."""

from datetime import UTC, datetime
from io import StringIO

import pytest
from django.contrib import admin
from django.core.management import call_command
from django.urls import reverse

from demo import history as demo_history
from tests.factories import StaffFactory

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 26, 15, 0, tzinfo=UTC)


@pytest.fixture
def superuser(client):
    user = StaffFactory(username="root", is_superuser=True)
    client.force_login(user)
    return user


@pytest.fixture
def seeded(superuser):
    """The demo: users, groups, rules, templates and two days of tickets with their
    replies, records, SLA rows and presence."""
    call_command("seed_demo", stdout=StringIO())
    from django.contrib.auth import get_user_model

    users = {u.username: u for u in get_user_model().objects.all()}
    demo_history.generate(days=2, users=users, now=NOW)
    from accounts.models import Profile
    from notifications.models import Webhook
    from sla.models import Calendar

    Calendar.objects.create(name="Berlin office", timezone="Europe/Berlin")
    Profile.objects.get_or_create(user=superuser)
    Webhook.objects.create(name="chat", url="https://chat.example.test/hook", secret="s")


def test_every_registered_models_pages_render(client, seeded):
    rendered_changes = []
    for model, model_admin in admin.site._registry.items():
        opts = model._meta
        name = f"admin:{opts.app_label}_{opts.model_name}"
        changelist = client.get(reverse(f"{name}_changelist"))
        assert changelist.status_code == 200, (model, changelist.status_code)
        assert b"Ticketdesk administration" in changelist.content
        if model_admin.has_add_permission(changelist.wsgi_request):
            add = client.get(reverse(f"{name}_add"))
            assert add.status_code == 200, (model, add.status_code)
        obj = model._default_manager.order_by("pk").first()
        if obj is not None:
            change = client.get(reverse(f"{name}_change", args=[obj.pk]))
            assert change.status_code == 200, (model, change.status_code)
            rendered_changes.append(opts.model_name)
    # The product's own models all have rows in the demo, so each change page was seen.
    for model_name in (
        "ticket",
        "ticketreply",
        "handlergroup",
        "slarule",
        "calendar",
        "clocksegment",
        "notifytemplate",
        "profile",
        "webhook",
    ):
        assert model_name in rendered_changes


def test_the_index_names_the_product_and_says_sla_in_capitals(client, superuser):
    page = client.get("/admin/").content.decode()
    assert "<title>Ticketdesk administration" in page
    assert "Django administration" not in page
    assert "SLA rules" in page and "Sla rules" not in page
    assert "SLA outcomes" in page


def test_labels_are_in_the_products_words(client, seeded):
    from handler_groups.models import HandlerGroup
    from sla.models import SlaRule

    group = HandlerGroup.objects.get(name="IT support")
    page = client.get(f"/admin/handler_groups/handlergroup/{group.pk}/change/").content.decode()
    assert "Round-robin cursor" in page and "Last assign index" not in page
    assert "Wrap-up (seconds)" in page
    rule = SlaRule.objects.first()
    page = client.get(f"/admin/sla/slarule/{rule.pk}/change/").content.decode()
    assert "Response time (hours)" in page and "Response hours" not in page


def test_an_admin_page_renders_in_chinese(client, superuser):
    page = client.get("/admin/ticketing/ticket/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert page.status_code == 200
    text = page.content.decode()
    assert 'lang="zh-hans"' in text
    assert "工单" in text and "Select ticket to change" not in text


def test_channels_and_webhook_subscriptions_are_checkboxes(client, superuser):
    from notifications.models import NotifyTemplate, Webhook

    NotifyTemplate.objects.create(code="ticket-done", name="Done", title="t", content="c")
    NotifyTemplate.objects.create(code="ticket-late", name="Late", title="t", content="c")
    page = client.get("/admin/notifications/webhook/add/").content.decode()
    assert 'type="checkbox" name="template_codes" value="ticket-late"' in page
    response = client.post(
        "/admin/notifications/webhook/add/",
        {
            "name": "chat",
            "url": "https://chat.example.test/hook",
            "secret": "s",
            "template_codes": ["ticket-done", "ticket-late"],
            "timeout_seconds": "5",
            "enabled": "on",
        },
    )
    assert response.status_code == 302
    assert Webhook.objects.get(name="chat").template_codes == ["ticket-done", "ticket-late"]

    template = NotifyTemplate.objects.get(code="ticket-done")
    url = f"/admin/notifications/notifytemplate/{template.pk}/change/"
    form = {
        "code": "ticket-done",
        "name": "Done",
        "title": "t",
        "content": "c",
        "channels": ["email", "in_app"],
        "enabled": "on",
        "sample_params": "{}",
        "translations-TOTAL_FORMS": "0",
        "translations-INITIAL_FORMS": "0",
    }
    assert client.post(url, form).status_code == 302
    template.refresh_from_db()
    assert template.channels == ["email", "in_app"]
    # A channel nobody registered is refused on its field, and nothing changes.
    refused = client.post(url, {**form, "channels": ["email", "pager"]})
    assert refused.status_code == 200
    assert "channels" in refused.context["adminform"].form.errors
    template.refresh_from_db()
    assert template.channels == ["email", "in_app"]
