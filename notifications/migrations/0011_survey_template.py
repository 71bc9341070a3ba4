"""The satisfaction survey's two templates (satisfaction/services.py), in English and in
Simplified Chinese: the applicant asked how it went (with the signed link to the survey
page), and the group's leader told of a low rating (1 or 2 of 5)."""

from django.db import migrations

TEMPLATES = {
    "ticket-survey": {
        "name": "Satisfaction survey (to the applicant)",
        "title": "How did we do with {{billCode}}?",
        "content": "Your ticket {{billCode}} ({{title}}) is completed. How satisfied are you "
        "with the help? Rate it from 1 to 5 within {{days}} days: {{link}} "
        "(or on the ticket's page).",
        "channels": ["in_app", "email"],
        "sample_params": {
            "billCode": "TK20260101000042",
            "title": "VPN down",
            "days": "14",
            "link": "http://127.0.0.1:8000/survey/eyJzIjoxLCJ0IjoxfQ:1v:sig/",
        },
    },
    "ticket-low-rating": {
        "name": "Low satisfaction rating (to the leader)",
        "title": "Low rating on {{billCode}}: {{rating}} of 5",
        "content": "The applicant of ticket {{billCode}} ({{title}}) in {{group}}, handled by "
        "{{handler}}, rated the help {{rating}} of 5.",
        "channels": ["in_app", "email"],
        "sample_params": {
            "billCode": "TK20260101000042",
            "title": "VPN down",
            "group": "IT support",
            "handler": "alice",
            "rating": "2",
            "body": "It took a week.",
        },
    },
}

ZH_HANS = {
    "ticket-survey": (
        "工单 {{billCode}} 的服务您满意吗？",
        "您的工单 {{billCode}}（{{title}}）已处理完成。您对这次服务满意吗？请在 {{days}} 天内"
        "打 1 到 5 分：{{link}}（也可以在工单页面上评分）。",
    ),
    "ticket-low-rating": (
        "{{billCode}} 收到低分：{{rating}} 分（满分 5 分）",
        "{{group}} 的工单 {{billCode}}（{{title}}）由 {{handler}} 处理，申请人给出了 {{rating}} 分"
        "（满分 5 分）。",
    ),
}


def install(apps, schema_editor):
    NotifyTemplate = apps.get_model("notifications", "NotifyTemplate")
    Translation = apps.get_model("notifications", "NotifyTemplateTranslation")
    for code, fields in TEMPLATES.items():
        template, _created = NotifyTemplate.objects.get_or_create(code=code, defaults=fields)
        title, content = ZH_HANS[code]
        Translation.objects.get_or_create(
            template=template, language="zh-hans", defaults={"title": title, "content": content}
        )


def remove(apps, schema_editor):
    apps.get_model("notifications", "NotifyTemplate").objects.filter(
        code__in=list(TEMPLATES)
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("notifications", "0010_merge_template")]

    operations = [migrations.RunPython(install, remove)]
