"""Shape of the ranking request and response.

The queue is validated without a DRF serializer per person (`QueueField`), which would cost
tens of milliseconds per thousand persons, more than the whole ranking:
- first as a whole by msgspec (`UsualPerson`): every field with its plain JSON type and in
  range, checked in C; the usual request passes and is done (`usual_persons` gives the endpoint
  its columns, `_usual_queue` gives `parse_queue` its customers);
- otherwise person by person with the field parsers below, which word the errors.
The per-person serializers at the end describe the same rules for the OpenAPI schema; the
endpoint (queueing/apis.py) runs RankInput only for a request `usual_persons` does not take.

Errors name the offending index and field, nested under "queue":
    {"code": "invalid_argument",
     "errors": {"queue": {"3": {"already_wait_time": ["Must be at least 0."]}}}}
Errors about the queue as a whole (not a list, too long) are a list under "queue". At most
`MAX_REPORTED_PERSONS` persons' errors are reported.
"""

import math
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias

import msgspec
from django.conf import settings
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from .ranking import Customer, Order, Persons, RankedEntry

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

Message: TypeAlias = "str | StrPromise"  # an error's words (lazily translated)

MAX_COUNT = 2**53 - 1  # counts and seconds beyond this are not exact in JSON (nor plausible)
MAX_UID_LENGTH = 256
MAX_REPORTED_PERSONS = 100

REQUIRED = _("This field is required.")
NOT_NULL = _("May not be null.")


def _uid(value) -> tuple[str | None, "Message | None"]:
    if isinstance(value, str):
        if not value:
            return None, _("May not be blank.")
        if len(value) > MAX_UID_LENGTH:
            return None, _("At most %(n)d characters.") % {"n": MAX_UID_LENGTH}
        if not value.isascii():
            try:
                value.encode("utf-8")  # it names Redis keys
            except UnicodeEncodeError:
                return None, _("Must be valid Unicode text (no lone surrogates).")
        return value, None
    if isinstance(value, int) and not isinstance(value, bool):
        if not -(2**63) <= value < 2**63:
            return None, _("Must be a 64-bit integer.")
        return str(value), None
    return None, _("Must be a string or an integer.")


def _seconds(value) -> tuple[float | None, "Message | None"]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, _("Must be a number.")
    if isinstance(value, float) and not math.isfinite(value):
        return None, _("Must be a finite number.")
    if value < 0:
        return None, _("Must be at least 0.")
    if value > MAX_COUNT:
        return None, _("Must be at most %(n)d.") % {"n": MAX_COUNT}
    return value, None


def _count(value) -> tuple[int | None, "Message | None"]:
    if isinstance(value, bool) or not isinstance(value, int):
        return None, _("Must be an integer.")
    if value < 0:
        return None, _("Must be at least 0.")
    if value > MAX_COUNT:
        return None, _("Must be at most %(n)d.") % {"n": MAX_COUNT}
    return value, None


def _flag(value) -> tuple[int | None, "Message | None"]:
    if isinstance(value, bool) or not isinstance(value, int) or value not in (0, 1):
        return None, _("Must be 0 or 1.")
    return value, None


def _ssvip(value) -> tuple[bool | None, "Message | None"]:
    if isinstance(value, bool):
        return value, None
    if isinstance(value, int) and value in (0, 1):
        return value == 1, None
    return None, _("Must be 0, 1, true or false.")


# field -> (parser, default); no default: required.
_FIELDS = {
    "uid": (_uid, None),
    "already_wait_time": (_seconds, None),
    "is_online": (_flag, None),
    "is_complaint": (_flag, None),
    "confirm_num": (_count, None),
    "not_confirm_num": (_count, None),
    "is_ssvip": (_ssvip, False),
    "be_jump": (_count, 0),
}


