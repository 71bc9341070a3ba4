"""API token authentication: django-rest-knox's, without its per-request sweep of the user's
other tokens (one more query on every request). An expired token is refused and deleted when
presented; the others are deleted when the user logs in (accounts/apis.py). Once the token
names the person, their profile's language applies to the answer (messages and errors), as
the console's middleware does for a signed-in browser.

The token is looked up on every request (a revoked token stops working at once; nothing is
remembered in the process) in one prepared statement (TOKEN_SQL) that also reads the
person, their profile and their permissions (their own and their groups'): the profile's
language and a `has_perm` check (an endpoint's permission class) then cost no query of
their own."""

import binascii
import functools
from hmac import compare_digest

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from knox.crypto import hash_token
from knox.models import get_token_model
from knox.settings import CONSTANTS, knox_settings
from knox.signals import token_expired
from psycopg import sql
from rest_framework import exceptions

from config.db import instances, prepared_cursor

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


TOKEN_SQL = """
SELECT {token_columns}, {user_columns}, {profile_columns},
       CASE WHEN u.is_active AND NOT u.is_superuser THEN ARRAY(
           SELECT ct.app_label || '.' || pm.codename
           FROM {user_permissions} up
           JOIN {permissions} pm ON pm.id = up.{user_permission}
           JOIN {content_types} ct ON ct.id = pm.content_type_id
           WHERE up.{permission_user} = u.{user_key}
       ) END,
       CASE WHEN u.is_active AND NOT u.is_superuser THEN ARRAY(
           SELECT ct.app_label || '.' || pm.codename
           FROM {user_groups} ug
           JOIN {group_permissions} gp ON gp.{permission_group} = ug.{user_group}
           JOIN {permissions} pm ON pm.id = gp.{group_permission}
           JOIN {content_types} ct ON ct.id = pm.content_type_id
           WHERE ug.{group_user} = u.{user_key}
       ) END
FROM {tokens} t
JOIN {users} u ON u.{user_key} = t.{token_user}
LEFT JOIN oa_user_profile pr ON pr.user_id = u.{user_key}
WHERE t.{token_key} = %s
"""
"""The tokens of one token key, each with its user and the user's profile (as
`select_related("user", "user__profile")` would read them), and the user's permissions as
Django's ModelBackend caches them on the user ("app_label.codename" arrays, from the user's
own permissions and from their groups'; read only for an active user who is not a
superuser, the only ones for whom ModelBackend reads them so). Locks nothing. The token and
user models are settings (knox's and Django's swappable models): their tables and columns
are composed in from the models (`_TokenQuery`). Raw SQL: building the ORM's query cost
more than running it, on every API request."""


class _TokenQuery:
    """TOKEN_SQL for the configured models, and the instances of its rows."""

    def __init__(self):
        token_model, user_model = get_token_model(), get_user_model()
        self.token_model, self.user_model = token_model, user_model
        self.widths = [len(m._meta.concrete_fields) for m in (token_model, user_model, Profile)]
        self.token_user = token_model._meta.get_field("user")
        self.user_profile = user_model._meta.get_field("profile")  # the reverse one-to-one
        self.profile_user = Profile._meta.get_field("user")
        user_perms = user_model._meta.get_field("user_permissions")  # many-to-many fields
        user_groups = user_model._meta.get_field("groups")
        group_perms = user_groups.related_model._meta.get_field("permissions")

        def columns(model, alias: str) -> sql.Composable:
            return sql.SQL(", ").join(
                sql.Identifier(alias, f.column) for f in model._meta.concrete_fields
            )

        name = sql.Identifier
        self.sql = (
            sql.SQL(TOKEN_SQL.strip())
            .format(
                token_columns=columns(token_model, "t"),
                user_columns=columns(user_model, "u"),
                profile_columns=columns(Profile, "pr"),
                permissions=name(Permission._meta.db_table),
                content_types=name(ContentType._meta.db_table),
                user_permissions=name(user_perms.m2m_db_table()),
                user_permission=name(user_perms.m2m_reverse_name()),
                permission_user=name(user_perms.m2m_column_name()),
                user_groups=name(user_groups.m2m_db_table()),
                user_group=name(user_groups.m2m_reverse_name()),
                group_user=name(user_groups.m2m_column_name()),
                group_permissions=name(group_perms.m2m_db_table()),
                permission_group=name(group_perms.m2m_column_name()),
                group_permission=name(group_perms.m2m_reverse_name()),
                tokens=name(token_model._meta.db_table),
                users=name(user_model._meta.db_table),
                user_key=name(user_model._meta.pk.column),
                token_user=name(self.token_user.column),
                token_key=name(token_model._meta.get_field("token_key").column),
            )
            .as_string()
        )

    def token_of(self, row: tuple):
        """The token of a row, its user and profile cached on it as select_related's are."""
        tokens, users, profiles = self.widths
        (auth_token,) = instances(self.token_model, [row[:tokens]])
        (user,) = instances(self.user_model, [row[tokens : tokens + users]])
        self.token_user.set_cached_value(auth_token, user)
        profile_row = row[tokens + users : tokens + users + profiles]
        profile = None
        if any(value is not None for value in profile_row):  # all None: the user has none
            (profile,) = instances(Profile, [profile_row])
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
