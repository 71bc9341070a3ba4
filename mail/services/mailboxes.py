"""Creating, changing and removing mailboxes: the one place their rules are checked, for the
API (mail/apis.py) and admin (mail/admin.py) alike.

A mailbox that has received or sent mail is not deleted (409): its messages are how a reply
finds its ticket and what the ticket's answers go out From, and its failed mail waits for a
retry through it. Deactivate it instead (`active=False`): it stops fetching, the pipe and the
HTTP endpoint refuse it, and its history stays whole. A mailbox that never saw a message
(a typo, a test) is deleted outright."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from config.errors import ConflictError, InvalidArgument
from handler_groups.models import GroupStatus, HandlerGroup
from mail.models import (
    DEFAULT_MAX_MESSAGE_BYTES,
    FailedMail,
    Mailbox,
    MailMessage,
    UnknownSenders,
)
from ticketing import categories
from ticketing.models import Priority

# The settings a mailbox is made of (its secrets by their plain names; the model stores them
# encrypted): the one list the service, the API serializer and the admin form follow.
MAILBOX_FIELDS = (
    "address",
    "name",
    "handler_group_id",
    "priority",
    "category",
    "unknown_senders",
    "imap_host",
    "imap_port",
    "imap_tls",
    "imap_user",
    "imap_password",
    "inbound_secret",
    "imap_folder",
    "max_message_bytes",
    "active",
)
SECRET_FIELDS = ("imap_password", "inbound_secret")
# A secret already stored and left as it is (mailbox_update without it).
KEPT: Any = object()

# Bounds of a mailbox's message size limit: below a few KiB not even the headers of an
# ordinary message fit; above 100 MiB a message is kept whole in the database (failed mail)
# and held in a web process's memory (the HTTP endpoint), which no mail system sends anyway.
MIN_MESSAGE_BYTES = 4 * 1024
MAX_MESSAGE_BYTES = 100 * 1024 * 1024
MAX_SECRET_LENGTH = 1000


def mailbox_check(*, mailbox_id: int | None, values: dict[str, Any]) -> dict[str, Any]:
    """The values a mailbox would have, checked (InvalidArgument naming the first field that
    is wrong) and normalised (the address lower-cased: mail is matched to its mailbox by
    address, case-insensitively). `values` holds every field of MAILBOX_FIELDS. The admin
    form calls it in its clean(), the services before they write."""
    values = dict(values)
    address = (values.get("address") or "").strip().lower()
    try:
        validate_email(address)
    except ValidationError:
        raise InvalidArgument("address", _("Enter a valid e-mail address.")) from None
    if len(address) > 254:
        raise InvalidArgument("address", _("At most 254 characters."))
    taken = Mailbox.objects.filter(address__iexact=address)
    if mailbox_id is not None:
        taken = taken.exclude(pk=mailbox_id)
    if taken.exists():
        raise InvalidArgument("address", _("Another mailbox already has this address."))
    values["address"] = address

    values["name"] = (values.get("name") or "").strip()
    if not values["name"]:
        raise InvalidArgument("name", _("Give the display name people see (e.g. IT support)."))
    if len(values["name"]) > 100:
        raise InvalidArgument("name", _("At most 100 characters."))
    values["category"] = (values.get("category") or "").strip()
    if len(values["category"]) > 50:
        raise InvalidArgument("category", _("At most 50 characters."))
    # The tickets it opens name it: an active category (400 "category" otherwise), unless
    # the mailbox has it already (retiring a category must not stop its other edits).
    kept = (
        mailbox_id is not None
        and Mailbox.objects.filter(pk=mailbox_id, category=values["category"]).exists()
    )
    if not kept:
        categories.category_for_submit(values["category"])

    if values["priority"] not in Priority.values:
        raise InvalidArgument(
            "priority",
            _("Priority is one of %(values)s.") % {"values": ", ".join(map(str, Priority.values))},
        )
    if values["unknown_senders"] not in UnknownSenders.values:
        raise InvalidArgument(
            "unknown_senders",
            _("One of %(values)s.") % {"values": ", ".join(UnknownSenders.values)},
        )
    _check_group(mailbox_id=mailbox_id, group_id=values.get("handler_group_id"))

    port = values["imap_port"]
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise InvalidArgument("imap_port", _("A port is a number from 1 to 65535."))
    values["imap_host"] = (values.get("imap_host") or "").strip()
    values["imap_user"] = (values.get("imap_user") or "").strip()
    values["imap_folder"] = (values.get("imap_folder") or "").strip()
    for field in ("imap_host", "imap_user", "imap_folder"):
        if len(values[field]) > 255:
            raise InvalidArgument(field, _("At most 255 characters."))
    if not values["imap_folder"]:
        raise InvalidArgument("imap_folder", _("Name the folder to read (usually INBOX)."))
    for field in SECRET_FIELDS:
        secret = values.get(field) or ""
        if secret is not KEPT and len(secret) > MAX_SECRET_LENGTH:
            raise InvalidArgument(field, _("At most %(n)d characters.") % {"n": MAX_SECRET_LENGTH})
    if values["imap_host"]:
        # A host alone would fail at every fetch: say so now, on the field that is missing.
        if not values["imap_user"]:
            raise InvalidArgument("imap_user", _("An IMAP host needs the user to sign in as."))
        if not values.get("imap_password"):
            raise InvalidArgument("imap_password", _("An IMAP host needs the password."))

    size = values["max_message_bytes"]
    if isinstance(size, bool) or not isinstance(size, int):
        raise InvalidArgument("max_message_bytes", _("A whole number of bytes."))
    if not MIN_MESSAGE_BYTES <= size <= MAX_MESSAGE_BYTES:
        raise InvalidArgument(
            "max_message_bytes",
            _("From %(low)d to %(high)d bytes.")
            % {"low": MIN_MESSAGE_BYTES, "high": MAX_MESSAGE_BYTES},
        )
    values["active"] = bool(values["active"])
    values["imap_tls"] = bool(values["imap_tls"])
    return values


def _check_group(*, mailbox_id: int | None, group_id: int | None) -> None:
    """New tickets go to an enabled group; a mailbox that already names a group since
    disabled keeps it until it is changed (refusing every other change would not help)."""
    if group_id is None:
        return
    if (
        mailbox_id is not None
        and Mailbox.objects.filter(pk=mailbox_id, handler_group_id=group_id).exists()
    ):
        return
    status = HandlerGroup.objects.filter(pk=group_id).values_list("status", flat=True).first()
    if status is None:
        raise InvalidArgument(
            "handler_group_id", _("No handler group with id %(id)s.") % {"id": group_id}
        )
    if status == GroupStatus.DISABLED:
        raise InvalidArgument(
            "handler_group_id",
            _("Handler group %(id)s is disabled: its tickets would wait for no one.")
            % {"id": group_id},
        )


def _current(mailbox: Mailbox) -> dict[str, Any]:
    """The mailbox's settings, its stored secrets as KEPT: not decrypted (one stored under a
    key since rotated away stays as it is) and not written back."""
    values = {
        field: getattr(mailbox, field) for field in MAILBOX_FIELDS if field not in SECRET_FIELDS
    }
    for field in SECRET_FIELDS:
        values[field] = KEPT if getattr(mailbox, f"{field}_encrypted") else ""
    return values


def _write(mailbox: Mailbox, values: dict[str, Any]) -> Mailbox:
    for field in MAILBOX_FIELDS:
        if values[field] is not KEPT:
            setattr(mailbox, field, values[field])  # the secrets' setters encrypt
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction survives a refusal
            mailbox.save()
    except IntegrityError:
        # Another request took the address between the check and the insert.
        raise InvalidArgument("address", _("Another mailbox already has this address.")) from None
    return mailbox


def mailbox_create(
    *,
    address: str,
    name: str,
    handler_group_id: int | None = None,
    priority: int = Priority.MEDIUM,
    category: str = "",
    unknown_senders: str = UnknownSenders.CREATE_APPLICANT,
    imap_host: str = "",
    imap_port: int = 993,
    imap_tls: bool = True,
    imap_user: str = "",
    imap_password: str = "",
    inbound_secret: str = "",
    imap_folder: str = "INBOX",
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    active: bool = True,
) -> Mailbox:
    """A new mailbox (see mailbox_check for what is refused)."""
    values = mailbox_check(
        mailbox_id=None,
        values={
            "address": address,
            "name": name,
            "handler_group_id": handler_group_id,
            "priority": priority,
            "category": category,
            "unknown_senders": unknown_senders,
            "imap_host": imap_host,
            "imap_port": imap_port,
            "imap_tls": imap_tls,
            "imap_user": imap_user,
            "imap_password": imap_password,
            "inbound_secret": inbound_secret,
            "imap_folder": imap_folder,
            "max_message_bytes": max_message_bytes,
            "active": active,
        },
    )
    with transaction.atomic():
        return _write(Mailbox(), values)


def mailbox_update(*, mailbox_id: int, **changes: Any) -> Mailbox:
    """Change some settings of a mailbox, by their names in MAILBOX_FIELDS; the others keep
    their values, the secrets included (an empty secret given clears it). Takes the
    mailbox's row lock, so two changes never interleave their checks."""
    unknown = set(changes) - set(MAILBOX_FIELDS)
    if unknown:
        raise TypeError(f"unknown mailbox settings: {sorted(unknown)}")
    with transaction.atomic():
        mailbox = Mailbox.objects.select_for_update().get(pk=mailbox_id)
        values = mailbox_check(mailbox_id=mailbox.pk, values={**_current(mailbox), **changes})
        return _write(mailbox, values)


def mailbox_delete(*, mailbox_id: int) -> None:
    """Delete a mailbox that never received or sent a message; one that did is a 409
    (ConflictError): deactivate it instead (see the module). Takes the mailbox's row lock:
    a message being stored for it (its row references the mailbox) commits first and is
    seen, or waits and then finds no mailbox."""
    with transaction.atomic():
        mailbox = Mailbox.objects.select_for_update().get(pk=mailbox_id)
        if (
            MailMessage.objects.filter(mailbox=mailbox).exists()
            or FailedMail.objects.filter(mailbox=mailbox).exists()
        ):
            raise ConflictError(
                _(
                    "This mailbox has received or sent mail: its tickets' threads need it. "
                    "Deactivate it instead (active: false)."
                )
            )
        mailbox.delete()
