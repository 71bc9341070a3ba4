"""Macros: an ordered list of steps the team runs on a ticket with one click, as one
transaction with one history entry.

A step is {"action": <one of ACTIONS>, ...its parameters}:
- reply {"text": str (placeholders as in canned responses), "internal": bool = false}
- pause, resume, complete (no parameters)
- set_priority {"priority": 1-4}
- transfer {"group_id": int} (to the group's pool; its strategy routes it)
- add_tags / remove_tags {"tags": [str, ...]}
- set_field {"key": a custom field's key, "value": its value (null clears it)}

Saving checks the shape (`validate_actions`, 400 naming `actions[<i>].<param>`); applying
(`macro_apply`) checks each step's permission against the ticket before anything runs, then
runs every step through the service that does it alone (the same rules, records and
notifications), inside one `transaction.atomic()`: a step that fails rolls the whole run
back and the answer names it (MacroStepFailed: its index, action and the status it would
have got alone). On success one "macro" record says who applied which macro, and the step
records of the run carry `"macro_run": <its id>` so the history folds them under it."""

from datetime import datetime
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from config.errors import ConflictError, Forbidden, InvalidArgument
from handler_groups.models import HandlerGroup
from routing import reconcile
from sla import services as sla_services
from ticketing import access
from ticketing import fields as ticket_fields
from ticketing import tags as ticket_tags
from ticketing.models import Priority, ReplyType, Ticket, TicketField, TicketRecord
from ticketing.transitions import record
from workflow import services as workflow_services
from workflow.selectors import ticket_for

from .canned import editable_item, require_team, scope_fields, usable_item
from .models import Macro
from .placeholders import check_placeholders, render_text
from .scopes import usable

# action -> its parameters (name -> required)
ACTIONS: dict[str, dict[str, bool]] = {
    "reply": {"text": True, "internal": False},
    "pause": {},
    "resume": {},
    "complete": {},
    "set_priority": {"priority": True},
    "transfer": {"group_id": True},
    "add_tags": {"tags": True},
    "remove_tags": {"tags": True},
    "set_field": {"key": True, "value": True},
}
MAX_STEPS = 20
REPLY_MAX_LENGTH = 20000


class MacroStepFailed(Exception):
    """Step `step` (its index in the macro's actions) could not run: `status` is what it
    would have answered alone (400, 403, 404 or 409), `detail` its message, `errors` the
    400's {field: [messages]}. Nothing of the run is left when this is raised."""

    def __init__(
        self, step: int, action: str, status: int, detail: str, errors: dict | None = None
    ):
        self.step = step
        self.action = action
        self.status = status
        self.detail = detail
        self.errors = errors
        super().__init__(detail)

    def as_dict(self) -> dict:
        body: dict[str, Any] = {"step": self.step, "action": self.action, "detail": self.detail}
        if self.errors:
            body["errors"] = self.errors
        return body


# Validation (on save)


def _invalid(index: int, param: str, message: str) -> InvalidArgument:
    return InvalidArgument(f"actions[{index}].{param}", message)


def _validate_tags(index: int, raw) -> list[str]:
    if not isinstance(raw, list) or not raw:
        raise _invalid(index, "tags", _("Give a list of one or more tags."))
    tags: list[str] = []
    for value in raw:
        if not isinstance(value, str) or not ticket_tags.normalize_tag(value):
            raise _invalid(index, "tags", _("A tag is a non-empty text."))
        tag = ticket_tags.normalize_tag(value)
        if len(tag) > ticket_tags.TAG_MAX_LENGTH:
            raise _invalid(
                index,
                "tags",
                _("A tag has at most %(max)d characters.") % {"max": ticket_tags.TAG_MAX_LENGTH},
            )
        if tag not in tags:
            tags.append(tag)
    if len(tags) > ticket_tags.TAGS_PER_TICKET:
        raise _invalid(
            index,
            "tags",
            _("A ticket has at most %(max)d tags.") % {"max": ticket_tags.TAGS_PER_TICKET},
        )
    return tags


