"""The mail API: mailboxes for staff (/api/mailboxes/), and the endpoint providers post
received mail to (/api/mail/inbound/{id}/), authenticated by the message's signature."""

import hashlib
import hmac
import logging

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import exceptions, mixins, permissions, status, viewsets
from rest_framework.response import Response
from rest_framework.views import APIView

from config.limits import PayloadTooLarge
from config.openapi import DetailErrorBody, errors
from config.throttling import AnonThrottle

from .crypto import SecretUnreadable
from .models import Mailbox
from .serializers import InboundAcceptedSerializer, MailboxSerializer
from .services import intake
from .services.mailboxes import mailbox_create, mailbox_delete, mailbox_update

logger = logging.getLogger(__name__)

# The database did not answer (down, restarting, failed over): the provider is told to
# come back, and nothing was taken.
DATABASE_DOWN = (OperationalError, InterfaceError)
RETRY_AFTER_SECONDS = 30
# Per mailbox and sending address; THROTTLE_RATES["mail_inbound"] overrides it. A provider
# relays a busy mailbox's every message from a handful of addresses: far above the anonymous
# rate, and a 429 (with Retry-After) is retried by every provider, never lost.
DEFAULT_INBOUND_RATE = "600/min"


@extend_schema_view(
    list=extend_schema(
        summary="List mailboxes",
        responses={200: MailboxSerializer(many=True), **errors(400, 401, 403)},
    ),
    retrieve=extend_schema(
        summary="Get a mailbox", responses={200: MailboxSerializer, **errors(401, 403, 404)}
    ),
    create=extend_schema(
        summary="Create a mailbox",
        responses={201: MailboxSerializer, **errors(400, 401, 403)},
    ),
    partial_update=extend_schema(
        summary="Change some settings of a mailbox",
        description="Fields left out keep their values, the IMAP password and the inbound "
        "secret included; an empty password or secret clears it.",
        responses={200: MailboxSerializer, **errors(400, 401, 403, 404)},
    ),
    destroy=extend_schema(
        summary="Delete a mailbox that never had mail",
        description="A mailbox that received or sent mail is a 409: its tickets' threads "
        "and its failed mail need it. Deactivate it instead (PATCH active: false).",
        responses={204: None, **errors(401, 403, 404, 409)},
    ),
)
class MailboxViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Mailboxes, for staff only."""

    queryset = Mailbox.objects.select_related("imap_cursor").order_by("id")
    serializer_class = MailboxSerializer
    lookup_value_converter = "int"  # a non-numeric id is no route (404), never a 500
    permission_classes = [permissions.IsAuthenticated, permissions.IsAdminUser]

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        mailbox = mailbox_create(**serializer.validated_data)
        return Response(
            self.get_serializer(self._fresh(mailbox.pk)).data, status=status.HTTP_201_CREATED
        )

    def partial_update(self, request, *args, **kwargs):
        mailbox = self.get_object()
        serializer = self.get_serializer(mailbox, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        mailbox_update(mailbox_id=mailbox.pk, **serializer.validated_data)
        return Response(self.get_serializer(self._fresh(mailbox.pk)).data)

    def destroy(self, request, *args, **kwargs):
        mailbox = self.get_object()
        mailbox_delete(mailbox_id=mailbox.pk)
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _fresh(self, mailbox_id: int) -> Mailbox:
        return self.get_queryset().get(pk=mailbox_id)


class InboundThrottle(AnonThrottle):
    """Per mailbox and client address: one mailbox's provider never uses up another's
    allowance, and a stranger posting bad signatures never uses up the provider's."""

    scope = "mail_inbound"

    def get_rate(self):
        return settings.THROTTLE_RATES.get(self.scope, DEFAULT_INBOUND_RATE)

    def get_cache_key(self, request, view):
        ident = f"{view.kwargs.get('id')}:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}


SIGNATURE_HEADER = OpenApiParameter(
    "X-Signature",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=True,
    description="sha256=<hex HMAC-SHA256 of the body, keyed with the mailbox's inbound secret>",
)


