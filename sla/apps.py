from django.apps import AppConfig
from django.db.models.signals import post_init, post_save
from django.utils.translation import gettext_lazy as _


class SlaConfig(AppConfig):
    name = "sla"
    verbose_name = _("SLA")

    def ready(self) -> None:
        from . import gauges  # noqa: F401  (registers its /metrics figures)
        from .models import SlaRule
        from .rules import rule_loaded, rule_saved

        # Every rule has a ladder: the default one unless it says otherwise (sla/rules.py).
        post_init.connect(rule_loaded, sender=SlaRule, dispatch_uid="sla_rule_loaded")
        post_save.connect(rule_saved, sender=SlaRule, dispatch_uid="sla_rule_saved")
