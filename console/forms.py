"""Console forms: they validate the shape of what a page sends; services decide the rest."""

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.validators import RegexValidator
from django.utils.translation import gettext_lazy as _

from accounts.models import time_zone_names
from handler_groups.models import GroupStatus, HandlerGroup
from handler_groups.selectors import group_ids_for_user
from ticketing.models import Priority, ReplyType, TicketStatus

POOL_VIEWS = (
    ("pending", "Pending"),
    ("my_handling", "My handling"),
    ("all", "All"),
)

category_validator = RegexValidator(r"^[A-Za-z0-9_.-]*$", "Letters, digits, '.', '_' and '-' only.")


def _enabled_groups():
    return HandlerGroup.objects.filter(status=GroupStatus.ENABLED).order_by("name")


class PoolFilterForm(forms.Form):
    """The pool's tab and filters, read from the query string."""

    view = forms.ChoiceField(choices=POOL_VIEWS, required=False)
    priority = forms.TypedChoiceField(
        choices=[("", "Any priority"), *Priority.choices],
        coerce=int,
        empty_value=None,
        required=False,
    )
    category = forms.CharField(max_length=50, required=False, validators=[category_validator])
    ticket_status = forms.TypedChoiceField(
        label="Status",
        choices=[("", "Any status"), *TicketStatus.choices],
        coerce=int,
        empty_value=None,
        required=False,
    )
    handler_group = forms.ModelChoiceField(
        label="Group",
        queryset=HandlerGroup.objects.none(),
        empty_label="Any group",
        required=False,
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        # Offer the groups whose tickets the user can see in the pool.
        groups = HandlerGroup.objects.order_by("name")
        if not user.is_staff:
            groups = groups.filter(pk__in=group_ids_for_user(user))
        self.fields["handler_group"].queryset = groups

    def pool_arguments(self) -> dict:
        """Keyword arguments for `ticketing.selectors.pool_for`."""
        data = self.cleaned_data
        group = data.get("handler_group")
        return {
            "view": data.get("view") or "pending",
            "priority": data.get("priority"),
            "category": data.get("category") or None,
            "ticket_status": data.get("ticket_status"),
            "handler_group": group.pk if group else None,
        }


class TicketSubmitForm(forms.Form):
    title = forms.CharField(max_length=200)
    content = forms.CharField(
        label="Describe the problem", max_length=50_000, widget=forms.Textarea(attrs={"rows": 6})
    )
    priority = forms.TypedChoiceField(choices=Priority.choices, coerce=int, initial=Priority.MEDIUM)
    category = forms.CharField(
        max_length=50,
        required=False,
        validators=[category_validator],
        help_text="Optional short code, e.g. vpn or printer.",
    )
    handler_group = forms.ModelChoiceField(
        label="Team",
        queryset=HandlerGroup.objects.none(),
        required=False,
        empty_label="Not sure — let the desk route it",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["handler_group"].queryset = _enabled_groups()

    def submit_arguments(self) -> dict:
        """Keyword arguments for `ticketing.services.ticket_submit` (without the creator)."""
        data = self.cleaned_data
        group = data.get("handler_group")
        return {
            "title": data["title"],
            "content": data["content"],
            "priority": data["priority"],
            "category": data.get("category") or "",
            "handler_group_id": group.pk if group else None,
        }


class ReplyForm(forms.Form):
    reply_type = forms.TypedChoiceField(
        label="Visibility",
        choices=[
            (ReplyType.PUBLIC, "Public — the applicant sees it"),
            (ReplyType.INTERNAL, "Internal note — handlers only"),
        ],
        coerce=int,
        initial=ReplyType.PUBLIC,
    )
    content = forms.CharField(
        label="Reply", max_length=50_000, widget=forms.Textarea(attrs={"rows": 4})
    )

    def __init__(self, *args, allow_internal: bool, **kwargs):
        super().__init__(*args, **kwargs)
        if not allow_internal:
            self.fields["reply_type"].choices = [(ReplyType.PUBLIC, "Public")]
            self.fields["reply_type"].widget = forms.HiddenInput()


class RejectForm(forms.Form):
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))


class DeclineForm(forms.Form):
    reason = forms.CharField(
        label="Reason (optional)",
        max_length=500,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "e.g. not my area"}),
    )


class TransferForm(forms.Form):
    handler_id = forms.TypedChoiceField(
        label="To handler", coerce=int, empty_value=None, required=False
    )
    handler_group_id = forms.TypedChoiceField(
        label="To group", coerce=int, empty_value=None, required=False
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        groups = list(_enabled_groups())
        member_ids = {member_id for group in groups for member_id in group.member_ids}
        handlers = (
            get_user_model().objects.filter(pk__in=member_ids, is_active=True).order_by("username")
        )
        self.fields["handler_id"].choices = [("", "Keep / let the group route it")] + [
            (user.pk, user.get_username()) for user in handlers
        ]
        self.fields["handler_group_id"].choices = [("", "Keep the current group")] + [
            (group.pk, group.name) for group in groups
        ]

    def clean(self):
        data = super().clean()
        if data.get("handler_id") is None and data.get("handler_group_id") is None:
            raise forms.ValidationError("Choose a handler, a group or both.")
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
