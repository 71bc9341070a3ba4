"""Bulk actions: one action on up to BULK_MAX_IDS tickets, each ticket checked and changed on
its own (its own transaction, its own permission check), never all or nothing: the answer
has one result per id, `ok`, or the status and detail that ticket alone would have got.

    transfer      {"group_id"}        access "transfer" (leader or staff), to the group's pool
    add_tags      {"tags": [...]}     access "tag" (the team)
    remove_tags   {"tags": [...]}     access "tag"
    set_priority  {"priority": 1-4}   access "set_priority" (the team)
    close         {}                  access "close" (the applicant or staff)
    apply_macro   {"macro_id"}        the macro's own checks (toolbox.macros.macro_apply)

A ticket the caller may not see is a 404 in its result, as it would be alone."""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from django.core.exceptions import ObjectDoesNotExist
from django.utils import timezone
from django.utils.translation import gettext as _

from config.errors import ConflictError, Forbidden, InvalidArgument
from handler_groups.models import HandlerGroup
from ticketing import access
from ticketing import tags as ticket_tags
from ticketing.models import Priority
from workflow import services as ticket_services
from workflow.selectors import ticket_for

from . import macros
from .models import Macro
from .scopes import usable

BULK_MAX_IDS = 200
BULK_ACTIONS = ("transfer", "add_tags", "remove_tags", "set_priority", "close", "apply_macro")


@dataclass(frozen=True)
class BulkParams:
    group_id: int | None = None
    tags: list[str] = field(default_factory=list)
    priority: int | None = None
    macro_id: int | None = None


def check_params(user, action: str, params: BulkParams) -> None:
    """What the action needs, checked once before any ticket (400 naming the parameter)."""
    if action not in BULK_ACTIONS:
        raise InvalidArgument("action", _("Not a bulk action."))
    if action == "transfer":
        if params.group_id is None:
            raise InvalidArgument("group_id", _("Give the group to transfer to."))
        if not HandlerGroup.objects.filter(pk=params.group_id).exists():
            raise InvalidArgument("group_id", _("No handler group with this id."))
    elif action in ("add_tags", "remove_tags"):
        if not params.tags:
            raise InvalidArgument("tags", _("Give at least one tag."))
        ticket_tags.normalized_tags(params.tags)  # a bad tag: 400 "tags" before any ticket
    elif action == "set_priority":
        if params.priority not in Priority.values:
            raise InvalidArgument("priority", _("Not a priority."))
    elif action == "apply_macro":
        if params.macro_id is None:
            raise InvalidArgument("macro_id", _("Give the macro to apply."))
        if not usable(Macro.objects.filter(pk=params.macro_id), user).exists():
            raise InvalidArgument("macro_id", _("No macro you may use has this id."))


def _transfer(user, ticket_id: int, params: BulkParams, now: datetime) -> None:
    access.require("transfer", user, ticket_for(user, ticket_id))
    ticket_services.ticket_transfer(
        ticket_id=ticket_id, user=user, handler_group_id=params.group_id, now=now
    )


def _add_tags(user, ticket_id: int, params: BulkParams, now: datetime) -> None:
    access.require("tag", user, ticket_for(user, ticket_id))
    ticket_tags.tags_add(ticket_id=ticket_id, tags=params.tags, actor_id=user.pk, now=now)


def _remove_tags(user, ticket_id: int, params: BulkParams, now: datetime) -> None:
    access.require("tag", user, ticket_for(user, ticket_id))
    ticket_tags.tags_remove(ticket_id=ticket_id, tags=params.tags, actor_id=user.pk, now=now)


def _set_priority(user, ticket_id: int, params: BulkParams, now: datetime) -> None:
    access.require("set_priority", user, ticket_for(user, ticket_id))
    assert params.priority is not None  # check_params
    ticket_services.ticket_set_priority(
        ticket_id=ticket_id, priority=params.priority, user=user, now=now
    )


def _close(user, ticket_id: int, params: BulkParams, now: datetime) -> None:
    access.require("close", user, ticket_for(user, ticket_id))
    ticket_services.ticket_close(ticket_id=ticket_id, user=user, now=now)


def _apply_macro(user, ticket_id: int, params: BulkParams, now: datetime) -> None:
    assert params.macro_id is not None  # check_params
    macros.macro_apply(ticket_id=ticket_id, macro_id=params.macro_id, user=user, now=now)


RUNNERS: dict[str, Callable[..., None]] = {
    "transfer": _transfer,
    "add_tags": _add_tags,
    "remove_tags": _remove_tags,
    "set_priority": _set_priority,
    "close": _close,
    "apply_macro": _apply_macro,
}


def _failure(ticket_id: int, code: int, detail) -> dict:
    return {"id": ticket_id, "ok": False, "status": code, "detail": detail}


def run_one(user, action: str, ticket_id: int, params: BulkParams, now: datetime) -> dict:
    """One ticket's result. Each runner checks the caller's right and calls one service,
    which owns its transaction: what fails leaves that ticket as it was."""
    try:
        RUNNERS[action](user, ticket_id, params, now)
    except macros.MacroStepFailed as failed:
        return _failure(ticket_id, failed.status, failed.as_dict())
    except InvalidArgument as error:
        return _failure(ticket_id, 400, {error.field: [error.message]})
    except Forbidden as error:
        return _failure(ticket_id, 403, str(error))
    except ConflictError as error:
        detail = {"detail": str(error), **error.extra} if error.extra else str(error)
        return _failure(ticket_id, 409, detail)
    except ObjectDoesNotExist:
        return _failure(ticket_id, 404, _("No such ticket."))
    return {"id": ticket_id, "ok": True}


def bulk_apply(
    *,
    user,
    ids: list[int],
    action: str,
    params: BulkParams,
    now: datetime | None = None,
) -> list[dict]:
    """Run `action` on each ticket of `ids` (at most BULK_MAX_IDS, repeats once), in the
    order given, each in its own transaction (its service's): one result per id,
    `{"id", "ok": True}` or `{"id", "ok": False, "status": 400|403|404|409, "detail"}`. The
    parameters are checked first (400 naming one, nothing done)."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        raise InvalidArgument("ids", _("Give at least one ticket."))
    if len(ids) > BULK_MAX_IDS:
        raise InvalidArgument(
            "ids", _("At most %(max)d tickets at a time.") % {"max": BULK_MAX_IDS}
        )
    check_params(user, action, params)
    now = now or timezone.now()
    return [run_one(user, action, ticket_id, params, now) for ticket_id in ids]
