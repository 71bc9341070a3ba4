from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ToolboxConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "toolbox"
    verbose_name = _("Toolbox")
