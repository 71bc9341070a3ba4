"""Custom fields: TicketField rows describe them, Ticket.fields holds their values.

Values as stored (and as the API takes and returns them): text a string, number a JSON
number, date a "YYYY-MM-DD" string, choice one of the field's choices, multi_choice a list of
them (in the choices' order), user an active user's id, checkbox true or false. A field with
no value is absent from the ticket's `fields` (a null in an edit clears it).

A field deleted by staff (`DELETE /api/ticket-fields/{id}/`) is deactivated, not removed,
when tickets hold values for it: their values stay readable in the history and the export
can still be asked for them; a field no ticket holds goes for good (field_delete)."""

import math
from datetime import date
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import formats, translation
from django.utils.translation import gettext as _

from config.errors import ConflictError, InvalidArgument

from .models import FieldType, ProcessStatus, Ticket, TicketField, TicketStatus
from .transitions import record

FIELD_PARAM_PREFIX = "field."
TEXT_MAX_LENGTH = 2000
FIELDS_MAX = 100


def field_filters_from(params) -> dict[str, str]:
    """The `field.<key>=<value>` query parameters, {key: value} (last value wins)."""
    return {
        name[len(FIELD_PARAM_PREFIX) :]: params.get(name)
        for name in params
        if name.startswith(FIELD_PARAM_PREFIX)
    }


def active_fields() -> list[TicketField]:
    """Every active field, in order, with its categories (for the export's columns and the
    submit form, which shows each category's own)."""
    return list(TicketField.objects.filter(active=True).prefetch_related("categories"))


def fields_for(category: str | None) -> list[TicketField]:
    """The active fields a ticket of this category (a name; "" or None: no category) carries:
    those of all categories and, for a category, its own."""
    applies = Q(categories__isnull=True)
    if category:
        applies |= Q(categories__name=category)
    return list(TicketField.objects.filter(applies, active=True).distinct().order_by("order", "id"))


def _error(key: str, message: str) -> InvalidArgument:
    return InvalidArgument(f"fields.{key}", message)


