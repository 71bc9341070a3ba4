from django import forms
from django.contrib import admin
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from .channels import channel_choices
from .models import (
    DeliveryStatus,
    Notification,
    NotifyTemplate,
    NotifyTemplateTranslation,
    OutboxDelivery,
    Webhook,
)
from .rendering import TemplateError, placeholders, render
from .sending import enqueue_deliveries


class NotifyTemplateTranslationInline(admin.StackedInline):
    """The template's wording in the other languages (recipients read their language's)."""

    model = NotifyTemplateTranslation
    extra = 0
    fields = ["language", "title", "content"]


def template_code_choices() -> list[tuple[str, str]]:
    return [
        (code, f"{name} ({code})")
        for code, name in NotifyTemplate.objects.order_by("code").values_list("code", "name")
    ]


class NotifyTemplateForm(forms.ModelForm):
    """Channels as one checkbox per registered channel, not a JSON list to type; the model's
    clean() still refuses an unknown one."""

    channels = forms.MultipleChoiceField(
        label=_("channels"),
        choices=channel_choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )

    class Meta:
        model = NotifyTemplate
        fields = ["code", "name", "title", "content", "channels", "enabled", "sample_params"]


class WebhookForm(forms.ModelForm):
    url = forms.URLField(label=_("URL"), max_length=500, assume_scheme="https")
    template_codes = forms.MultipleChoiceField(
        label=_("notification templates"),
        choices=template_code_choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("None ticked: every template sent on the webhook channel."),
    )

    class Meta:
        model = Webhook
        fields = ["name", "url", "secret", "template_codes", "timeout_seconds", "enabled"]


@admin.register(NotifyTemplate)
class NotifyTemplateAdmin(admin.ModelAdmin):
    form = NotifyTemplateForm
    inlines = [NotifyTemplateTranslationInline]
    list_display = ["code", "name", "channels", "enabled", "updated"]
    list_filter = ["enabled"]
    search_fields = ["code", "name", "title", "content"]
    readonly_fields = ["preview", "parameters"]
    fields = [
        "code",
        "name",
        "title",
        "content",
        "channels",
        "enabled",
        "sample_params",
        "parameters",
        "preview",
    ]

    @admin.display(description=_("parameters used"))
    def parameters(self, template: NotifyTemplate) -> str:
        return ", ".join(sorted(placeholders(template.title) | placeholders(template.content)))

    @admin.display(description=_("preview with the sample parameters"))
    def preview(self, template: NotifyTemplate) -> str:
        try:
            title = render(template.title, template.sample_params or {})
            content = render(template.content, template.sample_params or {})
        except TemplateError as exc:
            return format_html(
                '<span style="color:#b00">{}</span>',
                gettext("Cannot render: %(error)s") % {"error": exc},
            )
        return format_html("<strong>{}</strong><br>{}", title, content)


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ["id", "recipient", "template_code", "title", "created", "read_at"]
    list_filter = ["template_code"]
    search_fields = ["title", "dedupe_key", "recipient__username"]
    list_select_related = ["recipient"]
    readonly_fields = [f.name for f in Notification._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(OutboxDelivery)
class OutboxDeliveryAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "channel",
        "target",
        "status",
        "attempts",
        "next_attempt_at",
        "sent_at",
        "short_error",
    ]
    list_filter = ["status", "channel"]
    search_fields = ["target", "last_error", "idempotency_key"]
    readonly_fields = [f.name for f in OutboxDelivery._meta.fields]
    actions = ["retry_now"]

    @admin.display(description=_("last error"))
    def short_error(self, delivery: OutboxDelivery) -> str:
        return delivery.last_error[:120]

    @admin.action(description=_("Retry the selected failed deliveries now"))
    def retry_now(self, request, queryset):
        ids = list(queryset.filter(status=DeliveryStatus.FAILED).values_list("pk", flat=True))
        queryset.filter(pk__in=ids).update(
            status=DeliveryStatus.PENDING, attempts=0, next_attempt_at=timezone.now()
        )
        enqueue_deliveries(ids)
        self.message_user(
            request,
            ngettext(
                "%(count)d delivery queued again.", "%(count)d deliveries queued again.", len(ids)
            )
            % {"count": len(ids)},
        )

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    form = WebhookForm
    list_display = ["name", "url", "enabled", "timeout_seconds"]
    list_filter = ["enabled"]
