"""Reopening a completed ticket (workflow.services.ticket_reopen): the message that tells its
applicant and its handler that it is being worked on again, in English and Simplified
Chinese (like 0010). The reason, when one was given, is the message's body (the e-mail
carries it). Its watchers read the status change (ticket-status-changed, "reopened")."""

from django.db import migrations

CODE = "ticket-reopened"
SAMPLE = {
    "billCode": "TK20260101000042",
    "title": "VPN down",
    "ticketId": 42,
    "group": "IT support",
    "actor": "alice",
    "handler": "bob",
    "body": "It stopped working again this morning.",
}
TITLE = "{{billCode}} is reopened"
CONTENT = (
    "{{actor}} reopened ticket {{billCode}} ({{title}}): it is being worked on again, "
    "by {{handler}}."
)
ZH_TITLE = "工单 {{billCode}} 已重新打开"
ZH_CONTENT = "{{actor}} 重新打开了工单 {{billCode}}（{{title}}），将由 {{handler}} 继续处理。"


def install(apps, schema_editor):
    NotifyTemplate = apps.get_model("notifications", "NotifyTemplate")
    Translation = apps.get_model("notifications", "NotifyTemplateTranslation")
    template, _created = NotifyTemplate.objects.get_or_create(
        code=CODE,
        defaults={
            "name": "Ticket reopened (to the applicant and the handler)",
            "title": TITLE,
            "content": CONTENT,
            "channels": ["in_app", "email"],
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
    dependencies = [("notifications", "0011_survey_template")]

    operations = [migrations.RunPython(install, remove)]
