"""The API's one JSON parser: orjson, with the refusals every endpoint needs.

- A body nested deeper than API_MAX_JSON_DEPTH levels (64) is a 400 naming the limit, before
  any view sees it (`nesting_exceeds`). What reads a body further is recursive Python: DRF's
  fields (`str()` of a nested list), the queue ranking's echo of the caller's own fields
  (orjson writes at most 254 levels, then the standard encoder recurses), error rendering.
  At about a thousand levels any of them was Python's RecursionError, a 500. 64 is some
  fifteen times the deepest body the API takes (an SLA rule with its ladder, 4 levels),
  leaves the ranking's echo three levels of wrapping within orjson's 254, and keeps every
  recursive reader far from Python's limit even at a dozen frames per level.
- Nesting deeper than orjson's own limit (1,024) is refused by orjson in microseconds, with the
  same 400, never Python's RecursionError.
- A body larger than the endpoint's limit is a 413 (config/limits.py); the stream is read with
  the limit as a cap, so a body without Content-Length cannot grow past it either.
- What orjson refuses but JSON allows (integers beyond 64 bits, lone surrogates escaped in
  strings) goes through the standard parser, so validation can still name the field.
"""

import io
from itertools import chain

import orjson
from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from .limits import PayloadTooLarge, body_limit_for


def nesting_message(limit: int) -> str:
    return _("JSON nested too deeply: at most %(limit)d levels.") % {"limit": limit}


def nesting_exceeds(value: object, limit: int, containers_at_most: int | None = None) -> bool:
    """Whether parsed JSON nests more than `limit` levels (a scalar is 0, `[]` and `{}` 1).

    Level by level, never recursing: each level's children are typed by map(type, ...) over
    chained dict values and list items, all in C, and only a level that holds containers is
    kept. `containers_at_most` (the body's count of `[` and `{` bytes: every container has
    one, and brackets inside strings only add to it) ends the walk once that many containers
    are found, since no level below can hold any: the ranking's 10,000 persons are found at
    the third level, and their 90,000 values are never looked at (bench/queueing.py)."""
    bound = float("inf") if containers_at_most is None else containers_at_most
    if bound <= limit:  # too few brackets to nest deeper: most bodies stop here
        return False
    if type(value) is dict:
        dicts, lists = [value], []
    elif type(value) is list:
        dicts, lists = [], [value]
    else:
        return False
    depth = found = 1
    while True:
        if depth > limit:
            return True
        if found >= bound:
            return False
        types = set(map(type, _children(dicts, lists)))
        has_dicts, has_lists = dict in types, list in types
        if not (has_dicts or has_lists):
            return False
        depth += 1
        children = list(_children(dicts, lists))
        if len(types) == 1:  # containers of one kind only: the whole level, unfiltered
            dicts, lists = (children, []) if has_dicts else ([], children)
        else:
            dicts = [c for c in children if type(c) is dict] if has_dicts else []
            lists = [c for c in children if type(c) is list] if has_lists else []
        found += len(dicts) + len(lists)


def _children(dicts: list[dict], lists: list[list]):
    values = chain.from_iterable(map(dict.values, dicts))
    if not lists:
        return values
    return chain(values, chain.from_iterable(lists))


class SafeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        limit = body_limit_for(request.path if request is not None else "")
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(limit)
        depth_limit = settings.API_MAX_JSON_DEPTH
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if "recursion" in str(exc).lower() or "depth" in str(exc).lower():
                raise ParseError(nesting_message(depth_limit)) from None
            try:
                data = super().parse(io.BytesIO(raw), media_type, parser_context)
            except RecursionError:  # a lone surrogate before a deep nest reaches the fallback
                raise ParseError(nesting_message(depth_limit)) from None
        brackets = raw.count(b"[") + raw.count(b"{")
        if nesting_exceeds(data, depth_limit, containers_at_most=brackets):
            raise ParseError(nesting_message(depth_limit))
        return data
