import contextlib
import gc
import uuid
from collections.abc import Iterator

import orjson
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.openapi import errors
from config.parsers import SafeJSONParser

from . import services
from .permissions import CanRankQueue
from .ranking import Order
from .serializers import RankInput, RankOutput, ranked_persons, ranked_queue, usual_persons

_EXAMPLE_REQUEST = {
    "queue": [
        {
            "uid": "u-1001",
            "already_wait_time": 1800,
            "is_online": 1,
            "is_complaint": 0,
            "confirm_num": 1,
            "not_confirm_num": 0,
            "is_ssvip": 0,
            "be_jump": 0,
            "channel": "chat",
        },
        {
            "uid": "u-1002",
            "already_wait_time": 600,
            "is_online": 1,
            "is_complaint": 1,
            "confirm_num": 0,
            "not_confirm_num": 0,
            "is_ssvip": 1,
        },
    ]
}
# u-1001 (cache: {"rr_1p5": "R7"}) and u-1002 (cache: {"rr_1p5": "R2"}): u-1002 jumps ahead.
_EXAMPLE_RESPONSE = {
    "queue": [
        {
            **_EXAMPLE_REQUEST["queue"][1],
            "rough_sort_score": 0.7666666666666666,
            "rr": 2,
            "user_group": 2,
            "be_jump": 0,
            "rank": 1,
        },
        {
            **_EXAMPLE_REQUEST["queue"][0],
            "rough_sort_score": 0.9,
            "rr": 7,
            "user_group": 1,
            "be_jump": 1,
            "rank": 2,
        },
    ],
    "trace_id": "5f1c0a6e2b9d4c1f8e7a6b5c4d3e2f10",
    "degraded": False,
}

_RankValidationError = inline_serializer(
    name="RankValidationError",
    fields={
        "code": serializers.CharField(default="invalid_argument"),
        "errors": serializers.DictField(
            help_text='{"queue": {"<index>": {"<field>": ["message"]}}} for a person\'s field; '
            '{"queue": ["message"]} for the queue as a whole; {"body": ["message"]} for a body '
            'that is not JSON; {"non_field_errors": [...]} for a body that is not an object.'
        ),
    },
)


class FastJSONRenderer(JSONRenderer):
    """orjson for the ranked queue (the usual request's persons come already written, as an
    orjson.Fragment); the caller's own fields come back unchanged. Text orjson cannot encode
    as UTF-8 (a lone surrogate a caller sent) falls back to \\u-escaped JSON."""

    ensure_ascii = True

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        try:
            return orjson.dumps(data)
        except (TypeError, orjson.JSONEncodeError):
            return super().render(data, accepted_media_type, renderer_context)


