from django.contrib import admin

from .models import TicketLink, Watcher


@admin.register(Watcher)
class WatcherAdmin(admin.ModelAdmin):
    list_display = ("ticket", "user", "source", "added")
    list_select_related = ("ticket", "user")
    raw_id_fields = ("ticket", "user", "added_by")
    list_filter = ("source",)
    show_full_result_count = False


@admin.register(TicketLink)
class TicketLinkAdmin(admin.ModelAdmin):
    list_display = ("source", "kind", "target", "created")
    list_select_related = ("source", "target")
    raw_id_fields = ("source", "target", "created_by")
    list_filter = ("kind",)
    show_full_result_count = False