def validate_step(index: int, step) -> dict:
    """One step in its stored shape, or InvalidArgument naming `actions[<index>].<param>`."""
    if not isinstance(step, dict):
        raise _invalid(index, "action", _("Each step is an object with its action."))
    action = step.get("action")
    if action not in ACTIONS:
        raise _invalid(
            index,
            "action",
            _("Not an action a macro can take: use one of %(actions)s.")
            % {"actions": ", ".join(ACTIONS)},
        )
    params = ACTIONS[action]
    for name in step:
        if name != "action" and name not in params:
            raise _invalid(
                index, name, _("The %(action)s step takes no such parameter.") % {"action": action}
            )
    for name, required in params.items():
        if required and name not in step:
            raise _invalid(index, name, _("This step needs it."))
    clean: dict[str, Any] = {"action": action}
    if action == "reply":
        text = step["text"]
        if not isinstance(text, str) or not text.strip():
            raise _invalid(index, "text", _("Give the reply's text."))
        if len(text) > REPLY_MAX_LENGTH:
            raise _invalid(
                index,
                "text",
                _("Ensure this field has no more than %(max)d characters.")
                % {"max": REPLY_MAX_LENGTH},
            )
        check_placeholders(text, f"actions[{index}].text")
        internal = step.get("internal", False)
        if not isinstance(internal, bool):
            raise _invalid(index, "internal", _("Must be true or false."))
        clean.update(text=text, internal=internal)
    elif action == "set_priority":
        priority = step["priority"]
        if isinstance(priority, bool) or priority not in Priority.values:
            raise _invalid(index, "priority", _("A priority is 1 (low) to 4 (urgent)."))
        clean["priority"] = int(priority)
    elif action == "transfer":
        group_id = step["group_id"]
        if isinstance(group_id, bool) or not isinstance(group_id, int):
            raise _invalid(index, "group_id", _("A handler group's id."))
        if not HandlerGroup.objects.filter(pk=group_id).exists():
            raise _invalid(index, "group_id", _("No handler group with this id."))
        clean["group_id"] = group_id
    elif action in ("add_tags", "remove_tags"):
        clean["tags"] = _validate_tags(index, step["tags"])
    elif action == "set_field":
        key = step["key"]
        if (
            not isinstance(key, str)
            or not TicketField.objects.filter(key=key, active=True).exists()
        ):
            raise _invalid(index, "key", _("No active custom field has this key."))
        clean.update(key=key, value=step["value"])
    return clean


def validate_actions(actions) -> list[dict]:
    """The macro's steps in their stored shape; 400 naming `actions` or `actions[<i>].<param>`."""
    if not isinstance(actions, list) or not actions:
        raise InvalidArgument("actions", _("Give a list of one or more steps."))
    if len(actions) > MAX_STEPS:
        raise InvalidArgument(
            "actions", _("A macro has at most %(max)d steps.") % {"max": MAX_STEPS}
        )
    return [validate_step(index, step) for index, step in enumerate(actions)]


# Selectors and services of the macros themselves


def macros_for(user, *, q: str = "") -> Any:
    """The macros `user` may apply, by name; `q` matches the name (any case)."""
    qs = usable(Macro.objects.select_related("group", "owner"), user)
    if q.strip():
        qs = qs.filter(name__icontains=q.strip())
    return qs.order_by("name", "id")


def macro_create(
    *, user, name: str, actions: list, scope: str, group_id: int | None = None
) -> Macro:
    require_team(user)
    steps = validate_actions(actions)
    fields = scope_fields(user, scope=scope, group_id=group_id)
    return Macro.objects.create(name=name, actions=steps, owner=user, **fields)


