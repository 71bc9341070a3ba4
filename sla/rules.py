"""SLA rules and their escalation ladders: saving a rule with its levels, and the default
ladder every rule has unless it says otherwise (warn `warn_before_minutes` before each
deadline, time out at each deadline).

A rule saved without levels — from the admin, a shell, a data import, or the API without a
`levels` key — gets the default ladder; a later change of `warn_before_minutes` moves the
warnings of a ladder still in the default shape. A change applies to new tickets; open ones
move with `sla_recompute` (the API's recompute action, the admin action, the command)."""

from __future__ import annotations

from decimal import Decimal

from django.db import transaction

from . import ladder
from .models import EscalationLevel, SlaRule

RULE_FIELDS = (
    "name",
    "priority",
    "category",
    "response_hours",
    "resolve_hours",
    "warn_before_minutes",
    "sort",
    "status",
    "calendar_id",
)


def _as_rows(rule: SlaRule, levels: list[ladder.Level]) -> list[EscalationLevel]:
    return [
        EscalationLevel(
            rule=rule,
            position=level.position,
            clock=level.clock,
            trigger=level.trigger,
            value=level.value,
            notify=list(level.notify),
            template_code=level.template_code,
            reassign_group_id=level.reassign_group_id,
            raise_priority=level.raise_priority,
        )
        for level in levels
    ]


def _shape(levels) -> list[tuple]:
    return [
        (
            lv.position,
            lv.clock,
            lv.trigger,
            Decimal(lv.value),
            tuple(lv.notify),
            lv.template_code,
            lv.reassign_group_id,
            lv.raise_priority,
        )
        for lv in levels
    ]


def is_default_ladder(rule: SlaRule, warn_before_minutes: int) -> bool:
    return _shape(rule.levels.order_by("position")) == _shape(
        ladder.default_ladder(warn_before_minutes)
    )


def set_levels(rule: SlaRule, levels: list[ladder.Level]) -> None:
    """Replace the rule's ladder (positions renumbered 1..n in the given order)."""
    renumbered = [
        ladder.Level(**{**level.__dict__, "position": index, "id": None})
        for index, level in enumerate(levels, start=1)
    ]
    EscalationLevel.objects.filter(rule=rule).delete()
    EscalationLevel.objects.bulk_create(_as_rows(rule, renumbered))


@transaction.atomic
def rule_save(
    *, rule: SlaRule | None = None, levels: list[ladder.Level] | None = None, **fields
) -> SlaRule:
    """Create or update a rule; `levels` replaces its ladder (None: keep it, or the default
    for a new rule)."""
    unknown = set(fields) - set(RULE_FIELDS)
    if unknown:
        raise TypeError(f"unknown rule fields: {sorted(unknown)}")
    if rule is None:
        rule = SlaRule(**fields)
        rule.save()  # the default ladder comes with it (rule_saved below)
    else:
        rule = SlaRule.objects.select_for_update().get(pk=rule.pk)
        for name, value in fields.items():
            setattr(rule, name, value)
        rule.save()
    if levels is not None:
        set_levels(rule, levels)
    return rule


def rule_saved(sender, instance: SlaRule, created: bool, **kwargs) -> None:
    """post_save of SlaRule: a new rule gets the default ladder; a new warn_before_minutes
    moves the warnings of a ladder still in the default shape."""
    if kwargs.get("raw"):
        return
    previous = getattr(instance, "_loaded_warn_before_minutes", None)
    if created:
        set_levels(instance, ladder.default_ladder(instance.warn_before_minutes))
    elif previous is not None and previous != instance.warn_before_minutes:
        if is_default_ladder(instance, previous):
            set_levels(instance, ladder.default_ladder(instance.warn_before_minutes))
    instance._loaded_warn_before_minutes = instance.warn_before_minutes


def rule_loaded(sender, instance: SlaRule, **kwargs) -> None:
    """post_init of SlaRule: remember warn_before_minutes as loaded (rule_saved compares)."""
    instance._loaded_warn_before_minutes = instance.__dict__.get("warn_before_minutes")
