from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TicketingConfig(AppConfig):
    name = "ticketing"
    verbose_name = _("Ticketing")
