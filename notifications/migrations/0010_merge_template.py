"""Merging duplicates (collaboration/services/merging.py): the message that tells both
applicants a duplicate was merged into another ticket, in English and Simplified Chinese
(like 0004 + 0006). `billCode`/`title` name the ticket the conversation goes on in (the
target), `sourceBill`/`sourceTitle` the duplicate."""

from django.db import migrations

CODE = "ticket-merged"
SAMPLE = {
    "billCode": "TK20260101000042",
    "title": "VPN down",
    "ticketId": 42,
    "group": "IT support",
    "sourceBill": "TK20260101000043",
    "sourceTitle": "Cannot reach the VPN",
    "actor": "alice",
}
TITLE = "{{sourceBill}} was merged into {{billCode}}"
CONTENT = (
    "{{actor}} merged ticket {{sourceBill}} ({{sourceTitle}}) into {{billCode}} ({{title}}): "
    "they are about the same thing. Its replies and files are now on {{billCode}}, where the "
    "conversation goes on."
)
ZH_TITLE = "工单 {{sourceBill}} 已合并到 {{billCode}}"
ZH_CONTENT = (
    "{{actor}} 已把工单 {{sourceBill}}（{{sourceTitle}}）合并到 {{billCode}}（{{title}}），"
    "两者说的是同一件事。它的回复和附件已移到 {{billCode}}，请在那里继续沟通。"
)


def install(apps, schema_editor):
    NotifyTemplate = apps.get_model("notifications", "NotifyTemplate")
    Translation = apps.get_model("notifications", "NotifyTemplateTranslation")
    template, _created = NotifyTemplate.objects.get_or_create(
        code=CODE,
        defaults={
            "name": "Duplicate merged (to both applicants)",
            "title": TITLE,
            "content": CONTENT,
            "channels": ["in_app"],
            "sample_params": SAMPLE,
        },
    )
    Translation.objects.get_or_create(
        template=template,
        language="zh-hans",
        defaults={"title": ZH_TITLE, "content": ZH_CONTENT},
    )


def remove(apps, schema_editor):
    apps.get_model("notifications", "NotifyTemplate").objects.filter(code=CODE).delete()


class Migration(migrations.Migration):
    dependencies = [("notifications", "0009_watcher_templates")]

    operations = [migrations.RunPython(install, remove)]
