from django.conf import settings
from django.db import models

from .membership import format_member_ids, parse_member_ids


class GroupStatus(models.IntegerChoices):
    DISABLED = 0, "disabled"
    ENABLED = 1, "enabled"


def assign_strategy_choices() -> list[tuple[int, str]]:
    """Derived from the strategy registry (assignment/registry.py): codes are the source
    system's, each with one strategy class in assignment/."""
    from .assignment.registry import strategy_choices

    return strategy_choices()


class HandlerGroup(models.Model):
    """oa_ticket_handler_group. Members are stored as the source system stores them, a
    comma-separated string of user ids; read and write it only through `member_ids`."""

    name = models.CharField(max_length=100, unique=True)
    leader = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="led_handler_groups",
    )
    member_user_ids = models.CharField(max_length=2000, blank=True, default="")
    assign_strategy = models.PositiveSmallIntegerField(choices=assign_strategy_choices, default=0)
    # Index (into member_ids) of the member who got the last round-robin assignment; -1 = none
    # yet, so the first assignment goes to the first member.
    last_assign_index = models.IntegerField(default=-1)
    status = models.PositiveSmallIntegerField(
        choices=GroupStatus.choices, default=GroupStatus.ENABLED
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "oa_ticket_handler_group"
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name

    @property
    def member_ids(self) -> list[int]:
        return parse_member_ids(self.member_user_ids)

    @member_ids.setter
    def member_ids(self, ids) -> None:
        self.member_user_ids = format_member_ids(ids)

    @property
    def is_enabled(self) -> bool:
        return self.status == GroupStatus.ENABLED
