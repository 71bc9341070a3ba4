"""A ticket's audit trail in plain words: one sentence per record, with names, not ids.

`describe(record, names)` is pure (no query): `load_names(records)` reads every user and group
the records mention in one query each, beforehand. Which records a viewer may read, and with
which details, is `workflow.selectors.records_for`'s business; this only puts them in words."""

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth import get_user_model
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from handler_groups.models import HandlerGroup
from routing.decisions import strategy_label
from ticketing.models import Priority, TicketField

USER_KEYS = ("handler_id", "to_handler_id", "after_id", "user_id")
GROUP_KEYS = ("group_id", "from_group_id", "to_group_id")


@dataclass(frozen=True)
class Names:
    users: dict[int, str] = field(default_factory=dict)
    groups: dict[int, str] = field(default_factory=dict)
    # Custom fields' labels by key, in the reader's language (for "fields" records).
    fields: dict[str, str] = field(default_factory=dict)

    def user(self, user_id) -> str:
        if user_id is None:
            return _("nobody")
        return self.users.get(user_id) or _("user #%(id)s") % {"id": user_id}

    def group(self, group_id) -> str:
        if group_id is None:
            return _("no group")
        return self.groups.get(group_id) or _("group #%(id)s") % {"id": group_id}


def _mentions(records) -> tuple[set[int], set[int]]:
    users: set[int] = set()
    groups: set[int] = set()
    for record in records:
        if record.actor_id:
            users.add(record.actor_id)
        detail = record.detail or {}
        users.update(detail[key] for key in USER_KEYS if isinstance(detail.get(key), int))
        groups.update(detail[key] for key in GROUP_KEYS if isinstance(detail.get(key), int))
        users.update(r for r in detail.get("recipients") or [] if isinstance(r, int))
        reassign = detail.get("reassign")
        if isinstance(reassign, dict) and isinstance(reassign.get("group_id"), int):
            groups.add(reassign["group_id"])
    return users, groups


def load_names(records) -> Names:
    """Usernames and group names of everyone and every group the records mention: one query
    for the users, one for the groups (none when nothing is mentioned)."""
    user_ids, group_ids = _mentions(records)
    users = (
        dict(get_user_model().objects.filter(pk__in=user_ids).values_list("pk", "username"))
        if user_ids
        else {}
    )
    groups = (
        dict(HandlerGroup.objects.filter(pk__in=group_ids).values_list("pk", "name"))
        if group_ids
        else {}
    )
    keys = {
        key
        for record in records
        if record.action == "fields"
        for key in ((record.detail or {}).get("changes") or {})
    }
    labels = {}
    if keys:
        language = get_language()
        labels = {f.key: f.label_in(language) for f in TicketField.objects.filter(key__in=keys)}
    return Names(users=users, groups=groups, fields=labels)


