"""The history's words for working together (console/history.py), in English and Chinese:
watchers, merges, links and ratings, with names and bill codes, never ids."""

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from django.utils import translation

from console.history import Names, describe

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
NAMES = Names(users={2: "it_bob", 5: "alice", 6: "carol"}, groups={})


def rec(action, actor_id=None, **detail):
    return SimpleNamespace(action=action, actor_id=actor_id, created=T0, detail=detail)


CASES = [
    (
        rec("watcher_added", 5, user_id=6, source="cc"),
        "carol was copied in by alice",
        "已抄送 carol（操作人：alice）",
    ),
    (
        rec("watcher_added", 2, user_id=6, source="team"),
        "carol was added as a watcher by it_bob",
        None,
    ),
    (rec("watcher_added", 6, user_id=6, source="self"), "carol started watching", None),
    (
        rec("watcher_added", 2, user_id=5, source="merge"),
        "alice now watches it (from a merged ticket)",
        None,
    ),
    (rec("watcher_removed", 6, user_id=6), "carol stopped watching", None),
    (rec("merge", 2, into_id=9, into_bill="TK9"), "Merged into TK9 by it_bob", None),
    (rec("merged_from", 2, source_bill="TK8"), "TK8 was merged into this ticket by it_bob", None),
    (
        rec("link_added", 2, ticket_id=9, bill_code="TK9", kind="parent"),
        "Linked as a child of TK9 by it_bob",
        None,
    ),
    (
        rec("link_removed", 2, ticket_id=9, bill_code="TK9", kind="child"),
        "No longer the parent of TK9 by it_bob",
        None,
    ),
    (rec("rated", 5, rating=4), "The applicant rated the help 4 of 5", None),
]


@pytest.mark.parametrize(("record", "english", "chinese"), CASES)
def test_each_record_reads_in_english_and_in_chinese(record, english, chinese):
    with translation.override("en"):
        assert describe(record, NAMES) == english
    with translation.override("zh-hans"):
        words = describe(record, NAMES)
    assert words != english, "not translated"
    # The names and codes survive translation; no id is shown.
    for token in ("carol", "alice", "it_bob", "TK9", "TK8"):
        assert (token in words) == (token in english), (token, words)
    if chinese is not None:
        assert words == chinese
