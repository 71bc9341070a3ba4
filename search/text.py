"""The pure part of search: how a query splits into the words each index knows, and where a
text matches them (for the snippets). No Django, no database: the stemming of English words
is PostgreSQL's (the `english` configuration), handed in as a mapping.

The split mirrors `td_search_vector` (migration 0001): a run of Han characters is searched
as its overlapping two-character pieces in order (打印机 → 打印, 印机), a run of one
character as a prefix (卡 finds 卡纸, and 卡 alone; not the 卡 that ends a run — the cost
of bigrams); everything else is English text for `plainto_tsquery('english', …)`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

HAN = "\u3400-\u4dbf\u4e00-\u9fff"
HAN_RUN = re.compile(f"[{HAN}]+")
# A word as PostgreSQL's default parser sees most of them: letters and digits (any script but
# Han), no underscore. Used to find where a text's words are, then stemmed by the database.
WORD = re.compile(rf"[^\W_{HAN}]+")
# The services' bill codes (workflow.services._bill_code): TK, the day, a sequence number.
BILL_CODE = re.compile(r"^[A-Za-z]{2}\d{8,24}$")

MAX_QUERY_LENGTH = 200
MAX_WORDS = 12
SNIPPET_CHARS = 160
SNIPPET_LEAD = 40  # characters shown before the first match


@dataclass(frozen=True)
class Query:
    """A parsed query: its English text (stemmed by the database), its runs of Han
    characters, and the bill code it is, if it is one."""

    text: str
    english: str
    han: tuple[str, ...]
    bill_code: str | None

    def is_empty(self) -> bool:
        return not self.english.strip() and not self.han and self.bill_code is None


def parse(text: str) -> Query:
    text = " ".join(text.split())
    han = tuple(dict.fromkeys(HAN_RUN.findall(text)))
    english = HAN_RUN.sub(" ", text)
    code = text.upper() if BILL_CODE.match(text) else None
    return Query(text=text, english=english, han=han, bill_code=code)


def words(text: str) -> int:
    """How many words the query has (English words and Han runs), to bound its cost."""
    return len(WORD.findall(text)) + len(HAN_RUN.findall(text))


def bigrams(run: str) -> list[str]:
    """The pieces `td_cjk_bigrams` indexes for one run of Han characters."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokens(text: str) -> set[str]:
    """The text's non-Han words, lower-cased: what to ask the database to stem."""
    return {m.group().lower() for m in WORD.finditer(text)}


@dataclass(frozen=True)
class Terms:
    """What a text must contain to be marked: English stems (the query's lexemes, as the
    database made them) and Han runs (found as they are)."""

    stems: frozenset[str]
    han: tuple[str, ...]

    def is_empty(self) -> bool:
        return not self.stems and not self.han


def spans(text: str, terms: Terms, stem: Callable[[str], Iterable[str]]) -> list[tuple[int, int]]:
    """Where the text matches the terms, as sorted, non-overlapping [start, end) spans. `stem`
    gives the lexemes of one lower-cased word."""
    found: list[tuple[int, int]] = []
    if terms.stems:
        for m in WORD.finditer(text):
            if terms.stems.intersection(stem(m.group().lower())):
                found.append((m.start(), m.end()))
    for run in terms.han:
        at = text.find(run)
        while at >= 0:
            found.append((at, at + len(run)))
            at = text.find(run, at + len(run))
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


@dataclass(frozen=True)
class Piece:
    text: str
    marked: bool


def snippet(
    text: str,
    found: list[tuple[int, int]],
    *,
    width: int = SNIPPET_CHARS,
    lead: int = SNIPPET_LEAD,
) -> list[Piece]:
    """A window of about `width` characters of the text around its first match, as pieces
    to escape and mark; "…" where the text is cut."""
    text_start = 0
    if found and found[0][0] > lead:
        text_start = found[0][0] - lead
        # Start at a word boundary when one is near.
        space = text.rfind(" ", text_start - 10, text_start + 10)
        if space >= 0 and space < found[0][0]:
            text_start = space + 1
    text_end = min(len(text), text_start + width)
    pieces: list[Piece] = []
    if text_start > 0:
        pieces.append(Piece("…", False))
    at = text_start
    for start, end in found:
        if start >= text_end:
            break
        start, end = max(start, at), min(end, text_end)
        if start > at:
            pieces.append(Piece(text[at:start], False))
        if end > start:
            pieces.append(Piece(text[start:end], True))
        at = max(at, end)
    if at < text_end:
        pieces.append(Piece(text[at:text_end], False))
    if text_end < len(text):
        pieces.append(Piece("…", False))
    return pieces


def lexemes_of(tsquery: str) -> frozenset[str]:
    """The lexemes of a tsquery's text form (`'printer' & '打印' <-> '印机'`)."""
    return frozenset(
        m.group(1).replace("''", "'") for m in re.finditer(r"'((?:[^']|'')*)'", tsquery)
    )


def stems_of(lexemes: frozenset[str]) -> frozenset[str]:
    """The English stems among a query's lexemes (Han pieces are matched as runs)."""
    return frozenset(lexeme for lexeme in lexemes if not HAN_RUN.search(lexeme))


def stem_lookup(stemmed: Mapping[str, Iterable[str]]) -> Callable[[str], Iterable[str]]:
    def stem(word: str) -> Iterable[str]:
        return stemmed.get(word, ())

    return stem
