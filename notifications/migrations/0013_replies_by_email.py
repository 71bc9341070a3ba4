"""Tickets by e-mail (the mail app): a public reply reaches the applicant and the watchers in
their mail client, as the next message of the ticket's thread, so ticket-replied goes out by
e-mail too (it was in-app only). Internal notes never do: mail.outbound withholds any reply
notice that is not about a public reply. A template an operator has since given other
channels keeps them, with e-mail added."""

from django.db import migrations

CODES = ("ticket-replied", "ticket-reopened")


def install(apps, schema_editor):
    NotifyTemplate = apps.get_model("notifications", "NotifyTemplate")
    for template in NotifyTemplate.objects.filter(code__in=CODES):
        if "email" not in template.channels:
            template.channels = [*template.channels, "email"]
            template.save(update_fields=["channels"])


def remove(apps, schema_editor):
    NotifyTemplate = apps.get_model("notifications", "NotifyTemplate")
    template = NotifyTemplate.objects.filter(code="ticket-replied").first()
    if template is not None and "email" in template.channels:
        template.channels = [c for c in template.channels if c != "email"]
        template.save(update_fields=["channels"])


class Migration(migrations.Migration):
    dependencies = [("notifications", "0012_reopen_template")]

    operations = [migrations.RunPython(install, remove)]
