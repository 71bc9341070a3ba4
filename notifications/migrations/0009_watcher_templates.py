"""Watchers, CC and @mentions (collaboration/, workflow/mentions.py): the messages that tell a
person they now watch a ticket, that a ticket they watch changed status, and that a colleague
mentioned them in an internal note; in English and Simplified Chinese (like 0004 + 0006)."""

from django.db import migrations

SAMPLE = {
    "billCode": "TK20260101000042",
    "title": "VPN down",
    "ticketId": 42,
    "group": "IT support",
    "actor": "alice",
    "status": "completed",
    "author": "bob",
    "body": "@carol could you look at the firewall log?",
}

# code -> (name, title, content, channels)
TEMPLATES = {
    "ticket-watching": (
        "Now watching",
        "You are now watching {{billCode}}",
        "{{actor}} added you to ticket {{billCode}} ({{title}}). You will be told of its "
        "replies and status changes.",
        ["in_app", "email"],
    ),
    "ticket-status-changed": (
        "Watched ticket's status",
        "{{billCode}} is {{status}}",
        "Ticket {{billCode}} ({{title}}), which you are watching, is {{status}}.",
        ["in_app", "email"],
    ),
    # In-app only: the note is the team's, and stays inside the product.
    "ticket-mentioned": (
        "Mentioned in a note",
        "{{author}} mentioned you on {{billCode}}",
        "{{author}} mentioned you in an internal note on ticket {{billCode}} ({{title}}):\n\n"
        "{{body}}",
        ["in_app"],
    ),
}

ZH_HANS = {
    "ticket-watching": (
        "你已关注工单 {{billCode}}",
        "{{actor}} 把你加入了工单 {{billCode}}（{{title}}），它的回复和状态变化都会通知你。",
    ),
    "ticket-status-changed": (
        "工单 {{billCode}}：{{status}}",
        "你关注的工单 {{billCode}}（{{title}}）状态更新：{{status}}。",
    ),
    "ticket-mentioned": (
        "{{author}} 在 {{billCode}} 中提到了你",
        "{{author}} 在工单 {{billCode}}（{{title}}）的内部备注中提到了你：\n\n{{body}}",
    ),
}


def install(apps, schema_editor):
    NotifyTemplate = apps.get_model("notifications", "NotifyTemplate")
    Translation = apps.get_model("notifications", "NotifyTemplateTranslation")
    for code, (name, title, content, channels) in TEMPLATES.items():
        template, _created = NotifyTemplate.objects.get_or_create(
            code=code,
            defaults={
                "name": name,
                "title": title,
                "content": content,
                "channels": channels,
                "sample_params": SAMPLE,
            },
        )
        zh_title, zh_content = ZH_HANS[code]
        Translation.objects.get_or_create(
            template=template,
            language="zh-hans",
            defaults={"title": zh_title, "content": zh_content},
        )


def remove(apps, schema_editor):
    apps.get_model("notifications", "NotifyTemplate").objects.filter(
        code__in=list(TEMPLATES)
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("notifications", "0008_product_wording")]

    operations = [migrations.RunPython(install, remove)]
