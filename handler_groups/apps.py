from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HandlerGroupsConfig(AppConfig):
    name = "handler_groups"
    verbose_name = _("Handler groups")