def parse_queue(data) -> list[Customer]:
    """The request's queue as customers; raises serializers.ValidationError naming the index
    and field of each error (see the module docstring)."""
    if not isinstance(data, list):
        raise serializers.ValidationError(
            _('Expected a list of persons but got "%(type)s".') % {"type": type(data).__name__}
        )
    limit = settings.QUEUEING_MAX_PERSONS
    if len(data) > limit:
        raise serializers.ValidationError(
            _("At most %(limit)d persons per request; got %(count)d.")
            % {"limit": limit, "count": len(data)}
        )
    customers = _usual_queue(data)
    if customers is not None:
        return customers
    customers = []
    errors: dict[str, dict[str, list[Message]]] = {}
    first_index: dict[str, int] = {}
    for index, person in enumerate(data):
        found = _usual_customer(person)
        person_errors: dict[str, list[Message]] = {}
        if found is None:
            found, person_errors = _customer_or_errors(person)
        uid = found.uid if found is not None else _valid_uid(person)
        if uid is not None:
            # 1 and "1" are the same customer: both name the cache key lechat_1.
            earlier = first_index.setdefault(uid, index)
            if earlier != index:
                person_errors["uid"] = [
                    _("Duplicate uid: also at index %(index)d.") % {"index": earlier}
                ]
        if person_errors:
            errors[str(index)] = person_errors
            if len(errors) >= MAX_REPORTED_PERSONS:
                break
        elif not errors and found is not None:  # (no errors: found)
            customers.append(found)
    if errors:
        raise serializers.ValidationError(errors)
    return customers


def _customer_or_errors(person) -> tuple[Customer | None, dict[str, list["Message"]]]:
    if not isinstance(person, dict):
        return None, {"non_field_errors": [_("Expected an object.")]}
    values: dict[str, Any] = {}  # each field's parsed value (the parsers' types differ)
    errors: dict[str, list[Message]] = {}
    for name, (parse, default) in _FIELDS.items():
        if name not in person:
            if default is None:
                errors[name] = [REQUIRED]
            values[name] = default
            continue
        raw = person[name]
        value, error = (None, NOT_NULL) if raw is None else parse(raw)
        if error is not None:
            errors[name] = [error]
        values[name] = value
    if errors:
        return None, errors
    return Customer(payload=person, **values), {}


def _valid_uid(person) -> str | None:
    if not isinstance(person, dict) or person.get("uid") is None:
        return None
    return _uid(person["uid"])[0]


# The usual queue, checked whole ---------------------------------------------------------------

_Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT)]
_Flag = Annotated[int, msgspec.Meta(ge=0, le=1)]
_new_tuple = tuple.__new__


class UsualPerson(msgspec.Struct, gc=False):  # numbers and text only: never in a cycle
    """A person as `_usual_customer` accepts it, declared for msgspec (which refuses bools where
    it wants numbers, NaN and infinities out of range, and ignores other fields); uids must
    also be ASCII, checked after. Its fields are ranking.Persons' columns, in the same order
    (`usual_persons` transposes the rows into them)."""

    uid: (
        Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_UID_LENGTH)]
        | Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
    )
    already_wait_time: _Count | Annotated[float, msgspec.Meta(ge=0, le=MAX_COUNT)]
    is_online: _Flag
    is_complaint: _Flag
    confirm_num: _Count
    not_confirm_num: _Count
    is_ssvip: bool | _Flag = False
    be_jump: _Count = 0