def macro_update(*, user, macro_id: int, changes: dict) -> Macro:
    with transaction.atomic():
        item = editable_item(Macro, user, macro_id)
        item = Macro.objects.select_for_update().get(pk=item.pk)
        if "actions" in changes:
            item.actions = validate_actions(changes["actions"])
        if "name" in changes:
            item.name = changes["name"]
        if "scope" in changes or "group_id" in changes:
            scope = changes.get("scope", item.scope)
            group_id = changes["group_id"] if "group_id" in changes else item.group_id
            if scope != "group" and "group_id" not in changes:
                group_id = None
            fields = scope_fields(user, scope=scope, group_id=group_id)
            item.scope, item.group = fields["scope"], fields["group"]
            if item.scope == "personal":
                item.owner = user
        item.save()
        return item


def macro_delete(*, user, macro_id: int) -> None:
    editable_item(Macro, user, macro_id).delete()


# Applying


def step_permission(step: dict) -> str:
    """The access action (ticketing.access) a step needs."""
    action = step["action"]
    if action == "reply":
        return "internal_reply" if step.get("internal") else "reply"
    if action in ("add_tags", "remove_tags"):
        return "tag"
    if action == "set_field":
        return "edit_fields"
    return action


def _run_step(step: dict, *, ticket_id: int, user, now: datetime) -> None:
    action = step["action"]
    if action == "reply":
        ticket = Ticket.objects.select_related("creator", "handler_group").get(pk=ticket_id)
        workflow_services.ticket_reply(
            ticket_id=ticket_id,
            author=user,
            reply_type=ReplyType.INTERNAL if step.get("internal") else ReplyType.PUBLIC,
            content=render_text(step["text"], ticket=ticket, agent=user),
            now=now,
        )
    elif action == "pause":
        sla_services.sla_pause(ticket_id=ticket_id, user=user, now=now)
    elif action == "resume":
        sla_services.sla_resume(ticket_id=ticket_id, user=user, now=now)
    elif action == "complete":
        workflow_services.ticket_complete(ticket_id=ticket_id, handler=user, now=now)
    elif action == "set_priority":
        workflow_services.ticket_set_priority(
            ticket_id=ticket_id, priority=step["priority"], user=user, now=now
        )
    elif action == "transfer":
        workflow_services.ticket_transfer(
            ticket_id=ticket_id, user=user, handler_group_id=step["group_id"], now=now
        )
    elif action == "add_tags":
        ticket_tags.tags_add(ticket_id=ticket_id, tags=step["tags"], actor_id=user.pk, now=now)
    elif action == "remove_tags":
        ticket_tags.tags_remove(ticket_id=ticket_id, tags=step["tags"], actor_id=user.pk, now=now)
    elif action == "set_field":
        ticket_fields.fields_set(
            ticket_id=ticket_id, values={step["key"]: step["value"]}, actor_id=user.pk, now=now
        )
    else:  # (validated on save; a row edited by hand)
        raise InvalidArgument("action", _("Not an action a macro can take."))


def _failure(index: int, action: str, exc: Exception) -> MacroStepFailed:
    if isinstance(exc, InvalidArgument):
        return MacroStepFailed(index, action, 400, exc.message, {exc.field: [exc.message]})
    if isinstance(exc, Forbidden):
        return MacroStepFailed(index, action, 403, str(exc))
    if isinstance(exc, ConflictError):
        return MacroStepFailed(index, action, 409, str(exc))
    return MacroStepFailed(index, action, 404, _("Something this step needs no longer exists."))


MARK_RUN_SQL = """
UPDATE oa_ticket_record
   SET detail = detail || jsonb_build_object('macro_run', %s::bigint)
 WHERE ticket_id = %s AND id > %s AND id < %s
"""
"""Marks the records a macro's steps wrote (the ticket's records after the one current
before the run and before the run's own "macro" record) as part of that run, for the
history to fold them under it. Locks only those rows (record_ticket_idx finds them)."""


