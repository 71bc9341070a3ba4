"""Each person's time zone and language on every page.

The middleware reads the signed-in person's profile once per request and activates:
- the time zone: the profile's, else (not chosen yet) the server's TIME_ZONE while the console
  asks the browser for its zone once (static/js/timezone.js); templates and forms show times
  in it, and the API keeps ISO-8601 with offsets whatever the zone;
- the language: the profile's choice, else what LocaleMiddleware negotiated (the language
  cookie the header switch sets, else Accept-Language). The negotiated language of a person
  who has not chosen is remembered (`browser_language`) so that notifications written for
  them while they are away speak their language too (`reader_settings`)."""

import functools
import zoneinfo
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone, translation
from psycopg import sql

from config.db import prepared_cursor

from .models import Profile, validate_time_zone

SUPPORTED = {code for code, _name in settings.LANGUAGES}


@dataclass(frozen=True)
class Preferences:
    time_zone: str
    language: str
    browser_language: str


_NONE = Preferences("", "", "")


def preferences(request) -> Preferences | None:
    """The signed-in person's stored preferences ("" = not chosen), None when anonymous. Read
    once per request (one primary-key query), so a change applies to the next page."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    cached = getattr(request, "_preferences", None)
    if cached is None:
        row = (
            Profile.objects.filter(user_id=user.pk)
            .values_list("time_zone", "language", "browser_language")
            .first()
        )
        cached = Preferences(*row) if row else _NONE
        request._preferences = cached
    return cached


def activate_language(request, code: str) -> None:
    """`code` (a profile's choice) for the rest of this request, if it is one we speak: for a
    signed-in browser (the middleware) and an API token's person (the token is read after the
    middleware ran)."""
    if code in SUPPORTED:
        translation.activate(code)
        request.LANGUAGE_CODE = code


def chosen_time_zone(request) -> str | None:
    """The signed-in person's zone name, "" when not chosen yet, None when anonymous."""
    prefs = preferences(request)
    return None if prefs is None else prefs.time_zone


def set_time_zone(user, name: str, *, request=None, only_if_unset: bool = False) -> bool:
    """Store the person's zone (validated); returns whether it changed."""
    validate_time_zone(name)
    profile, _created = Profile.objects.get_or_create(user=user)
    if only_if_unset and profile.time_zone:
        return False
    changed = profile.time_zone != name
    if changed:
        profile.time_zone = name
        profile.save(update_fields=["time_zone"])
    if request is not None:
        request._preferences = None
    return changed


def set_language(user, code: str, *, request=None) -> None:
    """Store the person's language ("" = follow the browser)."""
    if code and code not in SUPPORTED:
        raise ValueError(f"unsupported language {code!r}")
    Profile.objects.update_or_create(user=user, defaults={"language": code})
    if request is not None:
        request._preferences = None


class Reader(NamedTuple):
    """How to write to one person while they are away: the language and the time zone to
    write in, and their e-mail address ("" when they have none)."""

    language: str
    zone: str
    email: str = ""


def reader_from(language: str | None, browser: str | None, zone: str | None, email: str) -> Reader:
    """A Reader from the profile's columns (None: no profile) and the account's address:
    their choice, else the language their browser last asked for, else LANGUAGE_CODE; their
    zone, else TIME_ZONE. For a query that reads a person anyway (READERS_SQL, and routing's
    member figures: the same four columns, `pr.language, pr.browser_language, pr.time_zone,
    u.email`)."""
    return Reader(
        language
        if language in SUPPORTED
        else browser
        if browser in SUPPORTED
        else settings.LANGUAGE_CODE,
        zone or settings.TIME_ZONE,
        email or "",
    )


READERS_SQL = """
SELECT u.id, pr.language, pr.browser_language, pr.time_zone, u.email
FROM {users} u
LEFT JOIN oa_user_profile pr ON pr.user_id = u.id
WHERE u.id = ANY(%s)
"""
"""Each person's reader_from columns (the profile's, None without one; the account's
address), by id. Locks nothing. Raw: on every notification's path, where the ORM's query
building cost more than the query. {users}: the user model's table (a setting)."""


@functools.cache
def _readers_sql() -> str:
    users = sql.Identifier(get_user_model()._meta.db_table)
    return sql.SQL(READERS_SQL.strip()).format(users=users).as_string()


def reader_settings(user_ids: Iterable[int]) -> dict[int, Reader]:
    """Each person's Reader (see reader_from; the defaults for an unknown id), in one query
    for any number of people."""
    ids = list(dict.fromkeys(user_ids))
    if not ids:
        return {}
    with prepared_cursor() as cursor:
        cursor.execute(_readers_sql(), [ids])
        rows = cursor.fetchall()
    found = {row[0]: reader_from(*row[1:]) for row in rows}
    default = Reader(settings.LANGUAGE_CODE, settings.TIME_ZONE)
    return {user_id: found.get(user_id, default) for user_id in ids}


class PreferencesMiddleware:
    """After authentication (and after LocaleMiddleware): the person's zone and language are
    the current ones for this request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        prefs = preferences(request)
        if prefs is not None:
            if prefs.time_zone:
                timezone.activate(zoneinfo.ZoneInfo(prefs.time_zone))
            if prefs.language in SUPPORTED:
                activate_language(request, prefs.language)
            else:
                self._remember_browser_language(request, prefs)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()

    @staticmethod
    def _remember_browser_language(request, prefs: Preferences) -> None:
        negotiated = translation.get_language()
        if negotiated not in SUPPORTED or negotiated == prefs.browser_language:
            return
        if not prefs.browser_language and negotiated == settings.LANGUAGE_CODE:
            return  # nothing learnt: the default is what notifications use anyway
        # Written only when it changes: one UPDATE on the first page in a new language.
        updated = Profile.objects.filter(user_id=request.user.pk).update(
            browser_language=negotiated
        )
        if not updated:
            Profile.objects.get_or_create(
                user_id=request.user.pk, defaults={"browser_language": negotiated}
            )
