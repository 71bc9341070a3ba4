"""Agent presence: heartbeats, states, the offline sweep and wrap-up (the reconciliation that
rebuilds Redis from PostgreSQL is reconcile.py).

Redis writes follow PostgreSQL's and respect one order: becoming routable writes the state,
then adds the agent to the idle pools; leaving routing removes from the pools first."""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from config.errors import Forbidden, InvalidArgument
from handler_groups.models import GroupStatus, HandlerGroup
from handler_groups.selectors import groups_of_member

from . import idle_pool
from .drain import drain_now
from .models import AgentPresence, PresenceSpan, PresenceState

logger = logging.getLogger(__name__)

SETTABLE_STATES = {s.value for s in PresenceState}


def presence_timeout() -> timedelta:
    return timedelta(seconds=getattr(settings, "PRESENCE_TIMEOUT_SECONDS", 60))


def _groups(user_id: int) -> list[HandlerGroup]:
    return list(groups_of_member(user_id).filter(status=GroupStatus.ENABLED))


def _lock(user_id: int, now: datetime) -> AgentPresence:
    AgentPresence.objects.get_or_create(pk=user_id, defaults={"state_since": now})
    return AgentPresence.objects.select_for_update().get(pk=user_id)


def _become_available(presence: AgentPresence, now: datetime, *, fresh_login: bool) -> None:
    """The state in PostgreSQL, then Redis (state, then pool), then the agent's groups drain
    their waiting tickets — all within the caller's transaction (the presence row is locked;
    draining takes group rows, then waiting tickets with SKIP LOCKED). Should the
    transaction roll back, Redis says "available" too early, which is harmless: every pick
    is restricted to members PostgreSQL finds eligible, and reconciliation repairs Redis."""
    _record_span(presence.pk, PresenceState.AVAILABLE, now)
    presence.state = PresenceState.AVAILABLE
    presence.state_since = now
    presence.wrap_up_until = None
    if fresh_login:
        presence.online_since = now
    presence.idle_since = now
    presence.save()
    user_id = presence.pk
    groups = _groups(user_id)
    for group in groups:
        # A newly online agent's idle time starts after the warm-up.
        warmup = group.warmup_seconds if fresh_login else 0
        idle_pool.make_routable([group.pk], user_id, (now + timedelta(seconds=warmup)).timestamp())
    _drain([g.pk for g in groups], now)


def _leave_routing(presence: AgentPresence, state: str, now: datetime) -> None:
    """Out of the pools first (now, before the state is committed), then the state."""
    groups = _groups(presence.pk)
    idle_pool.make_unroutable([g.pk for g in groups], presence.pk, state)
    if presence.state != state:
        _record_span(presence.pk, state, now)
    presence.state = state
    presence.state_since = now
    presence.save()


_SPAN_SQL = f"""
WITH closed AS (
    UPDATE {PresenceSpan._meta.db_table} SET ended = %(now)s
     WHERE user_id = %(user)s AND ended IS NULL
    RETURNING 1
)
INSERT INTO {PresenceSpan._meta.db_table} (user_id, state, started, ended)
SELECT %(user)s, %(state)s, %(now)s, NULL FROM (SELECT count(*) FROM closed) AS done"""


def _record_span(user_id: int, state: str, now: datetime) -> None:
    """Presence history (PresenceSpan, which staffing reads): close the agent's open span and
    open one in the new state — one statement, in the caller's transaction, under the
    presence row's lock. The INSERT reads the UPDATE's result so the old span is closed
    before the new one is opened (one open span per agent is a unique constraint)."""
    with connection.cursor() as cursor:
        cursor.execute(_SPAN_SQL, {"user": user_id, "state": str(state), "now": now})


def _require_member(user) -> None:
    """Only members of a handler group have presence; anyone else is refused (Forbidden) and
    no presence row is created for them."""
    if not groups_of_member(user.pk).exists():
        raise Forbidden(_("Only members of a handler group have presence."))


def heartbeat(*, user, now: datetime | None = None, come_online: bool = True) -> AgentPresence:
    """The agent's client calls this every 15–30 s; an offline agent becomes available —
    unless `come_online` is false (the console's tabs: an agent who chose Offline in one tab,
    logged out elsewhere or was swept offline stays offline until they choose again)."""
    _require_member(user)
    now = now or timezone.now()
    with transaction.atomic():
        presence = _lock(user.pk, now)
        presence.last_heartbeat = now
        if presence.state == PresenceState.OFFLINE and come_online:
            _become_available(presence, now, fresh_login=True)
        else:
            presence.save(update_fields=["last_heartbeat"])
        return presence


