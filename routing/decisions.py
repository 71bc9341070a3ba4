"""Reading routing decisions ("Why this agent?"): each stored decision (RoutingDecision, what
the strategy saw) in plain words, derived from the stored figures and the strategy when read,
so that nothing but the figures is written under the group lock."""

from datetime import datetime

from django.utils import timezone

from .models import RoutingDecision
from .strategies import eligibility
from .strategies.registry import get_strategy

TRIGGER_WORDS = {
    "approval": "on approval",
    "transfer": "on a transfer to the group",
    "drain": "when someone became free",
    "reclaim": "after an offer was not answered in time",
    "decline": "after an agent declined it",
    "overflow": "on overflow",
    "escalation": "on an escalation to the group",
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
        return get_strategy(code).label
    except LookupError:
        return f"strategy {code}"


def explain(decision: RoutingDecision) -> dict:
    members = [{**member, "why": member_why(member, decision)} for member in decision.members or []]
    chosen = next((m for m in members if m["user_id"] == decision.chosen_id), None)
    summary = "; ".join(f"{m['username'] or m['user_id']}: {m['why']}" for m in members)
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
        "summary": summary or "nobody was considered (the strategy failed or the group is empty)",
    }


def headline(decision: RoutingDecision, chosen: dict | None) -> str:
    group = decision.group.name if decision.group else "the group"
    label = strategy_label(decision.strategy).capitalize()
    when = TRIGGER_WORDS.get(decision.trigger, decision.trigger)
    name = chosen["username"] if chosen else None
    match decision.outcome:
        case RoutingDecision.Outcome.ASSIGNED:
            return f"{label} assigned it to {name} in {group} {when}."
        case RoutingDecision.Outcome.OFFERED:
            return f"{label} offered it to {name} in {group} {when}."
        case RoutingDecision.Outcome.OVERFLOWED:
            return f"Nobody in {group} could take it in time: moved to the overflow group."
        case _:
            return f"Nobody in {group} was eligible {when}: it waits in the queue."


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
        return "next in turn" if chosen else "eligible, not next in turn"
    if strategy == 2:
        if chosen:
            return f"fewest active ({member['active']})"
        return f"eligible, {member['active']} active"
    if strategy == 3:
        if chosen:
            return f"online longest (since {online})" if online else "first in priority"
        return f"eligible, online since {online}" if online else "eligible, later in priority"
    if strategy == 4:
        if chosen:
            return f"idle longest (since {idle})" if idle else "idle longest (never assigned)"
        return f"eligible, idle since {idle}" if idle else "eligible"
    return "chosen" if chosen else "eligible"


def not_eligible(member: dict, reason: str) -> str:
    match reason:
        case eligibility.OFFLINE:
            state = member.get("state") or "offline"
            return "offline" if state == "offline" else f"not available ({_words(state)})"
        case eligibility.AT_CAPACITY:
            return f"at capacity {member['active']}/{member['max_active']}"
        case eligibility.HOLDING_OFFER:
            return "holding an unanswered offer"
        case eligibility.MISSED:
            return "missed this ticket"
        case eligibility.DECLINED:
            return "declined this ticket"
        case eligibility.OVER_DAILY_CAP:
            return f"over the daily cap ({member['assigned_today']} today)"
        case eligibility.INACTIVE:
            return "inactive account"
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