def macro_apply(*, ticket_id: int, macro_id: int, user, now: datetime | None = None) -> Ticket:
    """Run the macro's steps on the ticket as one transaction; the ticket as it is after.

    Ticket not visible to `user`: Ticket.DoesNotExist (404); macro they may not use:
    Macro.DoesNotExist (404); not on the ticket's team, or a step they may not take:
    Forbidden / MacroStepFailed 403 (checked before anything runs); a step the ticket's
    state refuses (409), whose input it refuses (400) or whose target is gone (404):
    MacroStepFailed, after the whole run was rolled back.

    Routing state in Redis is not transactional: a transfer step whose group's strategy
    picked an agent (longest idle) took them from the Redis pool at once. When a later step
    fails, the groups transferred to are reconciled from PostgreSQL after the rollback
    (routing.reconcile), so the agent is routable again."""
    now = now or timezone.now()
    ticket = ticket_for(user, ticket_id)
    macro = usable_item(Macro, user, macro_id)
    assert isinstance(macro, Macro)
    audience = access.audience_for(user)
    if not access.can_work_on(user, ticket, audience):
        raise Forbidden(_("Only the ticket's team may apply macros to it."))
    steps = list(macro.actions or [])
    if not steps:
        raise ConflictError(_("This macro has no steps."))
    for index, step in enumerate(steps):
        action = step.get("action", "?") if isinstance(step, dict) else "?"
        if action not in ACTIONS:
            raise MacroStepFailed(index, str(action), 400, _("Not an action a macro can take."))
        permission = step_permission(step)
        if not access.may(permission, user, ticket, audience):
            raise MacroStepFailed(index, action, 403, access.denied(permission))
    transferred: list[int] = []
    try:
        with transaction.atomic():
            _lock_groups(ticket, steps)
            before = (
                TicketRecord.objects.filter(ticket_id=ticket_id).aggregate(last=Max("id"))["last"]
                or 0
            )
            for index, step in enumerate(steps):
                if step["action"] == "transfer":
                    transferred.append(step["group_id"])
                try:
                    _run_step(step, ticket_id=ticket_id, user=user, now=now)
                except (InvalidArgument, Forbidden, ConflictError, ObjectDoesNotExist) as exc:
                    raise _failure(index, step["action"], exc) from exc
            run = record(
                ticket_id=ticket_id,
                action="macro",
                actor_id=user.pk,
                now=now,
                detail={
                    "macro": macro.name,
                    "macro_id": macro.pk,
                    "steps": [{k: v for k, v in step.items() if k != "text"} for step in steps],
                },
            )
            with connection.cursor() as cursor:
                cursor.execute(MARK_RUN_SQL, [run.pk, ticket_id, before, run.pk])
    except Exception:
        # (any failure: the run is rolled back, Redis is not)
        _reconcile_groups(transferred, now)
        raise
    return Ticket.objects.select_related("handler_group").get(pk=ticket_id)


def _lock_groups(ticket: Ticket, steps: list[dict]) -> None:
    """A run with a transfer locks the groups it may touch first (the ticket's and every
    target, by id): the transfer locks group rows before the ticket's, and an earlier step
    (tags, fields, a reply) would otherwise hold the ticket's row before the group's."""
    targets = {step["group_id"] for step in steps if step["action"] == "transfer"}
    if not targets:
        return
    ids = sorted(targets | ({ticket.handler_group_id} if ticket.handler_group_id else set()))
    list(
        HandlerGroup.objects.select_for_update().filter(pk__in=ids).order_by("pk").values_list("pk")
    )


def _reconcile_groups(group_ids: list[int], now: datetime) -> None:
    """After a rolled back run: the groups a transfer step routed in, rebuilt in Redis from
    PostgreSQL (best effort: Redis down means the periodic reconciliation does it)."""
    for group in HandlerGroup.objects.filter(pk__in=group_ids):
        try:
            reconcile.reconcile_group(group=group, now=now)
        except Exception:  # noqa: BLE001 — routing treats Redis failures as "no pick"
            pass
