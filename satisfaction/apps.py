from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SatisfactionConfig(AppConfig):
    name = "satisfaction"
    verbose_name = _("Satisfaction")