def _number(raw: Any) -> int | float | None:
    """A JSON number (or its text, from a form) as int when whole, else float; None if it
    is not one."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str):
        try:
            raw = float(raw.strip()) if raw.strip() else None
        except ValueError:
            return None
    if not isinstance(raw, int | float) or not math.isfinite(raw):
        return None
    if isinstance(raw, float) and raw.is_integer() and abs(raw) < 2**53:
        return int(raw)
    return raw


def _date(raw: Any) -> str | None:
    if not isinstance(raw, str) or len(raw.strip()) != 10:
        return None
    try:
        return date.fromisoformat(raw.strip()).isoformat()
    except ValueError:
        return None


def _user_id(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str) and raw.strip().isdigit():
        raw = int(raw.strip())
    return raw if isinstance(raw, int) and raw > 0 else None


def _empty(field: TicketField, value: Any) -> bool:
    if value is None:
        return True
    if field.type == FieldType.CHECKBOX:
        return value is False and field.required  # a required box must be ticked
    return value == "" or value == []


def clean_value(field: TicketField, value: Any) -> Any:
    """The value as stored, or 400 naming `fields.<key>`. `value` is not empty."""
    key = field.key
    kind = field.type
    if kind == FieldType.TEXT:
        if not isinstance(value, str):
            raise _error(key, _("Enter text."))
        if len(value) > TEXT_MAX_LENGTH:
            raise _error(key, _("At most %(n)d characters.") % {"n": TEXT_MAX_LENGTH})
        return value.strip()
    if kind == FieldType.NUMBER:
        number = _number(value)
        if number is None:
            raise _error(key, _("Enter a number."))
        return number
    if kind == FieldType.DATE:
        day = _date(value)
        if day is None:
            raise _error(key, _("Enter a date as YYYY-MM-DD."))
        return day
    if kind == FieldType.CHOICE:
        if not isinstance(value, str) or value not in field.choices:
            raise _error(key, _("Choose one of the values offered."))
        return value
    if kind == FieldType.MULTI_CHOICE:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _error(key, _("Give a list of the values offered."))
        unknown = [v for v in value if v not in field.choices]
        if unknown:
            raise _error(key, _("Not a value offered: %(value)s.") % {"value": ", ".join(unknown)})
        return [choice for choice in field.choices if choice in value]
    if kind == FieldType.USER:
        user_id = _user_id(value)
        if user_id is None:
            raise _error(key, _("Give a user id."))
        if not get_user_model().objects.filter(pk=user_id, is_active=True).exists():
            raise _error(key, _("No active user has this id."))
        return user_id
    if kind == FieldType.CHECKBOX:
        if not isinstance(value, bool):
            raise _error(key, _("Give true or false."))
        return value
    raise _error(key, _("This field's type is unknown."))


def validate(category: str | None, values: Any, partial: bool = False) -> dict:
    """`values` ({key: value}) checked against the active fields of the category (a name):
    the stored values, or 400 naming `fields.<key>` (an unknown key or one not of this
    category, a value its type cannot hold, a choice not offered, a user who does not exist
    or a required field missing or empty) or `fields` (not an object).

    Whole (a new ticket): every required field must have a value; empty values are dropped.
    Partial (an edit): only the keys given; a null (or empty) value clears the field (None in
    the result) unless it is required."""
    if values is None:
        values = {}
    if not isinstance(values, dict) or len(values) > FIELDS_MAX:
        raise InvalidArgument("fields", _("Give the fields as an object, {key: value}."))
    applicable = {field.key: field for field in fields_for(category)}
    cleaned: dict[str, Any] = {}
    for key, value in values.items():
        field = applicable.get(key)
        if field is None:
            if partial and value is None:
                cleaned[key] = None  # clearing a value the category no longer has
                continue
            raise _error(key, _("No field with this key for this category."))
        if _empty(field, value):
            if field.required:
                raise _error(key, _("This field is required."))
            if partial:
                cleaned[key] = None
            continue
        cleaned[key] = clean_value(field, value)
    if not partial:
        for key, field in applicable.items():
            if field.required and key not in cleaned:
                raise _error(key, _("This field is required."))
    return cleaned


def fields_set(*, ticket_id: int, values: dict, actor_id: int | None, now) -> dict:
    """Change some of a ticket's fields (validate(partial=True): a None clears one) and
    record what changed (action "fields", {"changes": {key: [old, new]}}); nothing recorded
    when nothing changed. The ticket's fields afterwards. Locks the ticket's row (so two edits
    of different fields both land); 409 for a closed, rejected or cancelled ticket, whose
    record stays as it was."""
    with transaction.atomic():
        ticket = (
            Ticket.objects.select_for_update()
            .only("id", "category", "fields", "ticket_status", "process_status")
            .get(pk=ticket_id)
        )
        if ticket.ticket_status == TicketStatus.CLOSED or ticket.process_status in (
            ProcessStatus.REJECTED,
            ProcessStatus.CANCELLED,
        ):
            raise ConflictError(_("A closed ticket's fields cannot change."))
        cleaned = validate(ticket.category, values, partial=True)
        current = dict(ticket.fields or {})
        changes: dict[str, list] = {}
        for key, value in cleaned.items():
            old = current.get(key)
            if old == value and (value is not None or key not in current):
                continue
            changes[key] = [old, value]
            if value is None:
                current.pop(key, None)
            else:
                current[key] = value
        if changes:
            Ticket.objects.filter(pk=ticket_id).update(fields=current)
            record(
                ticket_id=ticket_id,
                action="fields",
                actor_id=actor_id,
                now=now,
                detail={"changes": changes},
            )
    return current


def filter_value(field: TicketField, raw: str) -> Any:
    """A query parameter's text as the value stored (multi_choice: the one value, as the
    list it must be in); 400 naming `field.<key>` for what the type cannot hold."""
    key = field.key
    raw = (raw or "").strip()
    refused = InvalidArgument(
        f"{FIELD_PARAM_PREFIX}{key}",
        _("Not a value this field can hold: %(value)s.") % {"value": raw},
    )
    if field.type == FieldType.TEXT:
        return raw
    if field.type == FieldType.NUMBER:
        number = _number(raw)
        if number is None:
            raise refused
        return number
    if field.type == FieldType.DATE:
        day = _date(raw)
        if day is None:
            raise refused
        return day
    if field.type == FieldType.CHOICE:
        if raw not in field.choices:
            raise refused
        return raw
    if field.type == FieldType.MULTI_CHOICE:
        if raw not in field.choices:
            raise refused
        return [raw]
    if field.type == FieldType.USER:
        user_id = _user_id(raw)
        if user_id is None:
            raise refused
        return user_id
    if field.type == FieldType.CHECKBOX:
        if raw.lower() in ("true", "1", "yes"):
            return True
        if raw.lower() in ("false", "0", "no"):
            return False
        raise refused
    raise refused


def filter_fields(qs: QuerySet[Ticket], filters: dict[str, str]) -> QuerySet[Ticket]:
    """Tickets whose fields match each filter, values read by the field's type (400 naming
    `field.<key>` for an unknown key or a value its type cannot hold): one `fields @> {...}`
    for them all, which ticket_fields_idx (GIN, jsonb_path_ops) serves."""
    if not filters:
        return qs
    known = {f.key: f for f in TicketField.objects.filter(key__in=list(filters), active=True)}
    wanted: dict[str, Any] = {}
    for key, raw in filters.items():
        field = known.get(key)
        if field is None:
            raise InvalidArgument(f"{FIELD_PARAM_PREFIX}{key}", _("No active field has this key."))
        wanted[key] = filter_value(field, raw)
    return qs.filter(fields__contains=wanted)


def person_name(user) -> str:
    """Full name, else username (as the ticket page names people)."""
    return (user.get_full_name() or "").strip() or user.get_username()


def people_named(ids) -> dict[int, str]:
    """{user id: name} for the user fields' values (one query)."""
    ids = {i for i in ids if isinstance(i, int)}
    if not ids:
        return {}
    return {user.pk: person_name(user) for user in get_user_model().objects.filter(pk__in=ids)}


