"""The API's use of idempotency keys: `respond_once(request, create)` around a creating view,
and the header's OpenAPI description for its @extend_schema."""

import json
from collections.abc import Callable

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.encoders import JSONEncoder

from config.openapi import DetailErrorBody

from .models import IdempotencyRecord
from .services import (
    HEADER,
    MAX_KEY_LENGTH,
    Answer,
    fingerprint,
    idempotency_claim,
    idempotency_record,
)

REPLAYED_HEADER = "Idempotent-Replayed"


class IdempotencyKeyReused(exceptions.APIException):
    """The key was used, within 24 hours, for a different request."""

    status_code = 422
    default_code = "idempotency_key_reused"
    default_detail = gettext_lazy("This Idempotency-Key was already used for a different request.")


IDEMPOTENCY_KEY = OpenApiParameter(
    HEADER,
    OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    required=False,
    description=(
        "A key of your choosing (1 to 255 characters, unique per request you mean): retrying "
        "with the same key within 24 hours answers the first answer again (same status and "
        "body, with `Idempotent-Replayed: true`) and creates nothing new. The same key with "
        "a different body is a 422."
    ),
)
KEY_REUSED = {
    422: OpenApiResponse(
        DetailErrorBody,
        description="The Idempotency-Key was already used for a different request "
        '(code "idempotency_key_reused").',
    )
}


def _key(request: Request) -> str | None:
    key = request.headers.get(HEADER)
    if key is None:
        return None
    if not key.strip() or len(key) > MAX_KEY_LENGTH:
        raise exceptions.ValidationError(
            {HEADER: [_("Give 1 to %(max)d characters.") % {"max": MAX_KEY_LENGTH}]}
        )
    return key


def _replay(record: IdempotencyRecord) -> Response:
    assert record.status_code is not None  # a committed record has its answer
    return Response(record.body, status=record.status_code, headers={REPLAYED_HEADER: "true"})


def respond_once(request: Request, create: Callable[[], Response]) -> Response:
    """`create()` once per caller and Idempotency-Key (within 24 hours); without the header,
    simply `create()`. Its success is recorded in the same transaction as the creation."""
    key = _key(request)
    if key is None:
        return create()
    user_id = request.user.pk
    assert user_id is not None  # the creating views require authentication
    signature = fingerprint(method=request.method or "", route=request.path, body=request.data)
    with transaction.atomic():
        claim = idempotency_claim(user_id=user_id, key=key, fingerprint=signature)
        if isinstance(claim, IdempotencyRecord):
            if claim.fingerprint != signature:
                raise IdempotencyKeyReused()
            return _replay(claim)
        response = create()
        if not 200 <= response.status_code < 300:
            transaction.set_rollback(True)  # only a success is remembered
            return response
        body = json.loads(json.dumps(response.data, cls=JSONEncoder))
        idempotency_record(claim_id=claim, answer=Answer(response.status_code, body))
    return response
