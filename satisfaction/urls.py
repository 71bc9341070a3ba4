"""The satisfaction API, under /api/ (before the router's ticket routes)."""

from django.urls import path

from .apis import TicketSatisfactionView

urlpatterns: list = [
    path(
        "tickets/<int:id>/satisfaction/",
        TicketSatisfactionView.as_view(),
        name="ticket-satisfaction",
    ),
]
