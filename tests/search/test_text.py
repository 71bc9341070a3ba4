"""The pure core of search (search/text.py): no database."""

from hypothesis import given
from hypothesis import strategies as st

from search.text import (
    Terms,
    bigrams,
    lexemes_of,
    parse,
    snippet,
    spans,
    stem_lookup,
    stems_of,
)


def test_a_query_splits_into_english_text_han_runs_and_a_bill_code():
    query = parse("  VPN证书  过期 printers ")
    assert query.han == ("证书", "过期")
    assert query.english.split() == ["VPN", "printers"]
    assert query.bill_code is None
    assert parse("tk20261203000123").bill_code == "TK20261203000123"
    assert parse("!!").english == "!!" and not parse("").english


def test_bigrams_are_what_the_database_indexes():
    assert bigrams("打印机") == ["打印", "印机"]
    assert bigrams("打印") == ["打印"]
    assert bigrams("卡") == ["卡"]


def test_spans_mark_word_forms_and_han_runs_merged():
    stem = stem_lookup({"printers": ["printer"], "the": []})
    text = "The printers: 打印机卡纸了"
    found = spans(text, Terms(stems=frozenset({"printer"}), han=("打印", "印机")), stem)
    assert [text[a:b] for a, b in found] == ["printers", "打印机"]


def test_a_snippet_is_cut_around_the_first_match():
    text = "a " * 100 + "needle" + " b" * 100
    start = text.index("needle")
    pieces = snippet(text, [(start, start + 6)], width=40, lead=10)
    assert pieces[0].text == "…" and pieces[-1].text == "…"
    assert [p.text for p in pieces if p.marked] == ["needle"]
    assert len("".join(p.text for p in pieces)) <= 42


@given(
    st.text(st.characters(blacklist_characters="…"), max_size=300),
    st.lists(st.integers(0, 300), max_size=10),
)
def test_a_snippet_keeps_the_text_in_order_and_marks_only_matches(text, points):
    found = sorted({(min(p, len(text)), min(p + 3, len(text))) for p in points})
    merged: list[tuple[int, int]] = []
    for a, b in found:
        if a >= b:
            continue
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    pieces = snippet(text, merged)
    body = "".join(p.text for p in pieces if p.text != "…")
    assert body in text
    for piece in pieces:
        if piece.marked:
            assert any(piece.text in text[a:b] for a, b in merged)


def test_lexemes_come_from_the_tsquery_text():
    lexemes = lexemes_of("'printer' & 'it''s' & '打印' <-> '印机'")
    assert lexemes == {"printer", "it's", "打印", "印机"}
    assert stems_of(lexemes) == {"printer", "it's"}


def test_the_next_window_is_wide_enough_for_the_rate_found():
    from search.selectors import ENOUGH, next_window

    assert next_window(0.05, 0) == 1.0  # nothing recent: a rare word, search it all
    assert next_window(0.05, ENOUGH // 2) == 0.2  # at least four times wider
    assert next_window(0.05, 1) == 1.0  # past half of the history: all of it
    assert 0.2 < next_window(0.05, 10) <= 0.5
