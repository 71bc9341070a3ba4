from django.contrib import admin
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from config.pagination import EstimatedPaginator

from . import categories, fields, search
from .models import Category, Tag, Ticket, TicketField, TicketRecord, TicketReply
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


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    """Saved through ticketing.categories: a rename carries over to the tickets, SLA rules
    and mailboxes holding the old name, in the same transaction (slow for a category of
    many tickets: see that module)."""

    list_display = ["name", "handler_group", "active", "order"]
    list_editable = ["active", "order"]
    list_filter = ["active"]
    search_fields = ["name"]
    list_select_related = ["handler_group"]
    fields = ["name", "translations", "handler_group", "active", "order"]

    def save_model(self, request, obj, form, change):
        values = {
            "name": obj.name,
            "translations": obj.translations,
            "handler_group_id": obj.handler_group_id,
            "active": obj.active,
            "order": obj.order,
        }
        if change:
            saved = categories.category_update(category_id=obj.pk, values=values)
        else:
            saved = categories.category_create(values=values)
        obj.pk = saved.pk

    def has_delete_permission(self, request, obj=None) -> bool:
        # Tickets keep the name: retire a category (active off) rather than delete it.
        return False


@admin.register(TicketField)
class TicketFieldAdmin(admin.ModelAdmin):
    """A field's key and type are fixed once created (the tickets' values are under the
    key); deleting one that tickets hold values for deactivates it (ticketing.fields)."""

    list_display = ["key", "label", "type", "required", "active", "order"]
    list_filter = ["type", "active", "required", "categories"]
    search_fields = ["key", "label"]
    filter_horizontal = ["categories"]
    fields = [
        "key",
        "label",
        "label_translations",
        "type",
        "required",
        "choices",
        "help_text",
        "categories",
        "order",
        "active",
    ]

    def get_readonly_fields(self, request, obj=None):
        return ["key", "type"] if obj is not None else []

    def delete_model(self, request, obj):
        fields.field_delete(field_id=obj.pk)

    def delete_queryset(self, request, queryset):
        for field_id in queryset.values_list("pk", flat=True):
            fields.field_delete(field_id=field_id)


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    """What the tags in use are and how many tickets carry each: kept by ticketing.tags with
    the tickets' own `tags`, so read-only here."""

    list_display = ["name", "ticket_count"]
    search_fields = ["name"]
    readonly_fields = ["name", "ticket_count"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
