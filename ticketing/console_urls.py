from django.urls import path

from . import views

app_name = "console"

urlpatterns = [
    path("", views.pool, name="pool"),
    path("my-tickets/", views.my_tickets, name="my-tickets"),
    path("approvals/", views.approvals, name="approvals"),
    path("submit/", views.submit, name="submit"),
    path("tickets/<int:ticket_id>/", views.ticket_detail, name="ticket"),
    path("tickets/<int:ticket_id>/accept/", views.ticket_accept, name="ticket-accept"),
    path("tickets/<int:ticket_id>/reply/", views.ticket_reply, name="ticket-reply"),
    path("tickets/<int:ticket_id>/pause/", views.ticket_pause, name="ticket-pause"),
    path("tickets/<int:ticket_id>/resume/", views.ticket_resume, name="ticket-resume"),
    path("tickets/<int:ticket_id>/complete/", views.ticket_complete, name="ticket-complete"),
    path("tickets/<int:ticket_id>/transfer/", views.ticket_transfer, name="ticket-transfer"),
    path("tickets/<int:ticket_id>/close/", views.ticket_close, name="ticket-close"),
    path("tickets/<int:ticket_id>/approve/", views.ticket_approve, name="ticket-approve"),
    path("tickets/<int:ticket_id>/reject/", views.ticket_reject, name="ticket-reject"),
]
