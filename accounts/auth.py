"""API token authentication: django-rest-knox's, without its per-request sweep of the user's
other tokens (one more query on every request). An expired token is refused and deleted when
presented; the others are deleted when the user logs in (accounts/apis.py)."""

from django.utils import timezone
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from knox.models import get_token_model
from knox.signals import token_expired


class TokenAuthentication(KnoxTokenAuthentication):
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
