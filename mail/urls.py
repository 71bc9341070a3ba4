"""The mail API, under /api/: mailboxes (staff) and the inbound endpoint (signed)."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from mail.apis import InboundMailView, MailboxViewSet

router = SimpleRouter(use_regex_path=False)
router.register("mailboxes", MailboxViewSet, basename="mailbox")

urlpatterns: list = [
    # {id}: the mailbox's id (named id, as every path id of the API is).
    path("mail/inbound/<int:id>/", InboundMailView.as_view(), name="mail-inbound"),
    *router.urls,
]
