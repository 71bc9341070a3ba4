"""Finding tickets by a few words, through indexes at any size: the console's search box and
the admin's both come here.

A word of three characters or more matches a ticket whose bill code, title or category
contains it (any case): one trigram GIN index over that text (`ticket_search_trgm_idx`,
migration 0012) serves it, so the match never reads the table. It also matches the tickets
of the people whose username contains it (the people are read first, from their small
table; the tickets then through `ticket_creator_idx` / `ticket_handler_idx`). A shorter
word is too short for trigrams: it matches a bill code or username exactly (any case)."""

from django.contrib.auth import get_user_model
from django.db.models import F, Func, Q, TextField
from django.db.models.functions import Upper
from django.utils.text import smart_split, unescape_string_literal

# A search naming more people than this is too broad to narrow by person: those words then
# match by bill code and title only.
MAX_PEOPLE_PER_WORD = 200
MIN_SUBSTRING = 3  # pg_trgm needs three characters to find a substring through its index


class _Joined(Func):
    """`("bill_code" || ' ' || "title" || ' ' || "category")`: `||`, not CONCAT() (which may
    not be indexed), and no COALESCE (no column is nullable), so it reads as the index's
    expression."""

    template = "(%(expressions)s)"
    arg_joiner = " || ' ' || "
    output_field = TextField()


def search_text():
    """The indexed text: UPPER(bill_code || ' ' || title || ' ' || category). The index
    (migration 0012) is built on exactly this expression; a query must use this function for
    the planner to match it. (A word of the query has no space: it cannot straddle fields.)"""
    return Upper(_Joined(F("bill_code"), F("title"), F("category")))


def words_of(query: str | None) -> list[str]:
    """The query's words, as Django's admin splits them ("quoted phrases" kept whole)."""
    words = []
    for bit in smart_split((query or "").strip()):
        if bit[0] in "\"'" and bit[-1] == bit[0]:
            bit = unescape_string_literal(bit)
        if bit:
            words.append(bit)
    return words


def _people(word: str, *, substring: bool) -> list[int] | None:
    users = get_user_model().objects
    lookup = "username__icontains" if substring else "username__iexact"
    found = users.filter(**{lookup: word}).values_list("pk", flat=True)
    ids = list(found[: MAX_PEOPLE_PER_WORD + 1])
    return None if len(ids) > MAX_PEOPLE_PER_WORD else ids


def word_matches(word: str, *, people: tuple[str, ...] = ("creator",)) -> Q:
    """Tickets this one word finds: in the bill code, title or category, or by the username
    of the `people` named (creator, handler)."""
    substring = len(word) >= MIN_SUBSTRING
    if substring:
        found = Q(search_text_upper__contains=word.upper())
    else:
        found = Q(bill_code__iexact=word)
    ids = _people(word, substring=substring)
    if ids:
        for role in people:
            found |= Q(**{f"{role}_id__in": ids})
    return found


def search_q(query: str | None, *, people: tuple[str, ...] = ("creator",)) -> Q | None:
    """Every word must match (as in Django's admin); None for an empty query. The queryset
    filtered must carry `search_text_upper` (`with_search_text`)."""
    words = words_of(query)
    if not words:
        return None
    condition = Q()
    for word in words:
        condition &= word_matches(word, people=people)
    return condition


def with_search_text(queryset):
    return queryset.alias(search_text_upper=search_text())


def search(queryset, query: str | None, *, people: tuple[str, ...] = ("creator",)):
    condition = search_q(query, people=people)
    if condition is None:
        return queryset
    return with_search_text(queryset).filter(condition)
