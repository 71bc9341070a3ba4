from django.apps import AppConfig


class BeatConfig(AppConfig):
    """Beat's lease and slot claims (config/beat/__init__.py). Its tables are not shown to
    anyone (no admin, no API): operators read them with SQL or the beat's log lines."""

    name = "config.beat"
    label = "beat"
    default_auto_field = "django.db.models.BigAutoField"
