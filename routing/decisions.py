"""Reading routing decisions ("Why this agent?"): each stored decision (RoutingDecision, what
the strategy saw) in plain words, derived from the stored figures and the strategy when read,
so that nothing but the figures is written under the group lock."""

from datetime import datetime

from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from .models import RoutingDecision
from .strategies import eligibility
from .strategies.registry import get_strategy

TRIGGER_WORDS = {
    "approval": _("on approval"),
    "transfer": _("on a transfer to the group"),
    "drain": _("when someone became free"),
    "reclaim": _("after an offer was not answered in time"),
    "decline": _("after an agent declined it"),
    "overflow": _("on overflow"),
    "escalation": _("on an escalation to the group"),
}


def decisions_for(ticket_id: int) -> list[dict]:
    """The ticket's routing decisions, oldest first, each with its plain-words explanation
    (one query)."""
    decisions = (
        RoutingDecision.objects.filter(ticket_id=ticket_id).select_related("group").order_by("id")
    )
    return [explain(decision) for decision in decisions]


def strategy_label(code: int) -> str:
    try:
        # Registered labels are marked with gettext_noop (routing/strategies/*.py).
        return gettext(get_strategy(code).label)
    except LookupError:
        return gettext("strategy %(code)s") % {"code": code}


def explain(decision: RoutingDecision) -> dict:
    members = [{**member, "why": member_why(member, decision)} for member in decision.members or []]
    chosen = next((m for m in members if m["user_id"] == decision.chosen_id), None)
    summary = "; ".join(
        gettext("%(who)s: %(why)s") % {"who": m["username"] or m["user_id"], "why": m["why"]}
        for m in members
    )
    return {
        "created": decision.created,
        "trigger": decision.trigger,
        "group_id": decision.group_id,
        "group_name": decision.group.name if decision.group else None,
        "strategy": decision.strategy,
        "strategy_label": strategy_label(decision.strategy),
        "outcome": decision.outcome,
        "chosen_id": decision.chosen_id,
        "chosen_username": chosen["username"] if chosen else None,
        "headline": headline(decision, chosen),
        "members": members,
        "summary": summary
        or gettext("nobody was considered (the strategy failed or the group is empty)"),
    }


def headline(decision: RoutingDecision, chosen: dict | None) -> str:
    group = decision.group.name if decision.group else gettext("the group")
    label = strategy_label(decision.strategy).capitalize()
    when = TRIGGER_WORDS.get(decision.trigger, decision.trigger)
    name = chosen["username"] if chosen else None
    match decision.outcome:
        case RoutingDecision.Outcome.ASSIGNED:
            return gettext("%(strategy)s assigned it to %(who)s in %(group)s %(when)s.") % {
                "strategy": label,
                "who": name,
                "group": group,
                "when": when,
            }
        case RoutingDecision.Outcome.OFFERED:
            return gettext("%(strategy)s offered it to %(who)s in %(group)s %(when)s.") % {
                "strategy": label,
                "who": name,
                "group": group,
                "when": when,
            }
        case RoutingDecision.Outcome.OVERFLOWED:
            return gettext(
                "Nobody in %(group)s could take it in time: moved to the overflow group."
            ) % {"group": group}
        case _:
            return gettext("Nobody in %(group)s was eligible %(when)s: it waits in the queue.") % {
                "group": group,
                "when": when,
            }


def member_why(member: dict, decision: RoutingDecision) -> str:
    """One member's line: why chosen (by the strategy), why not eligible, or eligible."""
    reason = member.get("reason")
    if reason:
        return not_eligible(member, reason)
    strategy = decision.strategy
    chosen = member["user_id"] == decision.chosen_id
    idle = _when(member.get("idle_since"), decision.created)
    online = _when(member.get("online_since"), decision.created)
    if strategy == 1:
        return gettext("next in turn") if chosen else gettext("eligible, not next in turn")
    if strategy == 2:
        if chosen:
            return gettext("fewest active (%(n)s)") % {"n": member["active"]}
        return gettext("eligible, %(n)s active") % {"n": member["active"]}
    if strategy == 3:
        if chosen:
            if online:
                return gettext("online longest (since %(when)s)") % {"when": online}
            return gettext("first in priority")
        if online:
            return gettext("eligible, online since %(when)s") % {"when": online}
        return gettext("eligible, later in priority")
    if strategy == 4:
        if chosen:
            if idle:
                return gettext("idle longest (since %(when)s)") % {"when": idle}
            return gettext("idle longest (never assigned)")
        if idle:
            return gettext("eligible, idle since %(when)s") % {"when": idle}
        return gettext("eligible")
    return gettext("chosen") if chosen else gettext("eligible")


def not_eligible(member: dict, reason: str) -> str:
    match reason:
        case eligibility.OFFLINE:
            state = member.get("state") or "offline"
            if state == "offline":
                return gettext("offline")
            return gettext("not available (%(state)s)") % {"state": _words(state)}
        case eligibility.AT_CAPACITY:
            return gettext("at capacity %(active)s/%(max)s") % {
                "active": member["active"],
                "max": member["max_active"],
            }
        case eligibility.HOLDING_OFFER:
            return gettext("holding an unanswered offer")
        case eligibility.MISSED:
            return gettext("missed this ticket")
        case eligibility.DECLINED:
            return gettext("declined this ticket")
        case eligibility.OVER_DAILY_CAP:
            return gettext("over the daily cap (%(n)s today)") % {"n": member["assigned_today"]}
        case eligibility.INACTIVE:
            return gettext("inactive account")
    return _words(reason)


def _words(code: str) -> str:
    return code.replace("_", " ")


def _when(value: str | None, at: datetime) -> str | None:
    """An ISO time as the viewer reads it: the time of day, with the date when not the
    decision's day (in the active time zone)."""
    if not value:
        return None
    moment = timezone.localtime(datetime.fromisoformat(value))
    if moment.date() == timezone.localtime(at).date():
        return moment.strftime("%H:%M")
    return moment.strftime("%Y-%m-%d %H:%M")