def _value_text(value) -> str:
    if value is None or value == "" or value == []:
        return "—"
    if value is True:
        return _("yes")
    if value is False:
        return _("no")
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def join_names(names: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    if not names:
        return _("nobody")
    if len(names) == 1:
        return names[0]
    return _("%(list)s and %(last)s") % {"list": ", ".join(names[:-1]), "last": names[-1]}


def minutes_text(seconds: float) -> str:
    minutes = max(round(seconds / 60), 1)
    if minutes < 60:
        return _("%(n)d min") % {"n": minutes}
    hours, minutes = divmod(minutes, 60)
    return _("%(h)d h %(m)02d min") % {"h": hours, "m": minutes}


def _by(text: str, actor: str | None) -> str:
    return _("%(what)s by %(who)s") % {"what": text, "who": actor} if actor else text


def describe(record, names: Names, *, offered_at: datetime | None = None) -> str:
    """One record as a sentence. `offered_at`: for a reclaim, when the offer was made (the
    assign record before it), to say how long it went unanswered."""
    detail = record.detail or {}
    action = record.action
    actor = names.user(record.actor_id) if record.actor_id else None

    simple = {
        "submit": _("Submitted"),
        "approve": _("Approved"),
        "cancel": _("Cancelled"),
        "accept": _("Accepted"),
        "complete": _("Completed"),
        "close": _("Closed"),
    }
    if action in simple:
        return _by(simple[action], actor)
    if action == "reject":
        text = _by(_("Rejected"), actor)
        reason = detail.get("reason")
        return f"{text}: {reason}" if reason else text
    if action == "enter_pool":
        return _("Waiting in the pool for someone to take it")
    if action == "assign":
        handler = names.user(detail.get("handler_id"))
        strategy = detail.get("strategy")
        if strategy is None:
            return _("Assigned to %(who)s") % {"who": handler}
        label = strategy_label(strategy)
        label = label[:1].upper() + label[1:]
        if detail.get("after_id") is not None:  # round robin: whose turn it last was
            return _("%(strategy)s chose %(who)s (next after %(previous)s)") % {
                "strategy": label,
                "who": handler,
                "previous": names.user(detail["after_id"]),
            }
        return _("%(strategy)s chose %(who)s") % {"strategy": label, "who": handler}
    if action == "reclaim":
        handler = names.user(detail.get("handler_id"))
        reason = detail.get("reason") or "timeout"
        if reason != "timeout":
            return _("Offered to %(who)s — reclaimed (%(reason)s)") % {
                "who": handler,
                "reason": reason,
            }
        if offered_at is not None:
            waited = minutes_text((record.created - offered_at).total_seconds())
            return _("Offered to %(who)s — not accepted in %(time)s, reclaimed") % {
                "who": handler,
                "time": waited,
            }
        return _("Offered to %(who)s — not accepted in time, reclaimed") % {"who": handler}
    if action == "decline":
        text = _("Declined by %(who)s") % {"who": actor or names.user(detail.get("handler_id"))}
        reason = detail.get("reason")
        return f"{text}: {reason}" if reason else text
    if action == "overflow":
        return _("Moved from %(from)s to %(to)s: nobody there could take it in time") % {
            "from": names.group(detail.get("from_group_id")),
            "to": names.group(detail.get("to_group_id")),
        }
    if action == "transfer":
        to_group = names.group(detail.get("to_group_id"))
        if detail.get("sla_level") is not None:
            return _("Moved to %(group)s by the SLA escalation (level %(level)s)") % {
                "group": to_group,
                "level": detail["sla_level"],
            }
        if detail.get("to_handler_id") is not None:
            text = _("Transferred to %(who)s in %(group)s") % {
                "who": names.user(detail["to_handler_id"]),
                "group": to_group,
            }
        else:
            text = _("Transferred to %(group)s") % {"group": to_group}
        return _by(text, actor)
    if action == "reply":
        if detail.get("reply_type") == "internal":
            return _("Internal note by %(who)s") % {"who": actor or _("the system")}
        if detail.get("reply_type") == "system":
            return _("System message")
        return _("Reply from %(who)s") % {"who": actor or _("the support team")}
    if action == "attachment_removed":
        text = _("The file %(name)s was removed") % {"name": detail.get("filename") or "?"}
        return _by(text, actor)
    if action == "watcher_added":
        who = names.user(detail.get("user_id"))
        if detail.get("source") == "merge":
            return _("%(who)s now watches it (from a merged ticket)") % {"who": who}
        if detail.get("user_id") == record.actor_id:
            return _("%(who)s started watching") % {"who": who}
        if detail.get("source") == "cc":
            return _by(_("%(who)s was copied in") % {"who": who}, actor)
        return _by(_("%(who)s was added as a watcher") % {"who": who}, actor)
    if action == "watcher_removed":
        who = names.user(detail.get("user_id"))
        if detail.get("user_id") == record.actor_id:
            return _("%(who)s stopped watching") % {"who": who}
        return _by(_("%(who)s no longer watches it") % {"who": who}, actor)
    if action == "merge":
        text = _("Merged into %(code)s") % {"code": detail.get("into_bill") or "?"}
        return _by(text, actor)
    if action == "merged_from":
        return _by(
            _("%(code)s was merged into this ticket") % {"code": detail.get("source_bill") or "?"},
            actor,
        )
    if action in ("link_added", "link_removed"):
        kinds = {"related": _("related to"), "parent": _("a child of"), "child": _("the parent of")}
        kind = str(detail.get("kind") or "?")
        params = {
            "kind": kinds.get(kind, kind),
            "code": detail.get("bill_code") or "?",
        }
        if action == "link_added":
            return _by(_("Linked as %(kind)s %(code)s") % params, actor)
        return _by(_("No longer %(kind)s %(code)s") % params, actor)
    if action == "mail_received":  # mail/services/intake.py: the message that opened it
        return _("Opened by e-mail to %(mailbox)s") % {"mailbox": detail.get("mailbox") or "?"}
    if action == "reopen":
        text = _by(_("Reopened"), actor)
        reason = detail.get("reason")
        return f"{text}: {reason}" if reason else text
    if action == "mail_failed":  # mail/outbound.py: an e-mail of the thread bounced for good
        text = _("Could not reach %(address)s by e-mail") % {
            "address": detail.get("address") or "?"
        }
        error = detail.get("error")
        return f"{text}: {error}" if error else text
    if action == "tags":  # ticketing.tags
        added, removed = detail.get("added") or [], detail.get("removed") or []
        if added:
            return _by(_("Tagged %(tags)s") % {"tags": ", ".join(added)}, actor)
        return _by(_("Untagged %(tags)s") % {"tags": ", ".join(removed)}, actor)
    if action == "fields":  # ticketing.fields
        changes = detail.get("changes") or {}
        parts = [
            _("%(field)s: %(old)s → %(new)s")
            % {
                "field": names.fields.get(key, key),
                "old": _value_text(pair[0] if isinstance(pair, list) and pair else None),
                "new": _value_text(pair[1] if isinstance(pair, list) and len(pair) > 1 else None),
            }
            for key, pair in changes.items()
        ]
        return _by(_("Fields changed (%(changes)s)") % {"changes": "; ".join(parts)}, actor)
    if action == "priority":  # workflow.services.ticket_set_priority
        return _by(
            _("Priority changed from %(old)s to %(new)s")
            % {"old": _priority(detail.get("from")), "new": _priority(detail.get("to"))},
            actor,
        )
    if action == "macro":  # toolbox.macros: one entry, its steps folded under it
        return _by(_("Applied '%(macro)s'") % {"macro": detail.get("macro") or "?"}, actor)
    if action == "rated":
        return _("The applicant rated the help %(rating)s of 5") % {"rating": detail.get("rating")}
    if action == "sla_pause":
        return _by(_("Waiting on the applicant: the resolve clock was paused"), actor)
    if action == "sla_resume":
        return _by(_("The resolve clock was resumed"), actor)
    if action in ("sla_response_level", "sla_resolve_level"):
        return _level_text(action, detail, names)
    if action == "sla_response_timeout":
        return _("The response deadline passed without a response")
    if action == "sla_resolve_timeout":
        return _("The resolve deadline passed before the ticket was resolved")
    if action == "admin_edit":
        fields = ", ".join(str(f) for f in detail.get("fields") or [])
        text = _by(_("Edited in the admin"), actor)
        return f"{text} ({fields})" if fields else text
    text = action.replace("_", " ")
    return _by(text[:1].upper() + text[1:], actor)


def _priority(value) -> str:
    try:
        return str(Priority(value).label)
    except ValueError:
        return str(value)


def _level_text(action: str, detail: dict, names: Names) -> str:
    clock = _("response") if action == "sla_response_level" else _("resolve")
    recipients = join_names([names.user(r) for r in detail.get("recipients") or []])
    due, deadline = detail.get("due_at"), detail.get("deadline")
    params = {"clock": clock, "level": detail.get("level"), "who": recipients}
    if due and deadline and due < deadline:  # ISO-8601 in UTC: the strings order as times
        text = _("SLA warning sent to %(who)s (%(clock)s, level %(level)s)") % params
    else:
        text = _("SLA escalation sent to %(who)s (%(clock)s, level %(level)s)") % params
    priority = detail.get("priority")
    if isinstance(priority, dict):
        text += _("; priority raised")
    reassign = detail.get("reassign")
    if isinstance(reassign, dict) and not reassign.get("moved"):
        text += _("; could not move it to %(group)s") % {
            "group": names.group(reassign.get("group_id"))
        }
    return text


def describe_all(records) -> list[str]:
    """Every record in words (the names read in one go); reclaims say how long the offer
    waited, from the assign record before them."""
    names = load_names(records)
    offered: dict[int, datetime] = {}
    lines = []
    for record in records:
        detail = record.detail or {}
        if record.action == "assign" and detail.get("handler_id") is not None:
            offered[detail["handler_id"]] = record.created
        handler_id = detail.get("handler_id")
        at = offered.get(handler_id) if record.action == "reclaim" and handler_id else None
        lines.append(describe(record, names, offered_at=at))
    return lines
