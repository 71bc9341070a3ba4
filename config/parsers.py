"""The API's one JSON parser: orjson, with the refusals every endpoint needs.

- Nesting deeper than orjson's limit (1,024) is a 400 naming the body, found by orjson in
  microseconds, never Python's RecursionError (a 500 with a traceback per request).
- A body larger than the endpoint's limit is a 413 (config/limits.py); the stream is read with
  the limit as a cap, so a body without Content-Length cannot grow past it either.
- What orjson refuses but JSON allows (integers beyond 64 bits, lone surrogates escaped in
  strings) goes through the standard parser, so validation can still name the field.
"""

import io

import orjson
from django.utils.translation import gettext_lazy as _
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from .limits import PayloadTooLarge, body_limit_for

NESTING_MESSAGE = _("JSON nested too deeply.")


class SafeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        limit = body_limit_for(request.path if request is not None else "")
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(limit)
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if "recursion" in str(exc).lower():
                raise ParseError(NESTING_MESSAGE) from None
        try:
            return super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError:  # a lone surrogate before a deep nest reaches the fallback
            raise ParseError(NESTING_MESSAGE) from None
