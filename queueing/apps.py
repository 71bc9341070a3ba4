from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class QueueingConfig(AppConfig):
    name = "queueing"
    verbose_name = _("Queueing")
