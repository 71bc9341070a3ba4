from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WorkflowConfig(AppConfig):
    name = "workflow"
    verbose_name = _("Ticket workflow")

    def ready(self) -> None:
        # An escalation level may move a ticket to another group: the SLA (a lower layer)
        # calls back into the ticket workflow for it.
        from sla.escalation import set_reassigner

        from .services import ticket_escalate_to_group

        set_reassigner(ticket_escalate_to_group)
