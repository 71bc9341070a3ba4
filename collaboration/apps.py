from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CollaborationConfig(AppConfig):
    name = "collaboration"
    verbose_name = _("Collaboration")
