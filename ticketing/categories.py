"""Categories: the table of what tickets are about (Category), and the one rule of which
category a new ticket may name.

A ticket, an SLA rule and a mailbox keep the category's NAME (the SLA rules and mailboxes
match on it; the ticket API accepts and returns it): a rename therefore rewrites the name in
each of them, in the same transaction as the row (category_update). Its cost is one UPDATE
per holder over the rows holding the old name: on the tickets, a scan of oa_ticket_bill
(nothing indexes `category` alone), rewriting each matching ticket's row — minutes and a
lock on those rows for a category of a million tickets, so a rename is a staff action for a
quiet hour, not an everyday one."""

from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _
from psycopg import sql

from config.errors import InvalidArgument
from handler_groups.models import HandlerGroup

from .models import Category

NAME_MAX_LENGTH = 50

# Every column holding a category's name, by table: a rename rewrites each. ticketing sits
# below sla and mail and names their tables, not their models (tests/toolbox/
# test_fields_categories.py checks each table has the column, so a renamed one fails there).
NAME_HOLDERS: tuple[tuple[str, str], ...] = (
    ("oa_ticket_bill", "category"),
    ("oa_sla_rule", "category"),
    ("mail_mailbox", "category"),
)

RENAME_SQL = sql.SQL("UPDATE {table} SET {column} = %(new)s WHERE {column} = %(old)s")
"""One holder's rows of the old name get the new one. Locks those rows until the rename's
transaction commits (a ticket being worked on waits for it, and it for the ticket)."""


def categories_listed(*, include_inactive: bool = False) -> QuerySet[Category]:
    """The categories in their order; inactive ones too for staff who edit them."""
    categories = Category.objects.select_related("handler_group").order_by("order", "name")
    return categories if include_inactive else categories.filter(active=True)


def category_for_submit(name: str) -> Category | None:
    """The active category a new ticket names (None for no category); 400 "category" for a
    name that is not a category, or one no longer offered."""
    name = (name or "").strip()
    if not name:
        return None
    category = Category.objects.filter(name=name).first()
    if category is None:
        raise InvalidArgument("category", _("No category has this name."))
    if not category.active:
        raise InvalidArgument("category", _("This category is no longer offered."))
    return category


def offered_name(name: str) -> str:
    """`name` if it is an active category's, else "": for what opens tickets on its own
    (mail intake: a mailbox whose category was retired still opens tickets, without it)."""
    name = (name or "").strip()
    if name and Category.objects.filter(name=name, active=True).exists():
        return name
    return ""


def _clean(values: dict, category_id: int | None) -> dict:
    cleaned: dict = {}
    if "name" in values:
        name = (values["name"] or "").strip()
        if not name:
            raise InvalidArgument("name", _("Give the category a name."))
        if len(name) > NAME_MAX_LENGTH:
            raise InvalidArgument("name", _("At most %(n)d characters.") % {"n": NAME_MAX_LENGTH})
        taken = Category.objects.filter(name=name)
        if category_id is not None:
            taken = taken.exclude(pk=category_id)
        if taken.exists():
            raise InvalidArgument("name", _("Another category already has this name."))
        cleaned["name"] = name
    if "translations" in values:
        translations = values["translations"] or {}
        if not isinstance(translations, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and 0 < len(v.strip()) <= NAME_MAX_LENGTH
            for k, v in translations.items()
        ):
            raise InvalidArgument(
                "translations",
                _('The name by language, e.g. {"zh-hans": "打印机"}, each at most 50 characters.'),
            )
        cleaned["translations"] = {k.lower(): v.strip() for k, v in translations.items()}
    if "handler_group_id" in values:
        group_id = values["handler_group_id"]
        if group_id is not None and not HandlerGroup.objects.filter(pk=group_id).exists():
            raise InvalidArgument("handler_group_id", _("No handler group with this id."))
        cleaned["handler_group_id"] = group_id
    for flag in ("active",):
        if flag in values:
            cleaned[flag] = bool(values[flag])
    if "order" in values:
        cleaned["order"] = int(values["order"])
    return cleaned


def category_create(*, values: dict) -> Category:
    """A new category: name (required, unique), translations, handler_group_id, active,
    order."""
    cleaned = _clean({"name": values.get("name", ""), **values}, None)
    with transaction.atomic():
        return Category.objects.create(**cleaned)


def category_update(*, category_id: int, values: dict) -> Category:
    """Change a category; a new name carries over to every ticket, SLA rule and mailbox
    holding the old one, in the same transaction (the module's docstring says what it costs).
    Locks the category's row, then the holders' rows of the old name."""
    cleaned = _clean(values, category_id)
    with transaction.atomic():
        category = Category.objects.select_for_update().get(pk=category_id)
        old = category.name
        for name, value in cleaned.items():
            setattr(category, name, value)
        category.save(update_fields=list(cleaned) or None)
        if category.name != old:
            with connection.cursor() as cursor:
                for table, column in NAME_HOLDERS:
                    cursor.execute(
                        RENAME_SQL.format(
                            table=sql.Identifier(table), column=sql.Identifier(column)
                        ),
                        {"old": old, "new": category.name},
                    )
    return Category.objects.select_related("handler_group").get(pk=category_id)
