"""Console forms: they validate the shape of what a page sends; services decide the rest."""

from typing import cast

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from accounts.models import time_zone_names
from console.ticket_fields import add_inputs, input_name, values_from
from handler_groups.models import GroupStatus, HandlerGroup
from handler_groups.selectors import group_ids_for_user
from ticketing import categories
from ticketing import fields as ticket_fields
from ticketing.models import Priority, ReplyType, TicketStatus

POOL_VIEWS = (
    ("mine", _("My work")),
    ("pending", _("Pending")),
    ("all", _("All")),
)
# Old links (?view=my_handling) open My work.
POOL_VIEW_ALIASES = {"my_handling": "mine"}
POOL_SORT_CHOICES = (
    ("sla", _("SLA due")),
    ("priority", _("Priority")),
    ("age", _("Oldest first")),
    ("-age", _("Newest first")),
)
# The order a tab shows when the query string names none.
DEFAULT_SORT = {"mine": "sla", "pending": "-age", "all": "-age"}


def _enabled_groups():
    return HandlerGroup.objects.filter(status=GroupStatus.ENABLED).order_by("name")


class PoolFilterForm(forms.Form):
    """The pool's tab, search, sort and filters, read from the query string."""

    view = forms.ChoiceField(
        choices=[*POOL_VIEWS, *((alias, alias) for alias in POOL_VIEW_ALIASES)], required=False
    )
    q = forms.CharField(
        label=_("Search"),
        max_length=100,
        required=False,
        widget=forms.TextInput(
            attrs={"type": "search", "placeholder": _("Title, bill code or applicant")}
        ),
    )
    sort = forms.ChoiceField(
        label=_("Sort"),
        choices=POOL_SORT_CHOICES,
        required=False,
        error_messages={
            "invalid_choice": _("sort: choose one of sla, priority, age or -age, not %(value)s.")
        },
    )
    priority = forms.TypedChoiceField(
        label=_("Priority"),
        choices=[("", _("Any priority")), *Priority.choices],
        coerce=int,
        empty_value=None,
        required=False,
    )
    # A category's name (ticketing.models.Category: staff name them freely, spaces included).
    category = forms.CharField(label=_("Category"), max_length=50, required=False)
    ticket_status = forms.TypedChoiceField(
        label=_("Status"),
        choices=[("", _("Any status")), *TicketStatus.choices],
        coerce=int,
        empty_value=None,
        required=False,
    )
    handler_group = forms.ModelChoiceField(
        label=_("Group"),
        queryset=HandlerGroup.objects.none(),
        empty_label=_("Any group"),
        required=False,
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        # Offer the groups whose tickets the user can see in the pool.
        groups = HandlerGroup.objects.order_by("name")
        if not user.is_staff:
            groups = groups.filter(pk__in=group_ids_for_user(user))
        self.fields["handler_group"].queryset = groups

    def chosen_view(self, default: str = "pending") -> str:
        view = (self.cleaned_data.get("view") if self.is_bound else None) or default
        return POOL_VIEW_ALIASES.get(view, view)

    def filter_count(self) -> int:
        """How many of the folded filters are set (shown on the fold's summary)."""
        names = ("priority", "category", "ticket_status", "handler_group")
        return sum(1 for name in names if self.data.get(name) not in (None, ""))

    def pool_arguments(self, default_view: str = "pending") -> dict:
        """Keyword arguments for `workflow.selectors.pool_for`."""
        data = self.cleaned_data
        group = data.get("handler_group")
        view = self.chosen_view(default_view)
        sort = data.get("sort") or None
        if sort is None and view == "mine":
            sort = DEFAULT_SORT["mine"]
        return {
            "view": view,
            "q": data.get("q") or None,
            "sort": sort,
            "priority": data.get("priority"),
            "category": data.get("category") or None,
            "ticket_status": data.get("ticket_status"),
            "handler_group": group.pk if group else None,
        }


class MultipleFileInput(forms.FileInput):
    allow_multiple_selected = True


class FilesField(forms.FileField):
    """Files chosen in a plain `<input type="file" multiple>` (the page without script; with
    it, attachments.js uploads them at once instead): a list, maybe empty."""

    widget = MultipleFileInput

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def clean(self, data, initial=None) -> list:
        chosen = data if isinstance(data, list | tuple) else [data]
        return [super(FilesField, self).clean(file, initial) for file in chosen if file]


class AttachmentIdsField(forms.Field):
    """The uploads (POST /api/attachments/) a form carries, as repeated `attachment_ids`
    values: attachments.js adds one hidden input for each finished upload."""

    widget = forms.MultipleHiddenInput
    MAX_COUNT = 50  # as the API's attachment_ids

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_python(self, value) -> list[int]:
        if not value:
            return []
        if isinstance(value, str):
            value = [value]
        ids: list[int] = []
        for item in value:
            text = str(item).strip()
            if not text.isascii() or not text.isdigit() or int(text) < 1:
                raise forms.ValidationError(_("That is not a list of uploads."), code="invalid")
            if int(text) not in ids:
                ids.append(int(text))
        if len(ids) > self.MAX_COUNT:
            raise forms.ValidationError(
                _("Attach at most %(max)d files at a time.") % {"max": self.MAX_COUNT},
                code="max_count",
            )
        return ids


class AttachingForm(forms.Form):
    """A form that takes files: `files` chosen without script, `attachment_ids` uploaded
    with it (console/files.py turns both into the ids a service attaches)."""

    attachment_ids = AttachmentIdsField()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Declared here: a class attribute `files` would hide the form's own (request.FILES).
        self.fields["files"] = FilesField(label=_("Files"))

    def carried_ids(self) -> list[int]:
        """The uploads the form carries, to list again when it comes back."""
        if not self.is_bound or not hasattr(self, "cleaned_data"):
            return []
        return list(self.cleaned_data.get("attachment_ids") or [])

    def carry(self, ids: list[int]) -> None:
        """What the form carries from now on (with the uploads made from its `files`)."""
        self.cleaned_data["attachment_ids"] = list(ids)


class TicketSubmitForm(AttachingForm):
    title = forms.CharField(label=_("Title"), max_length=200)
    content = forms.CharField(
        label=_("Describe the problem"), max_length=50_000, widget=forms.Textarea(attrs={"rows": 6})
    )
    priority = forms.TypedChoiceField(
        label=_("Priority"), choices=Priority.choices, coerce=int, initial=Priority.MEDIUM
    )
    # The active categories (choices set per form, labels in the reader's language).
    category = forms.ChoiceField(label=_("Category"), required=False, choices=())
    handler_group = forms.ModelChoiceField(
        label=_("Team"),
        queryset=HandlerGroup.objects.none(),
        required=False,
        empty_label=_("Not sure — let the desk route it"),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["handler_group"].queryset = _enabled_groups()
        language = translation.get_language()
        self.fields["category"].choices = [
            ("", _("— (none)")),
            *((c.name, c.label(language)) for c in categories.categories_listed()),
        ]
        # Every active field, each with the categories it belongs to (the page shows the
        # chosen category's only, by script); only the chosen category's are read back.
        self.custom_fields = ticket_fields.active_fields()
        add_inputs(self, self.custom_fields, language)

    def custom_inputs(self) -> list[tuple]:
        """(bound field, category names it applies to: empty for all) of each custom field."""
        return [
            (self[input_name(f)], [c.name for c in f.categories.all()]) for f in self.custom_fields
        ]

    def submit_arguments(self) -> dict:
        """Keyword arguments for `workflow.services.ticket_submit` (without the creator); a
        username naming nobody in a user field is a 400 naming `fields.<key>`."""
        data = self.cleaned_data
        group = data.get("handler_group")
        category = data.get("category") or ""
        chosen = [
            f
            for f in self.custom_fields
            if not f.categories.all() or category in {c.name for c in f.categories.all()}
        ]
        values = {k: v for k, v in values_from(self, chosen).items() if v is not None}
        return {
            "title": data["title"],
            "content": data["content"],
            "priority": data["priority"],
            "category": category,
            "handler_group_id": group.pk if group else None,
            "attachment_ids": self.carried_ids(),
            "fields": values,
        }


class ReplyForm(AttachingForm):
    """The composer: a public reply or, for the team, an internal note (two radio buttons
    the page shows as tabs above the editor). The applicant only ever sends public replies:
    the choice is a hidden field for them."""

    reply_type = forms.TypedChoiceField(
        label=_("Visibility"),
        choices=[
            (ReplyType.PUBLIC, _("Public reply")),
            (ReplyType.INTERNAL, _("Internal note")),
        ],
        coerce=int,
        initial=ReplyType.PUBLIC,
        widget=forms.RadioSelect,
    )
    content = forms.CharField(
        label=_("Reply"), max_length=50_000, widget=forms.Textarea(attrs={"rows": 4})
    )
    # The newest reply the page showed when it was written: a newer one from someone else
    # asks the sender for a look first (409, nothing saved). Absent: no check.
    seen_reply_id = forms.IntegerField(min_value=0, required=False, widget=forms.HiddenInput)

    def __init__(self, *args, allow_internal: bool, **kwargs):
        super().__init__(*args, **kwargs)
        if not allow_internal:
            reply_type = cast(forms.TypedChoiceField, self.fields["reply_type"])  # declared so
            reply_type.choices = [(ReplyType.PUBLIC, _("Public reply"))]
            reply_type.widget = forms.HiddenInput()

    @property
    def is_internal(self) -> bool:
        """The note tab is the one chosen (a form sent back with errors keeps its tab)."""
        value = self["reply_type"].value()
        return str(value) == str(int(ReplyType.INTERNAL))


class PreviewForm(forms.Form):
    """The composer's Preview: the text as it will read once sent."""

    content = forms.CharField(label=_("Reply"), max_length=50_000, strip=False)


class RejectForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason"), max_length=2000, widget=forms.Textarea(attrs={"rows": 2})
    )


class DeclineForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason (optional)"),
        max_length=500,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": _("e.g. not my area")}),
    )


