"""The console's routes of saved views and bulk actions (the pool page lists a saved view by
`?saved_view=<id>`; the bulk bar posts here)."""

from django.urls import path

from .views import pool

urlpatterns: list = [
    path("tickets/bulk/", pool.bulk_action, name="tickets-bulk"),
    path("views/", pool.view_save, name="view-save"),
    path("views/<int:view_id>/delete/", pool.view_delete, name="view-delete"),
]
