from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InsightConfig(AppConfig):
    name = "insight"
    verbose_name = _("Insight")
