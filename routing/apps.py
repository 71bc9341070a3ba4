from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_out
from django.utils.translation import gettext_lazy as _


class RoutingConfig(AppConfig):
    name = "routing"
    verbose_name = _("Routing")

    def ready(self) -> None:
        # Every strategy registers itself (and its name for HandlerGroup.assign_strategy).
        from notifications.delivery import on_delivery_failure

        from . import gauges, offers, presence  # noqa: F401  (gauges: its /metrics figures)
        from .strategies import (  # noqa: F401
            least_load,
            longest_idle,
            manual,
            online_priority,
            round_robin,
        )

        # Logging out (console or API) sets the agent offline.
        user_logged_out.connect(presence.on_user_logged_out, dispatch_uid="routing.presence.logout")

        # An offer that cannot be pushed to the agent is reclaimed at once.
        on_delivery_failure("ticket-offered")(offers.offer_push_failed)
