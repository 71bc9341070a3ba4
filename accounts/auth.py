"""API token authentication: django-rest-knox's, without its per-request sweep of the user's
other tokens (one more query on every request). An expired token is refused and deleted when
presented; the others are deleted when the user logs in (accounts/apis.py). Once the token
names the person, their profile's language applies to the answer (messages and errors), as
the console's middleware does for a signed-in browser.

The token is looked up on every request (a revoked token stops working at once; nothing is
remembered in the process) in one prepared statement that also reads the person, their
profile and their permissions (their own and their groups'): the profile's language and a
`has_perm` check (an endpoint's permission class) then cost no query of their own."""

import binascii
import functools
from hmac import compare_digest

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import DEFAULT_DB_ALIAS
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from knox.crypto import hash_token
from knox.models import get_token_model
from knox.settings import CONSTANTS, knox_settings
from knox.signals import token_expired
from rest_framework import exceptions

from config.db import prepared_cursor

from .models import Profile
from .preferences import activate_language


class TokenAuthentication(KnoxTokenAuthentication):
    def authenticate(self, request):
        found = super().authenticate(request)
        if found is not None:
            profile = getattr(found[0], "profile", None)  # read with the token
            activate_language(request._request, profile.language if profile else "")
        return found

    def authenticate_credentials(self, token):
        """knox's, with the person, their profile and their permissions read in the token's
        own query (`_token_query`)."""
        msg = _("Invalid token.")
        token = token.decode("utf-8")
        query = _token_query()
        with prepared_cursor() as cursor:
            cursor.execute(query.sql, [token[: CONSTANTS.TOKEN_KEY_LENGTH]])
            rows = cursor.fetchall()
        for row in rows:
            auth_token = query.token_of(row)
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


class _TokenQuery:
    """The tokens of one token key, each with its user and the user's profile (as
    `select_related("user", "user__profile")` would read them), and the user's permissions as
    Django's ModelBackend caches them on the user ("app_label.codename" sets, from the user's
    own permissions and from their groups'; read only for an active user who is not a
    superuser, the only ones for whom ModelBackend reads them so). Raw SQL: building the ORM's
    query cost more than running it, on every API request."""

    def __init__(self):
        token_model, user_model = get_token_model(), get_user_model()
        self.token_model, self.user_model = token_model, user_model
        self.token_fields = [f.attname for f in token_model._meta.concrete_fields]
        self.user_fields = [f.attname for f in user_model._meta.concrete_fields]
        self.profile_fields = [f.attname for f in Profile._meta.concrete_fields]
        self.token_user = token_model._meta.get_field("user")
        self.user_profile = user_model._meta.get_field("profile")  # the reverse one-to-one
        self.profile_user = Profile._meta.get_field("user")
        self.profile_key = self.profile_fields.index(Profile._meta.pk.attname)

        def columns(model, alias: str) -> list[str]:
            return [f'{alias}."{f.column}"' for f in model._meta.concrete_fields]

        # "app_label.codename" of each permission joined as pm.
        name = (
            f"(SELECT ct.app_label || '.' || pm.codename FROM \"{ContentType._meta.db_table}\" ct "
            "WHERE ct.id = pm.content_type_id)"
        )
        permission = Permission._meta.db_table
        user_perms = user_model._meta.get_field("user_permissions")  # many-to-many fields
        user_groups = user_model._meta.get_field("groups")
        group_perms = user_groups.related_model._meta.get_field("permissions")
        user_key = f'u."{user_model._meta.pk.column}"'
        own = (
            f'SELECT {name} FROM "{user_perms.m2m_db_table()}" up JOIN "{permission}" pm '
            f'ON pm.id = up."{user_perms.m2m_reverse_name()}" '
            f'WHERE up."{user_perms.m2m_column_name()}" = {user_key}'
        )
        from_groups = (
            f'SELECT {name} FROM "{user_groups.m2m_db_table()}" ug '
            f'JOIN "{group_perms.m2m_db_table()}" gp '
            f'ON gp."{group_perms.m2m_column_name()}" = ug."{user_groups.m2m_reverse_name()}" '
            f'JOIN "{permission}" pm ON pm.id = gp."{group_perms.m2m_reverse_name()}" '
            f'WHERE ug."{user_groups.m2m_column_name()}" = {user_key}'
        )
        read_perms = 'u."is_active" AND NOT u."is_superuser"'
        select = [
            *columns(token_model, "t"),
            *columns(user_model, "u"),
            *columns(Profile, "pr"),
            f"CASE WHEN {read_perms} THEN ARRAY({own}) END",
            f"CASE WHEN {read_perms} THEN ARRAY({from_groups}) END",
        ]
        token_key = token_model._meta.get_field("token_key").column
        self.sql = (
            f"SELECT {', '.join(select)} "
            f'FROM "{token_model._meta.db_table}" t '
            f'JOIN "{user_model._meta.db_table}" u ON {user_key} = t."{self.token_user.column}" '
            f'LEFT JOIN "{Profile._meta.db_table}" pr '
            f'ON pr."{self.profile_user.column}" = {user_key} '
            f'WHERE t."{token_key}" = %s'
        )

    def token_of(self, row: tuple):
        """The token of a row, its user and profile cached on it as select_related's are."""
        tokens, users = len(self.token_fields), len(self.user_fields)
        profiles = len(self.profile_fields)
        auth_token = self.token_model.from_db(DEFAULT_DB_ALIAS, self.token_fields, row[:tokens])
        user_row = row[tokens : tokens + users]
        user = self.user_model.from_db(DEFAULT_DB_ALIAS, self.user_fields, user_row)
        self.token_user.set_cached_value(auth_token, user)
        profile_row = row[tokens + users : tokens + users + profiles]
        profile = None
        if profile_row[self.profile_key] is not None:  # None: the user has no profile
            profile = Profile.from_db(DEFAULT_DB_ALIAS, self.profile_fields, profile_row)
            self.profile_user.set_cached_value(profile, user)
        self.user_profile.set_cached_value(user, profile)  # None: user.profile raises
        own, from_groups = row[-2:]
        if own is not None:  # ModelBackend's caches (django.contrib.auth.backends)
            user._user_perm_cache = set(own)
            user._group_perm_cache = set(from_groups)
        return auth_token


@functools.cache
def _token_query() -> _TokenQuery:
    return _TokenQuery()


def delete_expired_tokens(*, user_id: int) -> int:
    deleted, _ = (
        get_token_model().objects.filter(user_id=user_id, expiry__lt=timezone.now()).delete()
    )
    return deleted
