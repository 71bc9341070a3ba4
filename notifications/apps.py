from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = _("Notifications")

    def ready(self):
        from . import gauges  # noqa: F401  (registers its /metrics figures)
        from .channels import email, in_app, webhook  # noqa: F401  (each registers itself)
