"""Each person reads pages and notifications in their language: the profile's choice, else the
language cookie the header switch sets, else Accept-Language. English and Simplified Chinese
ship; a notification is rendered in the recipient's language (and its times in their zone)."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Profile
from notifications.models import Notification, NotifyTemplate, NotifyTemplateTranslation
from notifications.sending import send
from sla.escalation import CLOCK_WORDS
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9,en;q=0.5"}
# The project's catalogue (DRF's own says 该字段是必填项。).
REQUIRED_IN_CHINESE = "此字段为必填项。"


def test_the_login_page_follows_accept_language(client):
    english = client.get("/accounts/login/")
    chinese = client.get("/accounts/login/", **ZH)
    assert "Log in" in english.content.decode() and english["Content-Language"] == "en"
    body = chinese.content.decode()
    assert chinese["Content-Language"] == "zh-hans"
    assert '<html lang="zh-hans">' in body
    assert "登录" in body and "Log in to work the ticket pool" not in body


def test_the_profiles_language_wins_over_the_browsers(client):
    user = UserFactory(username="lin")
    Profile.objects.create(user=user, language="zh-hans")
    client.force_login(user)
    body = client.get("/console/my-tickets/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "我的工单" in body and ">My tickets<" not in body
    Profile.objects.filter(user=user).update(language="en")
    body = client.get("/console/my-tickets/", **ZH).content.decode()
    assert ">My tickets<" in body and "我的工单" not in body


def test_the_header_switch_stores_the_choice_and_returns_to_the_page(client):
    user = UserFactory(username="lin")
    client.force_login(user)
    page = client.get("/console/my-tickets/").content.decode()
    assert 'action="/console/language/"' in page and 'value="zh-hans"' in page
    response = client.post(
        "/console/language/", {"language": "zh-hans", "next": "/console/my-tickets/?page=1"}
    )
    assert response.status_code == 302 and response["Location"] == "/console/my-tickets/?page=1"
    assert Profile.objects.get(user=user).language == "zh-hans"
    assert response.cookies["django_language"].value == "zh-hans"
    # The next page speaks Chinese, whatever the browser asks for.
    body = client.get("/console/my-tickets/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "我的工单" in body


def test_an_unknown_language_is_refused_and_nothing_changes(client):
    user = UserFactory(username="lin")
    Profile.objects.create(user=user, language="en")
    client.force_login(user)
    response = client.post("/console/language/", {"language": "klingon", "next": "/console/"})
    assert response.status_code == 400
    assert response.json()["errors"] == {"language": ["Unknown language."]}
    assert Profile.objects.get(user=user).language == "en"
    assert "django_language" not in response.cookies


def test_before_login_the_switch_sets_only_the_cookie(client):
    response = client.post(
        "/console/language/", {"language": "zh-hans", "next": "/accounts/login/"}
    )
    assert response.status_code == 302
    assert "登录" in client.get("/accounts/login/").content.decode()
    assert not Profile.objects.exists()


def test_an_unsafe_next_goes_home_instead(client):
    response = client.post(
        "/console/language/", {"language": "zh-hans", "next": "https://evil.example/"}
    )
    assert response.status_code == 302 and "evil" not in response["Location"]


def test_api_errors_follow_accept_language(client):
    user = UserFactory(username="lin")
    client.force_login(user)
    english = client.post("/api/tickets/", {}, content_type="application/json")
    chinese = client.post("/api/tickets/", {}, content_type="application/json", **ZH)
    assert english.status_code == chinese.status_code == 400
    assert english.json()["errors"]["title"] == ["This field is required."]
    assert chinese.json()["errors"]["title"] == [REQUIRED_IN_CHINESE]


def test_the_browsers_language_is_remembered_for_notifications_while_none_is_chosen(client):
    user = UserFactory(username="lin")
    client.force_login(user)
    client.get("/console/my-tickets/", **ZH)
    assert Profile.objects.get(user=user).browser_language == "zh-hans"
    client.get("/console/my-tickets/", **ZH)  # unchanged: nothing written again
    assert Profile.objects.get(user=user).language == ""


NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _sla_warning(recipients):
    return send(
        recipients=recipients,
        template_code="ticket-sla-warn",
        params={
            "billCode": "TK1",
            "title": "VPN",
            "type": CLOCK_WORDS["resolve"],
            "deadline": NOW + timedelta(hours=1),
        },
        dedupe_key="warn:1",
        now=NOW,
    )


def test_each_recipient_reads_a_notification_in_their_language_and_zone():
    chinese = UserFactory(username="lin")
    Profile.objects.create(user=chinese, language="zh-hans", time_zone="Asia/Shanghai")
    browser_chinese = UserFactory(username="wang")
    Profile.objects.create(user=browser_chinese, browser_language="zh-hans")
    english = UserFactory(username="ann")
    Profile.objects.create(user=english, time_zone="Europe/Berlin")
    nobody_chose = UserFactory(username="bob")
    _sla_warning([chinese, browser_chinese, english, nobody_chose])
    by_user = {n.recipient_id: n for n in Notification.objects.all()}
    assert by_user[chinese.pk].title == "[SLA 预警] TK1"
    assert by_user[chinese.pk].content == (
        "[SLA 预警] 工单 TK1（VPN）：解决时限为 2026-03-02 18:00 CST，请尽快处理。"
    )
    assert by_user[browser_chinese.pk].content.endswith("2026-03-02 10:00 UTC，请尽快处理。")
    assert by_user[english.pk].content == (
        "[SLA warning] Ticket TK1 (VPN): resolve deadline at 2026-03-02 11:00 CET, please act soon."
    )
    assert by_user[nobody_chose.pk].content.endswith("at 2026-03-02 10:00 UTC, please act soon.")
    # The stored parameters stay neutral: ISO-8601 and the default language.
    assert by_user[chinese.pk].params["deadline"] == "2026-03-02T10:00:00+00:00"
    assert by_user[chinese.pk].params["type"] == "resolve"


def test_a_language_without_a_translation_falls_back_to_the_templates_own_wording():
    NotifyTemplateTranslation.objects.filter(template__code="ticket-sla-warn").delete()
    chinese = UserFactory(username="lin")
    Profile.objects.create(user=chinese, language="zh-hans")
    [notice] = _sla_warning([chinese])
    # The wording is the template's own; the translatable word still speaks Chinese.
    assert notice.content.startswith("[SLA warning] Ticket TK1 (VPN): 解决 deadline")


def test_a_translation_asking_for_an_unknown_parameter_is_refused_in_admin():
    from django.core.exceptions import ValidationError

    template = NotifyTemplate.objects.get(code="ticket-assigned")
    translation = NotifyTemplateTranslation(
        template=template, language="zh-hans", title="{{billCode}}", content="{{nonsense}}"
    )
    with pytest.raises(ValidationError) as refused:
        translation.full_clean(exclude=["template", "language"])
    assert "nonsense" in str(refused.value)


def test_every_shipped_template_has_its_chinese_wording_with_the_same_parameters():
    from notifications.rendering import placeholders

    for template in NotifyTemplate.objects.all():
        chinese = template.translations.get(language="zh-hans")
        assert placeholders(chinese.title) | placeholders(chinese.content) == placeholders(
            template.title
        ) | placeholders(template.content), template.code


def test_an_api_tokens_person_reads_errors_in_their_profiles_language(client):
    user = UserFactory(username="lin", password="pw")
    Profile.objects.create(user=user, language="zh-hans")
    login = client.post(
        "/api/auth/token/", {"username": "lin", "password": "pw"}, content_type="application/json"
    )
    token = login.json()["token"]
    with CaptureQueriesContext(connection) as queries:
        refused = client.post(
            "/api/tickets/",
            {},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Token {token}",
            HTTP_ACCEPT_LANGUAGE="en",
        )
    # The profile came with the token's own query: no query of its own.
    assert not [q for q in queries if q["sql"].startswith('SELECT "oa_user_profile"')]
    assert refused.status_code == 400
    assert refused.json()["errors"]["title"] == [REQUIRED_IN_CHINESE]
    assert refused["Content-Language"] == "zh-hans"


def test_the_admin_labels_the_projects_models_in_chinese(client):
    staff = UserFactory(username="root", is_staff=True, is_superuser=True)
    Profile.objects.create(user=staff, language="zh-hans")
    client.force_login(staff)
    index = client.get("/admin/").content.decode()
    for label in ("工单", "处理组", "通知模板", "SLA 规则"):
        assert label in index, label
    form = client.get("/admin/notifications/notifytemplate/add/").content.decode()
    for label in ("渠道", "已启用", "模板翻译"):
        assert label in form, label
    assert ">Channels<" not in form and ">Enabled<" not in form
