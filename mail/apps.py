from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MailConfig(AppConfig):
    name = "mail"
    verbose_name = _("E-mail")

    def ready(self) -> None:
        # The e-mail channel (notifications, a lower layer) composes a ticket's messages as
        # its thread through the hook this app registers: From the ticket's mailbox, the
        # thread's headers, the reply's files (mail/outbound.py).
        # A thread's message that fails for good shows on its ticket ("could not reach …").
        from notifications.channels.email import set_composer
        from notifications.delivery import on_delivery_failure

        from . import outbound

        set_composer(outbound.compose)
        for template_code in outbound.THREADED:
            on_delivery_failure(template_code)(outbound.record_failures)
