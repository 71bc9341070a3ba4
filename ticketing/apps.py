from django.apps import AppConfig


class TicketingConfig(AppConfig):
    name = "ticketing"
    verbose_name = "Ticketing"

    def ready(self):
        from notifications.services import on_delivery_failure

        from . import routing

        on_delivery_failure("ticket-offered")(routing.offer_push_failed)
