from django.apps import AppConfig


class HandlerGroupsConfig(AppConfig):
    name = "handler_groups"
    verbose_name = "Handler groups"

    def ready(self):
        # Import the strategies so each registers itself under its code.
        from . import assignment  # noqa: F401
