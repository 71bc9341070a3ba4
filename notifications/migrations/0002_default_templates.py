from django.db import migrations

SAMPLE = {
    "billCode": "TK20260101000042",
    "title": "VPN down",
    "handler": "alice",
    "group": "IT support",
    "type": "resolve",
    "deadline": "2026-01-01 17:00 UTC",
    "reason": "duplicate of TK20260101000041",
    "author": "bob",
    "minutes": "30",
}

TEMPLATES = [
    (
        "ticket-assigned",
        "Ticket assigned",
        "Ticket {{billCode}} assigned to you",
        "Ticket {{billCode}} ({{title}}) of {{group}} is assigned to you.",
        ["in_app", "email"],
    ),
    (
        "ticket-offered",
        "Ticket offered",
        "Ticket {{billCode}} offered to you",
        "Ticket {{billCode}} ({{title}}) is offered to you; accept it within {{minutes}} minutes "
        "or it goes to someone else.",
        ["in_app"],
    ),
    (
        "ticket-reclaimed",
        "Offer reclaimed",
        "Ticket {{billCode}} was reassigned",
        "You did not accept ticket {{billCode}} ({{title}}) in time; it has been reassigned.",
        ["in_app"],
    ),
    (
        "ticket-replied",
        "New reply",
        "New reply on {{billCode}}",
        "{{author}} replied on ticket {{billCode}} ({{title}}).",
        ["in_app"],
    ),
    (
        "ticket-completed",
        "Ticket completed",
        "Ticket {{billCode}} completed",
        "Your ticket {{billCode}} ({{title}}) has been completed by {{handler}}. "
        "Close it if you are satisfied, or reply if not.",
        ["in_app", "email"],
    ),
    (
        "ticket-rejected",
        "Ticket rejected",
        "Ticket {{billCode}} rejected",
        "Your ticket {{billCode}} ({{title}}) was rejected: {{reason}}",
        ["in_app", "email"],
    ),
    (
        "ticket-sla-warn",
        "SLA warning",
        "[SLA warning] {{billCode}}",
        "[SLA warning] Ticket {{billCode}} ({{title}}): {{type}} deadline at {{deadline}}, "
        "please act soon.",
        ["in_app", "email", "webhook"],
    ),
    (
        "ticket-sla-timeout",
        "SLA timeout",
        "[SLA timeout] {{billCode}}",
        "[SLA timeout] Ticket {{billCode}} ({{title}}): {{type}} deadline passed, please act now.",
        ["in_app", "email", "webhook"],
    ),
]


def install(apps, schema_editor):
    NotifyTemplate = apps.get_model("notifications", "NotifyTemplate")
    for code, name, title, content, channels in TEMPLATES:
        NotifyTemplate.objects.get_or_create(
            code=code,
            defaults={
                "name": name,
                "title": title,
                "content": content,
                "channels": channels,
                "sample_params": SAMPLE,
            },
        )


def remove(apps, schema_editor):
    NotifyTemplate = apps.get_model("notifications", "NotifyTemplate")
    NotifyTemplate.objects.filter(code__in=[t[0] for t in TEMPLATES]).delete()


class Migration(migrations.Migration):
    dependencies = [("notifications", "0001_initial")]

    operations = [migrations.RunPython(install, remove)]