def display_value(
    field: TicketField, value: Any, language: str | None, users: dict[int, str] | None = None
) -> str:
    """A value as a reader in `language` reads it: a date in the language's format, a user by
    name (from `users`, people_named's answer, to spare a query per value; else looked up),
    a multiple choice joined by commas, a checkbox Yes or No; "" for no value."""
    if value is None or value == "" or value == []:
        return ""
    with translation.override(language):
        if field.type == FieldType.DATE:
            day = _date(value)
            return (
                formats.date_format(date.fromisoformat(day), "DATE_FORMAT") if day else str(value)
            )
        if field.type == FieldType.USER:
            names = users if users is not None else people_named([value])
            return names.get(value) or _("user #%(id)s") % {"id": value}
        if field.type == FieldType.MULTI_CHOICE and isinstance(value, list):
            return ", ".join(str(v) for v in value)
        if field.type == FieldType.CHECKBOX:
            return str(_("Yes") if value else _("No"))
        if field.type == FieldType.NUMBER:
            return formats.number_format(value)
    return str(value)


def field_create(*, values: dict, category_ids: list[int] | None = None) -> TicketField:
    """A new field (key unique; its values stay under that key, so it cannot change)."""
    cleaned = _clean_field(values, None)
    with transaction.atomic():
        field = TicketField.objects.create(**cleaned)
        if category_ids:
            field.categories.set(category_ids)
    return field


def field_update(
    *, field_id: int, values: dict, category_ids: list[int] | None = None
) -> TicketField:
    """Change a field's label, translations, required, choices, help text, order, active or
    categories (None: unchanged). Tickets keep the values they hold (a choice removed from
    `choices` stays on the tickets that have it, shown as it was)."""
    with transaction.atomic():
        field = TicketField.objects.select_for_update().get(pk=field_id)
        if "key" in values and values["key"] != field.key:
            raise InvalidArgument("key", _("A field's key cannot change: its values are under it."))
        values = {k: v for k, v in values.items() if k != "key"}
        if "type" in values and values["type"] != field.type:
            raise InvalidArgument("type", _("A field's type cannot change."))
        cleaned = _clean_field({"type": field.type, **values}, field)
        cleaned.pop("type", None)
        for name, value in cleaned.items():
            setattr(field, name, value)
        if cleaned:
            field.save(update_fields=list(cleaned))
        if category_ids is not None:
            field.categories.set(category_ids)
    return field


def field_delete(*, field_id: int) -> bool:
    """Delete a field no ticket holds a value for (True); one some ticket holds is
    deactivated instead (False), its values kept."""
    with transaction.atomic():
        field = TicketField.objects.select_for_update().get(pk=field_id)
        held = Ticket.objects.filter(fields__has_key=field.key).exists()
        if held:
            if field.active:
                field.active = False
                field.save(update_fields=["active"])
            return False
        field.delete()
    return True


def _clean_field(values: dict, field: TicketField | None) -> dict:
    cleaned = dict(values)
    if field is None:
        key = (cleaned.get("key") or "").strip()
        if TicketField.objects.filter(key=key).exists():
            raise InvalidArgument("key", _("Another field already has this key."))
        cleaned["key"] = key
    kind = cleaned.get("type")
    if kind not in FieldType.values:
        raise InvalidArgument("type", _("Not a field type."))
    if "choices" in cleaned or field is None:
        choices = cleaned.get("choices") or []
        if kind in (FieldType.CHOICE, FieldType.MULTI_CHOICE):
            if not choices:
                raise InvalidArgument("choices", _("Give the values this field offers."))
            if len(set(choices)) != len(choices):
                raise InvalidArgument("choices", _("Each value once."))
        elif choices:
            raise InvalidArgument("choices", _("Only a choice field offers values."))
        cleaned["choices"] = list(choices)
    if "label_translations" in cleaned:
        translations = cleaned["label_translations"] or {}
        cleaned["label_translations"] = {k.lower(): v.strip() for k, v in translations.items()}
    return cleaned