def _usual_queue(data: list) -> list[Customer] | None:
    """The customers of a queue of usual persons with distinct uids, with the values the field
    parsers would give them (tests/queueing/test_fast_paths.py checks this); None sends the
    queue to them, person by person."""
    try:
        persons = msgspec.convert(data, list[UsualPerson])
    except ValueError:  # msgspec.ValidationError, or text it cannot encode in its message
        return None
    customers = []
    uids = set()
    for usual, person in zip(persons, data, strict=True):
        uid = usual.uid
        if isinstance(uid, int):  # (msgspec gives an int or a str)
            uid = str(uid)
        elif not uid.isascii():
            return None
        if uid in uids:
            return None
        uids.add(uid)
        ssvip = usual.is_ssvip
        fields = (
            uid,
            usual.already_wait_time,
            usual.is_online,
            usual.is_complaint,
            usual.confirm_num,
            usual.not_confirm_num,
            ssvip if type(ssvip) is bool else ssvip == 1,
            usual.be_jump,
            person,
        )
        # Customer(*fields) at a quarter of the cost (NamedTuple's constructor takes keywords).
        customers.append(_new_tuple(Customer, fields))
    return customers


def usual_persons(body) -> tuple[Persons, list[dict]] | None:
    """The columns and the persons' objects of a request body (parsed JSON) whose queue
    `parse_queue` would take as usual persons, with the values it would give them
    (tests/queueing/test_fast_paths.py checks this): no object built per person beyond
    msgspec's. None sends the body to RankInput, which words any error."""
    if type(body) is not dict:
        return None
    data = body.get("queue")
    if type(data) is not list or len(data) > settings.QUEUEING_MAX_PERSONS:
        return None
    try:
        rows = msgspec.convert(data, list[UsualPerson])
    except ValueError:  # msgspec.ValidationError, or text it cannot encode in its message
        return None
    if not rows:
        return Persons([], [], [], [], [], [], [], []), data
    # The rows' fields as columns: UsualPerson's fields are Persons' in the same order.
    uids, waited, online, complaint, confirm_num, not_confirm_num, ssvip, be_jump = map(
        list, zip(*map(msgspec.structs.astuple, rows), strict=True)
    )
    try:
        text = "".join(uids)
    except TypeError:  # integer uids: the cache keys name them in decimal
        uids = [uid if type(uid) is str else str(uid) for uid in uids]
        text = "".join(uids)
    if not text.isascii() or len(set(uids)) != len(uids):
        return None
    return Persons(
        uid=uids,
        already_wait_time=waited,
        is_online=online,
        is_complaint=complaint,
        confirm_num=confirm_num,
        not_confirm_num=not_confirm_num,
        is_ssvip=list(map(bool, ssvip)),  # 0, 1, false or true
        be_jump=be_jump,
    ), data


def _usual_customer(person) -> Customer | None:
    """The common case at a third of the cost: every field with its plain JSON type and in
    range. It accepts a subset of what the field parsers accept, with the same values
    (tests/queueing/test_validation.py checks this); None sends a person to them."""
    if type(person) is not dict:
        return None
    try:
        uid = person["uid"]
        waited = person["already_wait_time"]
        online = person["is_online"]
        complaint = person["is_complaint"]
        confirm_num = person["confirm_num"]
        not_confirm_num = person["not_confirm_num"]
    except KeyError:
        return None
    ssvip = person.get("is_ssvip", False)
    be_jump = person.get("be_jump", 0)
    if type(uid) is str:
        if not (0 < len(uid) <= MAX_UID_LENGTH and uid.isascii()):
            return None
    elif type(uid) is int and -(2**63) <= uid < 2**63:
        uid = str(uid)
    else:
        return None
    if type(waited) is not int and type(waited) is not float:
        return None
    if not 0 <= waited <= MAX_COUNT:  # NaN and infinities fail this too
        return None
    for flag in (online, complaint):
        if type(flag) is not int or not 0 <= flag <= 1:
            return None
    for count in (confirm_num, not_confirm_num, be_jump):
        if type(count) is not int or not 0 <= count <= MAX_COUNT:
            return None
    if type(ssvip) is int and 0 <= ssvip <= 1:
        ssvip = ssvip == 1
    elif type(ssvip) is not bool:
        return None
    return Customer(
        uid, waited, online, complaint, confirm_num, not_confirm_num, ssvip, be_jump, person
    )


# OpenAPI: the rules of parse_queue, per person ------------------------------------------------


