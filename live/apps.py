from django.apps import AppConfig


class LiveConfig(AppConfig):
    """Live pages (see live/__init__.py): no models."""

    name = "live"
    verbose_name = "Live pages"
