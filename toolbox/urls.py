"""The toolbox's API, under /api/ (before the router's ticket routes: /api/tickets/bulk/ and
/api/tickets/export/ are not ticket ids)."""

from toolbox.apis import bulk, canned, categories, fields, macros, tags, views

urlpatterns: list = [
    *bulk.urlpatterns,
    *canned.urlpatterns,
    *macros.urlpatterns,
    *tags.urlpatterns,
    *categories.urlpatterns,
    *fields.urlpatterns,
    *views.urlpatterns,
]
