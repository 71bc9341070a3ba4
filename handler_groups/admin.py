from django import forms
from django.contrib import admin
from django.contrib.admin.widgets import FilteredSelectMultiple
from django.contrib.auth import get_user_model

from .models import HandlerGroup
from .services import handler_group_save


class HandlerGroupForm(forms.ModelForm):
    """Edits members with a multi-select; the accessor writes the stored string."""

    members = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        required=False,
        widget=FilteredSelectMultiple("members", is_stacked=False),
    )

    class Meta:
        model = HandlerGroup
        fields = ["name", "leader", "members", "assign_strategy", "status"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["members"].initial = self.instance.member_ids


@admin.register(HandlerGroup)
class HandlerGroupAdmin(admin.ModelAdmin):
    form = HandlerGroupForm
    list_display = ["name", "leader", "assign_strategy", "member_count", "status", "updated"]
    list_filter = ["status", "assign_strategy"]
    search_fields = ["name", "leader__username"]
    readonly_fields = ["last_assign_index"]

    @admin.display(description="members")
    def member_count(self, group: HandlerGroup) -> int:
        return len(group.member_ids)

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        saved = handler_group_save(
            group=obj if change else None,
            name=data["name"],
            member_ids=[user.pk for user in data["members"]],
            assign_strategy=data["assign_strategy"],
            status=data["status"],
            leader_id=data["leader"].pk if data["leader"] else None,
        )
        obj.pk = saved.pk
        obj.refresh_from_db()
