from django.urls import path

from . import urls_fields, urls_macros, urls_tags, urls_views
from .views import applicant, approvals, home, presence, profile, search, sla, supervisor, ticket
from .views import links as link_views
from .views import merging as merging_views
from .views import satisfaction as satisfaction_views
from .views import watchers as watcher_views

app_name = "console"

urlpatterns = [
    # Home by role: My work for agents, else a redirect to Approvals or My tickets.
    path("", home.home, name="pool"),
    path("my-tickets/", applicant.my_tickets, name="my-tickets"),
    path("approvals/", approvals.approvals, name="approvals"),
    path("approvals/bulk/", approvals.bulk_approve, name="approvals-bulk"),
    path("submit/", applicant.submit, name="submit"),
    path("search/", search.search, name="search"),
    path("sla/", sla.sla_compliance, name="sla"),
    path("supervisor/", supervisor.supervisor, name="supervisor"),
    path("supervisor/simulate/", supervisor.supervisor_simulate, name="supervisor-simulate"),
    path("profile/", profile.profile, name="profile"),
    path("profile/time-zone/", profile.detected_time_zone, name="profile-time-zone"),
    path("presence/", presence.set_presence, name="presence"),
    path("presence/heartbeat/", presence.presence_heartbeat, name="presence-heartbeat"),
    path("language/", profile.switch_language, name="language"),
    path("preview/", ticket.reply_preview, name="preview"),
    path("tickets/<int:ticket_id>/", ticket.ticket_detail, name="ticket"),
    path("tickets/<int:ticket_id>/accept/", ticket.ticket_accept, name="ticket-accept"),
    path("tickets/<int:ticket_id>/decline/", ticket.ticket_decline, name="ticket-decline"),
    path("tickets/<int:ticket_id>/reply/", ticket.ticket_reply, name="ticket-reply"),
    path("tickets/<int:ticket_id>/activity/", ticket.ticket_activity, name="ticket-activity"),
    path("tickets/<int:ticket_id>/pause/", ticket.ticket_pause, name="ticket-pause"),
    path("tickets/<int:ticket_id>/resume/", ticket.ticket_resume, name="ticket-resume"),
    path("tickets/<int:ticket_id>/complete/", ticket.ticket_complete, name="ticket-complete"),
    path("tickets/<int:ticket_id>/reopen/", ticket.ticket_reopen, name="ticket-reopen"),
    path("tickets/<int:ticket_id>/transfer/", ticket.ticket_transfer, name="ticket-transfer"),
    path("tickets/<int:ticket_id>/close/", ticket.ticket_close, name="ticket-close"),
    path("tickets/<int:ticket_id>/cancel/", ticket.ticket_cancel, name="ticket-cancel"),
    # The merging card (console/views/merging.py).
    path("tickets/<int:ticket_id>/merge/", merging_views.ticket_merge_view, name="ticket-merge"),
    # The links card (console/views/links.py).
    path("tickets/<int:ticket_id>/links/", link_views.link_add, name="ticket-link-add"),
    path(
        "tickets/<int:ticket_id>/links/<int:link_id>/remove/",
        link_views.link_remove,
        name="ticket-link-remove",
    ),
    # The watchers card (console/views/watchers.py).
    path("tickets/<int:ticket_id>/watchers/", watcher_views.watcher_add, name="ticket-watcher-add"),
    path(
        "tickets/<int:ticket_id>/watchers/watch/",
        watcher_views.watcher_watch,
        name="ticket-watch",
    ),
    path(
        "tickets/<int:ticket_id>/watchers/<int:user_id>/remove/",
        watcher_views.watcher_remove,
        name="ticket-watcher-remove",
    ),
    path("tickets/<int:ticket_id>/approve/", approvals.ticket_approve, name="ticket-approve"),
    # The satisfaction card (console/views/satisfaction.py).
    path("tickets/<int:ticket_id>/rate/", satisfaction_views.ticket_rate, name="ticket-rate"),
    path("tickets/<int:ticket_id>/reject/", approvals.ticket_reject, name="ticket-reject"),
]

# The toolbox's pages and forms (tags, custom fields, macros, saved views and bulk actions).
urlpatterns += [
    *urls_tags.urlpatterns,
    *urls_fields.urlpatterns,
    *urls_macros.urlpatterns,
    *urls_views.urlpatterns,
]
