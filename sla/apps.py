from django.apps import AppConfig


class SlaConfig(AppConfig):
    name = "sla"
    verbose_name = "SLA"

    def ready(self) -> None:
        from . import gauges  # noqa: F401  (registers its /metrics figures)
