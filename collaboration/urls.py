"""The collaboration API, under /api/ (before the router's ticket routes)."""

from django.urls import path

from collaboration.apis import links, merging, watchers

urlpatterns: list = [
    # watchers
    path(
        "tickets/<int:id>/watchers/",
        watchers.TicketWatchersView.as_view(),
        name="ticket-watchers",
    ),
    path(
        "tickets/<int:id>/watchers/<int:user_id>/",
        watchers.TicketWatcherView.as_view(),
        name="ticket-watcher",
    ),
    path(
        "tickets/<int:id>/mentionable/",
        watchers.TicketMentionableView.as_view(),
        name="ticket-mentionable",
    ),
    # links
    path("tickets/<int:id>/links/", links.TicketLinksView.as_view(), name="ticket-links"),
    path(
        "tickets/<int:id>/links/<int:link_id>/",
        links.TicketLinkView.as_view(),
        name="ticket-link",
    ),
    # merging
    path("tickets/<int:id>/merge/", merging.TicketMergeView.as_view(), name="ticket-merge"),
]