class TransferForm(forms.Form):
    handler_id = forms.TypedChoiceField(
        label=_("To handler"), coerce=int, empty_value=None, required=False
    )
    handler_group_id = forms.TypedChoiceField(
        label=_("To group"), coerce=int, empty_value=None, required=False
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        groups = list(_enabled_groups())
        member_ids = {member_id for group in groups for member_id in group.member_ids}
        handlers = (
            get_user_model().objects.filter(pk__in=member_ids, is_active=True).order_by("username")
        )
        self.fields["handler_id"].choices = [("", _("Keep / let the group route it"))] + [
            (user.pk, user.get_username()) for user in handlers
        ]
        self.fields["handler_group_id"].choices = [("", _("Keep the current group"))] + [
            (group.pk, group.name) for group in groups
        ]

    def clean(self):
        data = super().clean()
        if data.get("handler_id") is None and data.get("handler_group_id") is None:
            raise forms.ValidationError(_("Choose a handler, a group or both."))
        return data

    def transfer_arguments(self) -> dict:
        return {
            "handler_id": self.cleaned_data.get("handler_id"),
            "handler_group_id": self.cleaned_data.get("handler_group_id"),
        }


class ProfileForm(forms.Form):
    """A person's time zone and language."""

    time_zone = forms.ChoiceField(label=_("Time zone"))
    language = forms.ChoiceField(label=_("Language"), required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["time_zone"].choices = [(name, name) for name in time_zone_names()]
        self.fields["language"].choices = [("", _("As the browser asks")), *settings.LANGUAGES]


class TicketIdsField(forms.Field):
    """Ticket ids sent as repeated `ticket` values (the approvals list's checkboxes)."""

    widget = forms.MultipleHiddenInput

    def __init__(self, *, max_count: int, **kwargs):
        self.max_count = max_count
        super().__init__(**kwargs)

    def to_python(self, value) -> list[int]:
        if not value:
            return []
        if isinstance(value, str):
            value = [value]
        ids = []
        for item in value:
            text = str(item).strip()
            if not text.isascii() or not text.isdigit() or int(text) < 1:
                raise forms.ValidationError(_("That is not a list of tickets."), code="invalid")
            if int(text) not in ids:
                ids.append(int(text))
        return ids

    def validate(self, value: list[int]) -> None:
        if not value:
            raise forms.ValidationError(_("Select at least one ticket."), code="required")
        if len(value) > self.max_count:
            raise forms.ValidationError(
                _("Select at most %(max)d tickets at a time.") % {"max": self.max_count},
                code="max_count",
            )


class BulkApproveForm(forms.Form):
    """The approvals list's "Approve selected": up to MAX_TICKETS ticket ids."""

    MAX_TICKETS = 100

    ticket = TicketIdsField(max_count=MAX_TICKETS)
