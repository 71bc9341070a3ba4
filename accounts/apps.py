from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from . import (  # noqa: F401
            openapi,  # the token scheme in the schema
            signals,  # connects the password-change revocation
        )
