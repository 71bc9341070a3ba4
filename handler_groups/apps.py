from django.apps import AppConfig


class HandlerGroupsConfig(AppConfig):
    name = "handler_groups"
    verbose_name = "Handler groups"