class InboundMailView(APIView):
    """Received mail forwarded by a provider's webhook. No account signs in: the body's
    HMAC under the mailbox's inbound secret is the authentication."""

    authentication_classes: list = []
    permission_classes = [permissions.AllowAny]
    throttle_classes = [InboundThrottle]

    @extend_schema(
        summary="Receive a message posted by a mail provider",
        description="The raw message (RFC 5322) is the body, whatever the Content-Type says "
        "(message/rfc822 is usual). 202 once the desk is responsible for it: a ticket, a reply, "
        "a duplicate, an automatic message or bounce, a refusal, or kept in failed mail. "
        "Over the mailbox's max_message_bytes is a 413 and nothing is kept; a 503 (database "
        "down) or 429 carries Retry-After: send it again then.",
        request={"message/rfc822": OpenApiTypes.BINARY},
        parameters=[SIGNATURE_HEADER],
        auth=[],
        responses={
            202: InboundAcceptedSerializer,
            **errors(400, 401, 404, 413),
            429: OpenApiResponse(DetailErrorBody, description="Too many; see Retry-After."),
            503: OpenApiResponse(
                DetailErrorBody, description="The database is down; see Retry-After."
            ),
        },
    )
    def post(self, request, id: int):
        try:
            mailbox = Mailbox.objects.filter(pk=id, active=True).first()
        except DATABASE_DOWN as exc:
            return _unavailable(exc)
        if mailbox is None:
            raise exceptions.NotFound()
        secret = _secret(mailbox)
        if not secret:
            raise exceptions.AuthenticationFailed(_("This mailbox takes no mail over HTTP."))
        limit = mailbox.max_message_bytes
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        if declared > limit:
            raise PayloadTooLarge(limit)  # unread
        # Read as bytes, capped, whatever the Content-Type: no parser sees the message.
        raw = request._request.read(limit + 1)
        if len(raw) > limit:
            raise PayloadTooLarge(limit)
        if not _signed(raw, secret, request.META.get("HTTP_X_SIGNATURE", "")):
            raise exceptions.AuthenticationFailed(_("Bad or missing X-Signature."))
        if not raw.strip():
            raise exceptions.ValidationError({"body": [_("The message is empty.")]})
        try:
            received = intake.receive(mailbox=mailbox, raw=raw, source="http")
        except DATABASE_DOWN as exc:
            return _unavailable(exc)
        body = InboundAcceptedSerializer(
            {
                "outcome": received.outcome,
                "message_id": received.message_id,
                "ticket_id": received.ticket_id,
                "reply_id": received.reply_id,
                "failed_mail_id": received.failed_mail_id,
                "detail": received.detail,
            }
        ).data
        return Response(body, status=status.HTTP_202_ACCEPTED)

    def get_authenticate_header(self, request) -> str:
        # A 401 says how to authenticate: the signature, not an account.
        return 'Signature header="X-Signature", algorithm="hmac-sha256"'


def _secret(mailbox: Mailbox) -> str:
    try:
        return mailbox.inbound_secret
    except SecretUnreadable:
        # Stored under a key no longer configured: an operator's fix, logged; the provider
        # gets a 401 and retries until the secret is entered anew.
        logger.error("inbound secret unreadable", extra={"mailbox": mailbox.address})
        return ""


def _signed(raw: bytes, secret: str, header: str) -> bool:
    scheme, _sep, given = header.strip().partition("=")
    if scheme.strip().lower() != "sha256" or not given:
        return False
    expected = hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest(
        given.strip().lower().encode("ascii", errors="replace"), expected.encode()
    )


def _unavailable(exc: Exception) -> Response:
    logger.warning(
        "inbound mail refused for now: database unavailable",
        extra={"error": f"{type(exc).__name__}: {exc}"[:300]},
    )
    return Response(
        {
            "code": "unavailable",
            "detail": _("The service is briefly unavailable: send the message again later."),
        },
        status=status.HTTP_503_SERVICE_UNAVAILABLE,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )
