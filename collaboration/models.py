"""Who else follows a ticket, and how tickets relate to each other. Referred to by name
("ticketing.Ticket"), not imported: these models sit beside ticketing.models in the layers,
so that ticketing.access may read them."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _


class WatcherSource(models.TextChoices):
    TEAM = "team", _("added by the team")
    CC = "cc", _("copied in by the applicant")
    SELF = "self", _("follows it")
    MERGE = "merge", _("from a merged ticket")


class Watcher(models.Model):
    """A person told of a ticket's public replies and status changes. A watcher who is not on
    the ticket's team sees what its applicant sees: the public story only (ticketing.access)."""

    ticket = models.ForeignKey(
        "ticketing.Ticket",
        verbose_name=_("ticket"),
        on_delete=models.CASCADE,
        related_name="watchers",
        db_index=False,  # watcher_ticket_user_key leads with it
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        on_delete=models.CASCADE,
        related_name="watching",
        db_index=False,  # watcher_user_idx leads with it
    )
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("added by"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    source = models.CharField(
        verbose_name=_("source"), max_length=10, choices=WatcherSource.choices
    )
    added = models.DateTimeField(verbose_name=_("added"))

    class Meta:
        verbose_name = _("watcher")
        verbose_name_plural = _("watchers")
        db_table = "oa_ticket_watcher"
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["ticket", "user"], name="watcher_ticket_user_key"),
        ]
        indexes = [
            # ticketing.access.visible_scope: the tickets a person watches.
            models.Index(fields=["user", "ticket"], name="watcher_user_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} watches {self.ticket_id}"


class LinkKind(models.TextChoices):
    """How a link is stored. As one ticket sees it, a `parent` row is "parent" from its child
    (`source`) and "child" from its parent (`target`)."""

    RELATED = "related", _("related")
    PARENT = "parent", _("parent")


class TicketLink(models.Model):
    """Two tickets that belong together. `related` is stored once per pair (the smaller id as
    `source`); `parent` from the child (`source`) to its parent (`target`), at most one per
    child. A merge is not a link row: it is the source ticket's `merged_into`."""

    source = models.ForeignKey(
        "ticketing.Ticket",
        verbose_name=_("source"),
        on_delete=models.CASCADE,
        related_name="links_out",
        db_index=False,  # link_source_target_key leads with it
    )
    target = models.ForeignKey(
        "ticketing.Ticket",
        verbose_name=_("target"),
        on_delete=models.CASCADE,
        related_name="links_in",
        db_index=False,  # link_target_idx leads with it
    )
    kind = models.CharField(verbose_name=_("kind"), max_length=10, choices=LinkKind.choices)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("created by"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    created = models.DateTimeField(verbose_name=_("created"))

    class Meta:
        verbose_name = _("ticket link")
        verbose_name_plural = _("ticket links")
        db_table = "oa_ticket_link"
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "target"], name="link_source_target_key"),
            # At most one parent per ticket.
            models.UniqueConstraint(
                fields=["source"], condition=Q(kind="parent"), name="link_one_parent_key"
            ),
            models.CheckConstraint(condition=~Q(source=F("target")), name="link_not_to_itself"),
            # A related pair is stored once, smaller id first.
            models.CheckConstraint(
                condition=~Q(kind="related") | Q(source__lt=F("target")),
                name="link_related_ordered",
            ),
        ]
        indexes = [
            # A ticket's links from the other side; a parent's children.
            models.Index(fields=["target", "kind"], name="link_target_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} {self.kind} {self.target_id}"