@extend_schema_field({"oneOf": [{"type": "string"}, {"type": "integer"}]})
class UidField(serializers.Field):
    pass


@extend_schema_field({"type": "integer", "minimum": 0, "maximum": 1})
class FlagField(serializers.Field):
    pass


@extend_schema_field(
    {"oneOf": [{"type": "integer", "minimum": 0, "maximum": 1}, {"type": "boolean"}]}
)
class SsvipField(serializers.Field):
    pass


class PersonInput(serializers.Serializer):
    """A waiting customer. Any other fields are returned unchanged."""

    uid = UidField(help_text='Unique within the request; 1 and "1" are the same customer.')
    already_wait_time = serializers.FloatField(min_value=0, help_text="Seconds waited.")
    is_online = FlagField()
    is_complaint = FlagField()
    confirm_num = serializers.IntegerField(min_value=0)
    not_confirm_num = serializers.IntegerField(min_value=0)
    is_ssvip = SsvipField(default=0, help_text="0, 1, false or true.")
    be_jump = serializers.IntegerField(
        min_value=0,
        default=0,
        help_text="How many distinct customers have already jumped ahead of this one.",
    )


@extend_schema_field(PersonInput(many=True))
class QueueField(serializers.Field):
    def to_internal_value(self, data) -> list[Customer]:
        return parse_queue(data)


class RankInput(serializers.Serializer):
    queue = QueueField(
        help_text="The waiting customers; at most QUEUEING_MAX_PERSONS (20,000 by default)."
    )


class RankedPerson(PersonInput):
    """The caller's object (all its fields) with the ranking's results added."""

    rough_sort_score = serializers.FloatField(
        help_text="already_wait_time/3600 + 0.3 if online + 0.3 if complaint + confirm_num×0.1;"
        " 0 when not_confirm_num ≥ 4."
    )
    rr = serializers.IntegerField(help_text="RR level 1-9 from the cache; 9 when unknown.")
    user_group = serializers.IntegerField(help_text="2 when rr ≤ 5, else 1.")
    be_jump = serializers.IntegerField(help_text="Updated with this request's jumps.")
    rank = serializers.IntegerField(help_text="1-based place in the final order.")


class RankOutput(serializers.Serializer):
    queue = RankedPerson(many=True)
    trace_id = serializers.CharField(help_text="The request's X-Request-ID, or a generated id.")
    degraded = serializers.BooleanField(
        help_text="True when Redis was unreachable: rr = 9 for everyone, no jump bookkeeping."
    )


def ranked_persons(persons: list[dict], order: Order) -> list[dict]:
    """`ranked_queue` from the plain ranking's columns: the persons' objects (the request's own,
    parsed for it only) in final order, with the results added to them."""
    scores, rr, groups, be_jump = order.rough_sort_score, order.rr, order.user_group, order.be_jump
    ranked = list(map(persons.__getitem__, order.order))
    for place, (p, person) in enumerate(zip(order.order, ranked, strict=True), start=1):
        person["rough_sort_score"] = scores[p]
        person["rr"] = rr[p]
        person["user_group"] = groups[p]
        person["be_jump"] = be_jump[p]
        person["rank"] = place
    return ranked


def ranked_queue(queue: list[RankedEntry], *, reuse_payloads: bool = False) -> list[dict]:
    """The response's persons: each caller's object with the results added, in final order.
    With `reuse_payloads` the results are added to the callers' objects themselves (the
    endpoint's, parsed for this request only) instead of to copies."""
    ranked = []
    for place, entry in enumerate(queue, start=1):
        person = entry.customer.payload
        if not reuse_payloads:
            person = dict(person)
        person["rough_sort_score"] = entry.rough_sort_score
        person["rr"] = entry.rr
        person["user_group"] = entry.user_group
        person["be_jump"] = entry.be_jump
        person["rank"] = place
        ranked.append(person)
    return ranked