def set_state(*, user, state: str, now: datetime | None = None) -> AgentPresence:
    if state not in SETTABLE_STATES:
        raise InvalidArgument(
            "state", _("Must be one of %(states)s.") % {"states": sorted(SETTABLE_STATES)}
        )
    _require_member(user)
    now = now or timezone.now()
    with transaction.atomic():
        presence = _lock(user.pk, now)
        if state != PresenceState.OFFLINE:
            presence.last_heartbeat = now
        if state == PresenceState.AVAILABLE:
            if presence.state != PresenceState.AVAILABLE:
                _become_available(
                    presence, now, fresh_login=presence.state == PresenceState.OFFLINE
                )
            else:
                presence.save(update_fields=["last_heartbeat"])
            return presence
        if state == PresenceState.WRAP_UP:
            presence.wrap_up_until = now + timedelta(seconds=_wrap_up_seconds(user.pk))
        _leave_routing(presence, state, now)
        if state == PresenceState.OFFLINE:
            presence.online_since = None
            presence.save(update_fields=["online_since"])
        return presence


def logged_out(*, user) -> None:
    """Logging out (the console's session or an API token: django.contrib.auth's
    user_logged_out, which knox sends too) takes a member of a handler group out of
    routing: offline. Anyone else has no presence and nothing happens."""
    if user is None or not groups_of_member(user.pk).exists():
        return
    set_state(user=user, state=PresenceState.OFFLINE)


def on_user_logged_out(sender, request=None, user=None, **kwargs) -> None:
    """The user_logged_out receiver (connected in apps.py)."""
    logged_out(user=user)


def _wrap_up_seconds(user_id: int) -> int:
    seconds = [g.wrap_up_seconds for g in _groups(user_id) if g.requires_presence]
    return max(seconds, default=0)


def ticket_completed(*, user_id: int, now: datetime) -> None:
    """After-work: an available agent in a presence group with a wrap-up time goes to
    wrap_up; otherwise their freed capacity may take a waiting ticket at once."""
    seconds = _wrap_up_seconds(user_id)
    presence = AgentPresence.objects.select_for_update().filter(pk=user_id).first()
    if seconds and presence is not None and presence.state == PresenceState.AVAILABLE:
        presence.wrap_up_until = now + timedelta(seconds=seconds)
        _leave_routing(presence, PresenceState.WRAP_UP, now)
        return
    groups = [g.pk for g in _groups(user_id)]
    # After commit: the completing transaction holds the ticket row, and draining locks group
    # rows, which everything else locks before tickets.
    transaction.on_commit(lambda: _drain(groups, None))


def presence_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Periodic: agents without a heartbeat for presence_timeout go offline (they keep their
    tickets; only routing changes); wrap-ups that have run out end (available again)."""
    now = now or timezone.now()
    went_offline = ended_wrap_up = 0
    stale = AgentPresence.objects.exclude(state=PresenceState.OFFLINE).filter(
        last_heartbeat__lt=now - presence_timeout()
    )
    for user_id in list(stale.values_list("pk", flat=True)[:1000]):
        with transaction.atomic():
            presence = (
                AgentPresence.objects.select_for_update(skip_locked=True)
                .filter(pk=user_id, last_heartbeat__lt=now - presence_timeout())
                .exclude(state=PresenceState.OFFLINE)
                .first()
            )
            if presence is None:
                continue
            _leave_routing(presence, PresenceState.OFFLINE, now)
            presence.online_since = None
            presence.save(update_fields=["online_since"])
            went_offline += 1
    expired = AgentPresence.objects.filter(
        state=PresenceState.WRAP_UP, wrap_up_until__lte=now
    ).values_list("pk", flat=True)
    for user_id in list(expired[:1000]):
        with transaction.atomic():
            presence = (
                AgentPresence.objects.select_for_update(skip_locked=True)
                .filter(pk=user_id, state=PresenceState.WRAP_UP, wrap_up_until__lte=now)
                .first()
            )
            if presence is None:
                continue
            _become_available(presence, now, fresh_login=False)
            ended_wrap_up += 1
    return {"offline": went_offline, "wrap_up_ended": ended_wrap_up}


def _drain(group_ids: list[int], now: datetime | None) -> None:
    drain_now(group_ids, now=now)
