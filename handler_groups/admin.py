from django import forms
from django.contrib import admin
from django.contrib.admin.widgets import FilteredSelectMultiple
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from config.errors import InvalidArgument

from .models import HandlerGroup, MemberCapacity
from .services import ROUTING_FIELDS, check_overflow, handler_group_save, routing_form_fields


class HandlerGroupForm(forms.ModelForm):
    """Edits members with a multi-select; the accessor writes the stored string."""

    members = forms.ModelMultipleChoiceField(
        label=_("members"),
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        required=False,
        widget=FilteredSelectMultiple(_("members"), is_stacked=False),
    )

    class Meta:
        model = HandlerGroup
        fields = [
            "name",
            "leader",
            "escalation_contact",
            "members",
            "assign_strategy",
            "status",
            *routing_form_fields(),
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["members"].initial = self.instance.member_ids

    def clean_overflow_group(self):
        overflow = self.cleaned_data.get("overflow_group")
        try:
            check_overflow(
                group_id=self.instance.pk, overflow_group_id=overflow.pk if overflow else None
            )
        except InvalidArgument as exc:
            raise forms.ValidationError(exc.message) from None
        return overflow


class MemberCapacityInline(admin.TabularInline):
    model = MemberCapacity
    extra = 0
    verbose_name_plural = _("per-member max_active (overrides the group's)")


@admin.register(HandlerGroup)
class HandlerGroupAdmin(admin.ModelAdmin):
    form = HandlerGroupForm
    list_display = ["name", "leader", "assign_strategy", "member_count", "status", "updated"]
    list_filter = ["status", "assign_strategy"]
    search_fields = ["name", "leader__username"]
    readonly_fields = ["last_assign_index"]
    inlines = [MemberCapacityInline]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "name",
                    "leader",
                    "escalation_contact",
                    "members",
                    "assign_strategy",
                    "status",
                    "last_assign_index",
                ]
            },
        ),
        (_("Routing"), {"fields": routing_form_fields()}),
    ]

    @admin.display(description=_("members"))
    def member_count(self, group: HandlerGroup) -> int:
        return len(group.member_ids)

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        selected = [user.pk for user in data["members"]]
        # Keep the stored order (round robin walks it); newcomers go to the end.
        current = HandlerGroup.objects.get(pk=obj.pk).member_ids if change else []
        member_ids = [m for m in current if m in selected] + [
            m for m in selected if m not in current
        ]
        saved = handler_group_save(
            group=obj if change else None,
            name=data["name"],
            member_ids=member_ids,
            assign_strategy=data["assign_strategy"],
            status=data["status"],
            leader_id=data["leader"].pk if data["leader"] else None,
            escalation_contact_id=(
                data["escalation_contact"].pk if data["escalation_contact"] else None
            ),
            **{
                field: (data["overflow_group"].pk if data["overflow_group"] else None)
                if field == "overflow_group_id"
                else data[field]
                for field in ROUTING_FIELDS
            },
        )
        obj.pk = saved.pk
        obj.refresh_from_db()
