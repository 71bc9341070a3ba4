"""The admin of the toolbox's items: canned responses, macros and saved views (their scopes'
rules are the API's; here staff see and correct everything)."""

from django import forms
from django.contrib import admin

from config.errors import InvalidArgument

from .macros import validate_actions
from .models import CannedResponse, Macro, SavedView
from .placeholders import check_placeholders


class CannedResponseForm(forms.ModelForm):
    class Meta:
        model = CannedResponse
        fields = ["name", "scope", "owner", "group", "language", "body"]

    def clean_body(self):
        body = self.cleaned_data["body"]
        try:
            check_placeholders(body)
        except InvalidArgument as exc:
            raise forms.ValidationError(exc.message) from exc
        return body


class MacroForm(forms.ModelForm):
    """The steps checked as the API checks them (toolbox.macros.validate_actions)."""

    class Meta:
        model = Macro
        fields = ["name", "scope", "owner", "group", "actions"]

    def clean_actions(self):
        try:
            return validate_actions(self.cleaned_data["actions"])
        except InvalidArgument as exc:
            raise forms.ValidationError(f"{exc.field}: {exc.message}") from exc


@admin.register(CannedResponse)
class CannedResponseAdmin(admin.ModelAdmin):
    form = CannedResponseForm
    list_display = ("name", "scope", "group", "owner", "language", "updated")
    list_filter = ("scope", "group", "language")
    search_fields = ("name", "body")
    raw_id_fields = ("owner",)
    list_select_related = ("group", "owner")


@admin.register(Macro)
class MacroAdmin(admin.ModelAdmin):
    form = MacroForm
    list_display = ("name", "scope", "group", "owner", "updated")
    list_filter = ("scope", "group")
    search_fields = ("name",)
    raw_id_fields = ("owner",)
    list_select_related = ("group", "owner")


@admin.register(SavedView)
class SavedViewAdmin(admin.ModelAdmin):
    list_display = ("name", "scope", "group", "owner", "sort", "order", "updated")
    list_filter = ("scope", "group")
    search_fields = ("name",)
    raw_id_fields = ("owner",)
    list_select_related = ("group", "owner")
