"""Mail in admin: mailboxes (their secrets written, never shown), the messages received and
sent (read-only: the thread index and the duplicate check), and failed mail, to look at,
download, retry after a fix, or dismiss. Every change goes through mail.services."""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.defaultfilters import truncatechars
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from config.errors import ConflictError, InvalidArgument
from config.pagination import EstimatedPaginator

from .models import (
    FailedMail,
    FailedMailStatus,
    Mailbox,
    MailMessage,
    MessageOutcome,
)
from .serializers import inbound_url
from .services.failed import failed_mail_dismiss, failed_mail_retry
from .services.mailboxes import (
    KEPT,
    MAILBOX_FIELDS,
    SECRET_FIELDS,
    mailbox_check,
    mailbox_create,
    mailbox_delete,
    mailbox_update,
)

# The form's field for each of the service's (the group by its relation's name).
_FORM_FIELD = {"handler_group_id": "handler_group"}


class MailboxForm(forms.ModelForm):
    """The IMAP password and the inbound secret as password inputs that never show what is
    stored: left empty they keep it, a tick clears it. The rules are the service's
    (mailbox_check), shown on the field they name."""

    imap_password = forms.CharField(
        label=_("IMAP password"),
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
    )
    clear_imap_password = forms.BooleanField(label=_("clear the IMAP password"), required=False)
    inbound_secret = forms.CharField(
        label=_("inbound secret"),
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text=_(
            "The key of the HTTP endpoint's X-Signature (HMAC-SHA256 of the message). Without "
            "one the endpoint refuses every message."
        ),
    )
    clear_inbound_secret = forms.BooleanField(label=_("clear the inbound secret"), required=False)

    class Meta:
        model = Mailbox
        fields = [
            "address",
            "name",
            "handler_group",
            "priority",
            "category",
            "unknown_senders",
            "imap_host",
            "imap_port",
            "imap_tls",
            "imap_user",
            "imap_folder",
            "max_message_bytes",
            "active",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.checked: dict[str, Any] = {}
        for field in SECRET_FIELDS:
            stored = bool(self.instance.pk and getattr(self.instance, f"{field}_encrypted"))
            base = self.fields[field].help_text
            note = (
                gettext("One is stored (encrypted); leave empty to keep it.")
                if stored
                else gettext("None stored.")
            )
            self.fields[field].help_text = f"{base} {note}".strip()

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        values: dict[str, Any] = {
            field: data.get(_FORM_FIELD.get(field, field))
            for field in MAILBOX_FIELDS
            if field not in SECRET_FIELDS
        }
        values["handler_group_id"] = data["handler_group"].pk if data["handler_group"] else None
        for field in SECRET_FIELDS:
            if data.get(field):
                values[field] = data[field]
            elif data.get(f"clear_{field}") or not self.instance.pk:
                values[field] = ""
            else:
                stored = getattr(self.instance, f"{field}_encrypted")
                values[field] = KEPT if stored else ""
        try:
            self.checked = mailbox_check(mailbox_id=self.instance.pk, values=values)
        except InvalidArgument as exc:
            name = _FORM_FIELD.get(exc.field, exc.field)
            self.add_error(name if name in self.fields else None, exc.message)
        return data

    def validate_unique(self):
        """The service's check (case-insensitive) says it, once."""


@admin.register(Mailbox)
class MailboxAdmin(admin.ModelAdmin):
    form = MailboxForm
    list_display = ["address", "name", "handler_group", "active", "last_fetched", "last_error"]
    list_filter = ["active"]
    search_fields = ["address", "name"]
    list_select_related = ["handler_group", "imap_cursor"]
    readonly_fields = ["inbound_url", "last_fetched", "last_error", "created", "updated"]
    fieldsets = [
        (None, {"fields": ["address", "name", "active"]}),
        (
            _("New tickets"),
            {"fields": ["handler_group", "priority", "category", "unknown_senders"]},
        ),
        (
            _("IMAP"),
            {
                "fields": [
                    "imap_host",
                    "imap_port",
                    "imap_tls",
                    "imap_user",
                    "imap_password",
                    "clear_imap_password",
                    "imap_folder",
                    "last_fetched",
                    "last_error",
                ]
            },
        ),
        (
            _("Pipe and HTTP"),
            {
                "fields": [
                    "inbound_secret",
                    "clear_inbound_secret",
                    "inbound_url",
                    "max_message_bytes",
                ]
            },
        ),
        (None, {"fields": ["created", "updated"]}),
    ]

    @admin.display(description=_("HTTP endpoint"))
    def inbound_url(self, mailbox: Mailbox) -> str:
        return inbound_url(mailbox) if mailbox.pk else "-"

    @admin.display(description=_("last fetched"))
    def last_fetched(self, mailbox: Mailbox):
        cursor = getattr(mailbox, "imap_cursor", None)
        return cursor.fetched if cursor is not None else None

    @admin.display(description=_("last error"))
    def last_error(self, mailbox: Mailbox) -> str:
        cursor = getattr(mailbox, "imap_cursor", None)
        return truncatechars(cursor.last_error, 80) if cursor is not None else ""

    def save_model(self, request, obj, form, change):
        values = {k: v for k, v in form.checked.items() if v is not KEPT}
        if change:
            saved = mailbox_update(mailbox_id=obj.pk, **values)
        else:
            saved = mailbox_create(**values)
        obj.pk = saved.pk
        obj.refresh_from_db()

    def has_delete_permission(self, request, obj=None) -> bool:
        """Only a mailbox that never had mail (mailbox_delete): deactivate the others."""
        if obj is not None and (
            MailMessage.objects.filter(mailbox=obj).exists()
            or FailedMail.objects.filter(mailbox=obj).exists()
        ):
            return False
        return super().has_delete_permission(request, obj)

    def delete_model(self, request, obj):
        mailbox_delete(mailbox_id=obj.pk)

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # one at a time, through the service's check
        return actions


@admin.register(MailMessage)
class MailMessageAdmin(admin.ModelAdmin):
    """Read-only: what was received and sent is a record, and the thread index."""

    list_display = ["at", "direction", "outcome", "address", "subject", "ticket", "mailbox"]
    list_filter = ["direction", "outcome", "mailbox"]
    search_fields = ["message_id", "address", "subject"]
    list_select_related = ["ticket", "mailbox"]
    # A desk's millions of messages, newest first (the primary key's order), counted exactly
    # only up to a limit (config.pagination.EstimatedPaginator).
    ordering = ["-id"]
    paginator = EstimatedPaginator
    show_full_result_count = False  # a count of every message on each page is not needed

    def get_search_results(self, request, queryset, search_term):
        # A Message-ID pasted from a mail client comes in angle brackets; they are not stored.
        return super().get_search_results(request, queryset, search_term.strip().strip("<>"))

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


DATABASE_DOWN = (OperationalError, InterfaceError)


@admin.register(FailedMail)
class FailedMailAdmin(admin.ModelAdmin):
    """Messages kept whole: read them (headers, the .eml), then retry (after a fix, or to
    release a held flood) or dismiss. Nothing here edits or deletes one."""

    list_display = ["received", "reason", "sender", "subject", "status", "mailbox", "size"]
    list_filter = ["status", "reason", "mailbox"]
    search_fields = ["sender", "subject", "message_id"]
    list_select_related = ["mailbox"]
    actions = ["retry", "dismiss"]
    fields = (
        "commands",
        "status",
        "reason",
        "detail",
        "mailbox",
        "source",
        "received",
        "retried",
        "bounced",
        "message_id",
        "sender",
        "subject",
        "size",
        "headers",
        "download",
    )
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj, form, change):
        """Every field is read-only: nothing to write (the commands are Retry, Dismiss)."""

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # Nothing to save: the page's commands are Retry and Dismiss.
        extra_context = {
            **(extra_context or {}),
            "show_save": False,
            "show_save_and_continue": False,
            "show_save_and_add_another": False,
            "show_delete": False,
        }
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        prefix = f"{self.opts.app_label}_{self.opts.model_name}"
        view = self.admin_site.admin_view
        return [
            path("<int:object_id>/raw/", view(self.raw_view), name=f"{prefix}_raw"),
            path("<int:object_id>/retry/", view(self.retry_view), name=f"{prefix}_retry"),
            path("<int:object_id>/dismiss/", view(self.dismiss_view), name=f"{prefix}_dismiss"),
            *super().get_urls(),
        ]

    @admin.display(description=_("headers"))
    def headers(self, failed: FailedMail) -> str:
        raw = bytes(failed.raw)[:65536]
        for separator in (b"\r\n\r\n", b"\n\n"):
            end = raw.find(separator)
            if end != -1:
                raw = raw[:end]
                break
        return format_html(
            '<pre style="white-space:pre-wrap;max-width:100ch">{}</pre>',
            raw.decode("utf-8", errors="replace"),
        )

    @admin.display(description=_("message"))
    def download(self, failed: FailedMail) -> str:
        url = reverse("admin:mail_failedmail_raw", args=[failed.pk])
        return format_html(
            '<a href="{}" download>{}</a> ({})',
            url,
            gettext("Download the .eml"),
            ngettext("%(n)d byte", "%(n)d bytes", failed.size) % {"n": failed.size},
        )

    @admin.display(description=_("commands"))
    def commands(self, failed: FailedMail) -> str:
        if failed.status != FailedMailStatus.WAITING:
            return "-"
        return format_html(
            '<button type="submit" class="button" formaction="{}">{}</button> '
            '<button type="submit" class="button" formaction="{}">{}</button>',
            reverse("admin:mail_failedmail_retry", args=[failed.pk]),
            gettext("Retry"),
            reverse("admin:mail_failedmail_dismiss", args=[failed.pk]),
            gettext("Dismiss"),
        )

    def raw_view(self, request, object_id: int):
        failed = get_object_or_404(FailedMail, pk=object_id)
        if not self.has_view_permission(request, failed):
            return HttpResponse(status=403)
        response = HttpResponse(bytes(failed.raw), content_type="message/rfc822")
        response["Content-Disposition"] = f'attachment; filename="failed-mail-{failed.pk}.eml"'
        return response

    def retry_view(self, request, object_id: int):
        return self._command(request, object_id, self._retry)

    def dismiss_view(self, request, object_id: int):
        return self._command(request, object_id, self._dismiss)

    def _command(self, request, object_id: int, run):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        failed = get_object_or_404(FailedMail, pk=object_id)
        if not self.has_change_permission(request, failed):
            return HttpResponse(status=403)
        run(request, [failed.pk])
        return HttpResponseRedirect(reverse("admin:mail_failedmail_change", args=[failed.pk]))

    @admin.action(description=_("Retry the selected messages"), permissions=["change"])
    def retry(self, request, queryset):
        self._retry(request, list(queryset.values_list("pk", flat=True)))

    @admin.action(description=_("Dismiss the selected messages"), permissions=["change"])
    def dismiss(self, request, queryset):
        self._dismiss(request, list(queryset.values_list("pk", flat=True)))

    def _retry(self, request, ids: list[int]) -> None:
        done = again = skipped = 0
        now = timezone.now()
        for failed_mail_id in ids:
            try:
                result = failed_mail_retry(failed_mail_id=failed_mail_id, now=now)
            except ConflictError:
                skipped += 1
                continue
            except DATABASE_DOWN:
                self.message_user(
                    request,
                    gettext("The database did not answer; try again in a moment."),
                    messages.ERROR,
                )
                return
            if result.outcome == MessageOutcome.KEPT and result.failed_mail_id == failed_mail_id:
                again += 1
            else:
                done += 1
        if done:
            self.message_user(
                request,
                ngettext("%(n)d message received.", "%(n)d messages received.", done) % {"n": done},
                messages.SUCCESS,
            )
        if again:
            self.message_user(
                request,
                ngettext(
                    "%(n)d message failed again: see its reason.",
                    "%(n)d messages failed again: see their reasons.",
                    again,
                )
                % {"n": again},
                messages.WARNING,
            )
        if skipped:
            self.message_user(
                request,
                ngettext(
                    "%(n)d message was not waiting: left as it is.",
                    "%(n)d messages were not waiting: left as they are.",
                    skipped,
                )
                % {"n": skipped},
                messages.WARNING,
            )

    def _dismiss(self, request, ids: list[int]) -> None:
        done = skipped = 0
        for failed_mail_id in ids:
            try:
                failed_mail_dismiss(failed_mail_id=failed_mail_id)
                done += 1
            except ConflictError:
                skipped += 1
        if done:
            self.message_user(
                request,
                ngettext("%(n)d message dismissed.", "%(n)d messages dismissed.", done)
                % {"n": done},
                messages.SUCCESS,
            )
        if skipped:
            self.message_user(
                request,
                ngettext(
                    "%(n)d message was not waiting: left as it is.",
                    "%(n)d messages were not waiting: left as they are.",
                    skipped,
                )
                % {"n": skipped},
                messages.WARNING,
            )