class RankQueueApi(APIView):
    """Ranks a customer-service queue: the order in which the waiting customers are served."""

    permission_classes = [IsAuthenticated, CanRankQueue]
    parser_classes = [SafeJSONParser]  # orjson; its own body limit (config/limits.py)
    renderer_classes = [FastJSONRenderer]

    @extend_schema(
        operation_id="queueing_rank",
        summary="Rank a customer-service queue",
        description=(
            "Rough score, stable sort, RR levels from the `lechat_<uid>` cache keys, RR "
            "adjustment with jump bookkeeping in `lechat_jump_uids_<uid>`, SSVIP adjustment. "
            "Each person comes back with all the fields it was sent with, plus "
            "rough_sort_score, rr, user_group, be_jump (updated) and rank (1-based). "
            "If Redis is unreachable the queue is ranked with rr = 9 for everyone, without jump "
            'bookkeeping, and the response says "degraded": true.'
        ),
        request=RankInput,
        responses={
            200: RankOutput,
            400: OpenApiResponse(
                _RankValidationError,
                description="Bad input; errors name the offending index and field.",
                examples=[
                    OpenApiExample(
                        "A person's field",
                        value={
                            "code": "invalid_argument",
                            "errors": {
                                "queue": {"3": {"already_wait_time": ["Must be at least 0."]}}
                            },
                        },
                    ),
                    OpenApiExample(
                        "Duplicate uid",
                        value={
                            "code": "invalid_argument",
                            "errors": {
                                "queue": {"5": {"uid": ["Duplicate uid: also at index 2."]}}
                            },
                        },
                    ),
                    OpenApiExample(
                        "Too many persons",
                        value={
                            "code": "invalid_argument",
                            "errors": {"queue": ["At most 20000 persons per request; got 20001."]},
                        },
                    ),
                ],
            ),
            **errors(401, 403),
        },
        examples=[
            OpenApiExample("Two customers", value=_EXAMPLE_REQUEST, request_only=True),
            OpenApiExample("Two customers ranked", value=_EXAMPLE_RESPONSE, response_only=True),
        ],
    )
    def post(self, request: Request) -> Response:
        with _collection_paused():
            body = self._ranked(request)
        return Response(body)

    def _ranked(self, request: Request) -> dict:
        """The response's body. The usual request (plain JSON types in range, distinct ASCII
        uids: `usual_persons`) is checked by msgspec in one pass, ranked as columns, and its
        persons' JSON is written while Redis appends the jumps; any other goes through
        RankInput, whose field parsers word every error with its index and field, and is ranked
        as customers. Only the body and the request's data outlive the call: the columns and
        the ranking are freed before the collector runs again (see _collection_paused)."""
        trace_id = getattr(request, "request_id", None) or uuid.uuid4().hex
        usual = usual_persons(request.data)
        if usual is not None:  # the usual request: ranked and rendered as columns
            persons, payloads = usual
            written: list[tuple[Order, bytes]] = []

            def render(order: Order) -> orjson.Fragment | list[dict]:
                # The persons' JSON, written while Redis appends the jumps.
                if written:  # again, degraded: the persons as written the first time
                    _restore(payloads, *written.pop())
                ranked = ranked_persons(payloads, order)
                try:
                    text = orjson.dumps(ranked)
                except orjson.JSONEncodeError:  # text orjson refuses: FastJSONRenderer's fallback
                    return ranked
                # Written, the persons' objects are needed no more: freed now, while Redis works
                # (a few ms at 10,000 persons). Left in request.data they would outlive the
                # request, which DRF keeps in reference cycles (view <-> request) that only the
                # cyclic collector breaks, ten requests' persons at once: some 75 ms at 10,000
                # persons, in one request out of ten.
                del ranked
                payloads.clear()
                written.append((order, text))
                return orjson.Fragment(text)

            plain = services.queue_rank_persons(persons=persons, trace_id=trace_id, render=render)
            return {
                "queue": plain.rendered,
                "trace_id": plain.trace_id,
                "degraded": plain.degraded,
            }
        data = RankInput(data=request.data)
        data.is_valid(raise_exception=True)
        outcome = services.queue_rank(customers=data.validated_data["queue"], trace_id=trace_id)
        return {
            "queue": ranked_queue(outcome.queue, reuse_payloads=True),
            "trace_id": outcome.trace_id,
            "degraded": outcome.degraded,
        }


def _restore(payloads: list[dict], order: Order, text: bytes) -> None:
    """The persons' objects again, by index, from their JSON as written in `order`: each with
    its fields in the same order, the results' included (ranked_persons sets them anew)."""
    written = orjson.loads(text)
    payloads[:] = written  # the right length; each person then put at its own index
    for person, person_written in zip(order.order, written, strict=True):
        payloads[person] = person_written


@contextlib.contextmanager
def _collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector held off while a queue is parsed and ranked. A queue
    makes several container objects per person, none in a reference cycle (reference counting
    frees them), and making them would otherwise run the collector again and again, up to full
    collections that scan every live object of the process: some 75 ms of a 10,000-person
    request's 175, and its slowest requests. The fewer of them still alive when it runs again,
    the less it has to scan and keep. Held off for the whole process (other threads too) for
    the request's milliseconds; left as it is if something else turned it off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
