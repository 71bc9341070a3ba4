from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Scope(models.TextChoices):
    """Who may use a canned response, macro or view: its owner, a group's members (its
    leader and staff edit it), or everyone on the team (staff edit it)."""

    PERSONAL = "personal", _("personal")
    GROUP = "group", _("group")
    GLOBAL = "global", _("global")


def scope_constraint(name: str, *, allow_global: bool = True) -> models.CheckConstraint:
    """A personal row has its owner and no group, a group's row its group, a global row no
    group (saved views are never global)."""
    condition = models.Q(scope="personal", owner__isnull=False, group__isnull=True) | models.Q(
        scope="group", group__isnull=False
    )
    if allow_global:
        condition |= models.Q(scope="global", group__isnull=True)
    return models.CheckConstraint(condition=condition, name=name)


class Scoped(models.Model):
    name = models.CharField(verbose_name=_("name"), max_length=100)
    scope = models.CharField(
        verbose_name=_("scope"), max_length=10, choices=Scope.choices, default=Scope.PERSONAL
    )
    # The owner of a personal one; who made it, otherwise.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("owner"),
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    group = models.ForeignKey(
        "handler_groups.HandlerGroup",
        verbose_name=_("handler group"),
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    created = models.DateTimeField(verbose_name=_("created"), auto_now_add=True)
    updated = models.DateTimeField(verbose_name=_("updated"), auto_now=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.name


class CannedResponse(Scoped):
    body = models.TextField(verbose_name=_("body"))
    # A language code (en, zh-hans) the text is written in; blank for any.
    language = models.CharField(verbose_name=_("language"), max_length=10, blank=True)

    class Meta:
        verbose_name = _("canned response")
        verbose_name_plural = _("canned responses")
        db_table = "toolbox_canned_response"
        ordering = ["name", "id"]
        indexes = [
            models.Index(fields=["scope", "group"], name="canned_scope_idx"),
            models.Index(fields=["owner"], name="canned_owner_idx"),
        ]
        constraints = [scope_constraint("canned_scope_owner_group")]


class Macro(Scoped):
    # An ordered list of steps, each {"action": ..., ...} (toolbox.macros.ACTIONS).
    actions = models.JSONField(verbose_name=_("actions"), default=list)

    class Meta:
        verbose_name = _("macro")
        verbose_name_plural = _("macros")
        db_table = "toolbox_macro"
        ordering = ["name", "id"]
        indexes = [
            models.Index(fields=["scope", "group"], name="macro_scope_idx"),
            models.Index(fields=["owner"], name="macro_owner_idx"),
        ]
        constraints = [scope_constraint("macro_scope_owner_group")]


class SavedView(Scoped):
    """A named set of the pool's filters and a sort: a tab beside My work (personal, or
    shared with a group's members)."""

    # The pool's filters, as toolbox.views.ViewFilters validates them.
    filters = models.JSONField(verbose_name=_("filters"), default=dict, blank=True)
    sort = models.CharField(verbose_name=_("sort"), max_length=20, blank=True)
    order = models.PositiveIntegerField(verbose_name=_("order"), default=0)

    class Meta:
        verbose_name = _("saved view")
        verbose_name_plural = _("saved views")
        db_table = "toolbox_saved_view"
        ordering = ["order", "name", "id"]
        indexes = [
            models.Index(fields=["scope", "group"], name="view_scope_idx"),
            models.Index(fields=["owner"], name="view_owner_idx"),
        ]
        constraints = [scope_constraint("view_scope_owner_group", allow_global=False)]
