from django.contrib import admin
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from config.pagination import EstimatedPaginator

from . import search
from .models import Ticket, TicketRecord, TicketReply
from .transitions import record


class TicketRecordInline(admin.TabularInline):
    model = TicketRecord
    extra = 0
    can_delete = False
    fields = readonly_fields = ("created", "action", "actor", "from_status", "to_status", "detail")

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class TicketReplyInline(admin.TabularInline):
    model = TicketReply
    fk_name = "ticket"
    extra = 0
    can_delete = False
    fields = readonly_fields = ("created", "author", "reply_type", "content")

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Ticket)
class TicketAdmin(admin.ModelAdmin):
    """Read-mostly: state changes go through the API's services. Admins may correct the
    descriptive fields; every such edit is written to the audit trail."""

    # What fits a 1366 px screen beside the filters; the rest (approval, category, response
    # deadline, timeouts) is one filter or one click away.
    list_display = [
        "bill_code",
        "title",
        "priority",
        "handler_group",
        "handler",
        "ticket_status",
        "resolve_deadline",
        "submitted_time",
    ]
    list_filter = [
        # A date filter of fixed choices, not date_hierarchy: its year links read every
        # ticket's date (SELECT DISTINCT over the whole table) on every visit.
        "submitted_time",
        "process_status",
        "ticket_status",
        "priority",
        "handler_group",
        "response_timeout",
        "resolve_timeout",
    ]
    # Searched through indexes by get_search_results (ticketing/search.py); listed here for
    # the admin to show its search box.
    search_fields = ["bill_code", "title", "category", "creator__username", "handler__username"]
    search_help_text = _(
        "Words of three letters or more match a bill code, title, category or username "
        "containing them; shorter ones match a whole bill code or username."
    )
    list_select_related = ["handler_group", "handler"]
    # Counting a million tickets on every page: exact up to a limit, then estimated.
    paginator = EstimatedPaginator
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    inlines = [TicketReplyInline, TicketRecordInline]
    editable_fields = ["title", "content", "priority", "category"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in Ticket._meta.fields if f.name not in self.editable_fields]

    def get_search_results(self, request, queryset, search_term):
        """Each word through the search index or an exact match (ticketing/search.py), not
        Django's LIKE over five columns of two tables (a scan of every ticket)."""
        found = search.search(queryset, search_term, people=("creator", "handler"))
        return found, False

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and form.changed_data:
            record(
                ticket_id=obj.pk,
                action="admin_edit",
                actor_id=request.user.pk,
                now=timezone.now(),
                detail={"fields": form.changed_data},
            )


@admin.register(TicketReply)
class TicketReplyAdmin(admin.ModelAdmin):
    list_display = ["id", "ticket", "author", "reply_type", "created"]
    list_filter = ["reply_type"]
    search_fields = ["ticket__bill_code", "content", "author__username"]
    list_select_related = ["ticket", "author"]
    readonly_fields = ["ticket", "author", "reply_type", "content", "created"]

    def has_add_permission(self, request) -> bool:
        return False
