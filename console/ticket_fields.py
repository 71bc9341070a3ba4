"""Custom fields on the pages: the ticket page's Fields card (each value in the reader's
language: labels translated, a user by name, a date formatted) with the team's edit form
(posted to console/urls_fields.py's view), and the form inputs the submit form shares
(one per field, `cf_<key>`, read back into the values the API takes). ticketing.fields
decides what is valid; a page only translates its inputs."""

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.http import HttpRequest
from django.utils import translation
from django.utils.translation import gettext as _

from config.errors import InvalidArgument
from ticketing import access
from ticketing import fields as ticket_fields
from ticketing.access import Audience
from ticketing.models import Category, FieldType, Ticket, TicketField

PREFIX = "cf_"


def input_name(field: TicketField) -> str:
    return f"{PREFIX}{field.key}"


def form_field(field: TicketField, language: str | None) -> forms.Field:
    """The input of one custom field. Never `required` in HTML: the submit form hides the
    other categories' fields, and the service says what is missing (400 by the field)."""
    label = field.label_in(language)
    common: dict[str, Any] = {"label": label, "required": False, "help_text": field.help_text}
    kind = field.type
    if kind == FieldType.NUMBER:
        return forms.CharField(
            widget=forms.NumberInput(attrs={"step": "any", "inputmode": "decimal"}), **common
        )
    if kind == FieldType.DATE:
        return forms.CharField(widget=forms.DateInput(attrs={"type": "date"}), **common)
    if kind == FieldType.CHOICE:
        return forms.ChoiceField(choices=[("", "—"), *((c, c) for c in field.choices)], **common)
    if kind == FieldType.MULTI_CHOICE:
        return forms.MultipleChoiceField(
            choices=[(c, c) for c in field.choices], widget=forms.CheckboxSelectMultiple, **common
        )
    if kind == FieldType.USER:
        return forms.CharField(
            max_length=150,
            widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
            **{**common, "help_text": field.help_text or _("By username.")},
        )
    if kind == FieldType.CHECKBOX:
        return forms.BooleanField(**common)
    return forms.CharField(
        max_length=ticket_fields.TEXT_MAX_LENGTH, widget=forms.TextInput, **common
    )


def add_inputs(form: forms.Form, fields: list[TicketField], language: str | None) -> None:
    for field in fields:
        form.fields[input_name(field)] = form_field(field, language)


def initial_value(field: TicketField, value: Any) -> Any:
    if field.type == FieldType.USER and isinstance(value, int):
        user = get_user_model().objects.filter(pk=value).first()
        return user.get_username() if user else ""
    return value


def values_from(form: forms.Form, fields: list[TicketField]) -> dict:
    """What the inputs of these fields hold, as the API takes it (an empty input: None); a
    username that names nobody active is a 400 naming `fields.<key>`."""
    values: dict[str, Any] = {}
    for field in fields:
        raw = form.cleaned_data.get(input_name(field))
        if field.type == FieldType.CHECKBOX:
            values[field.key] = True if raw else None
        elif field.type == FieldType.MULTI_CHOICE:
            values[field.key] = list(raw) if raw else None
        elif raw in (None, ""):
            values[field.key] = None
        elif field.type == FieldType.USER:
            username = str(raw).strip().lstrip("@")
            person = get_user_model().objects.filter(username=username, is_active=True).first()
            if person is None:
                raise InvalidArgument(
                    f"fields.{field.key}", _("No active person has this username.")
                )
            values[field.key] = person.pk
        else:
            values[field.key] = raw
    return values


def error_input(error_field: str) -> str | None:
    """The input a service's `fields.<key>` error belongs by."""
    if error_field.startswith("fields."):
        return PREFIX + error_field[len("fields.") :]
    return None


class TicketFieldsForm(forms.Form):
    """The team's edit of a ticket's fields: every field of its category at once."""

    def __init__(self, *args, fields: list[TicketField], language: str | None, **kwargs):
        kwargs.setdefault("auto_id", "ticket-field-%s")  # (ids unique on the ticket page)
        super().__init__(*args, **kwargs)
        self.custom = fields
        add_inputs(self, fields, language)


def panel(request: HttpRequest, ticket: Ticket, audience: Audience) -> dict:
    """The Fields card: the ticket's values (those of its category's fields, and any it
    still holds of fields since removed from it), and the edit form for the team."""
    language = translation.get_language()
    applicable = ticket_fields.fields_for(ticket.category)
    held = ticket.fields or {}
    known = {field.key: field for field in applicable}
    stale = [k for k in held if k not in known]
    if stale:
        known.update({f.key: f for f in TicketField.objects.filter(key__in=stale)})
    users = ticket_fields.people_named(
        [v for k, v in held.items() if k in known and known[k].type == FieldType.USER]
    )
    rows = []
    for field in [*applicable, *(known[k] for k in stale if k in known)]:
        value = held.get(field.key)
        if value is None and field not in applicable:
            continue
        rows.append(
            {
                "key": field.key,
                "label": field.label_in(language),
                "type": field.type,
                "value": ticket_fields.display_value(field, value, language, users),
                "empty": value is None,
            }
        )
    editable = access.may("edit_fields", request.user, ticket, audience) and bool(applicable)
    category = None
    if ticket.category:
        row = Category.objects.filter(name=ticket.category).first()
        category = row.label(language) if row else ticket.category
    if not rows and not editable and category is None:
        return {}
    form = None
    if editable:
        form = getattr(request, "_fields_form", None) or TicketFieldsForm(
            fields=applicable,
            language=language,
            initial={input_name(f): initial_value(f, held.get(f.key)) for f in applicable},
        )
    return {"fields_card": {"category": category, "rows": rows, "form": form}}
