"""API token authentication: django-rest-knox's, without its per-request sweep of the user's
other tokens (one more query on every request). An expired token is refused and deleted when
presented; the others are deleted when the user logs in (accounts/apis.py). Once the token
names the person, their profile's language applies to the answer (messages and errors), as
the console's middleware does for a signed-in browser; the profile comes with the token's own
query, so this costs no query."""

import binascii
from hmac import compare_digest

from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from knox.crypto import hash_token
from knox.models import get_token_model
from knox.settings import CONSTANTS, knox_settings
from knox.signals import token_expired
from rest_framework import exceptions

from .preferences import activate_language


class TokenAuthentication(KnoxTokenAuthentication):
    def authenticate(self, request):
        found = super().authenticate(request)
        if found is not None:
            profile = getattr(found[0], "profile", None)  # read with the token
            activate_language(request._request, profile.language if profile else "")
        return found

    def authenticate_credentials(self, token):
        """knox's, with the person's profile joined into the token's query."""
        msg = _("Invalid token.")
        token = token.decode("utf-8")
        candidates = (
            get_token_model()
            .objects.filter(token_key=token[: CONSTANTS.TOKEN_KEY_LENGTH])
            .select_related("user", "user__profile")
        )
        for auth_token in candidates:
            if self._cleanup_token(auth_token):
                continue
            try:
                digest = hash_token(token)
            except (TypeError, binascii.Error) as exc:
                raise exceptions.AuthenticationFailed(msg) from exc
            if compare_digest(digest, auth_token.digest):
                if knox_settings.AUTO_REFRESH and auth_token.expiry:
                    self.renew_token(auth_token)
                return self.validate_user(auth_token)
        raise exceptions.AuthenticationFailed(msg)

    def _cleanup_token(self, auth_token) -> bool:
        if auth_token.expiry is not None and auth_token.expiry < timezone.now():
            username = auth_token.user.get_username()
            auth_token.delete()
            token_expired.send(sender=self.__class__, username=username, source="auth_token")
            return True
        return False


def delete_expired_tokens(*, user_id: int) -> int:
    deleted, _ = (
        get_token_model().objects.filter(user_id=user_id, expiry__lt=timezone.now()).delete()
    )
    return deleted
