from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = _("Accounts")

    def ready(self) -> None:
        from . import (  # noqa: F401
            openapi,  # the token scheme in the schema
            signals,  # connects the password-change revocation
        )
