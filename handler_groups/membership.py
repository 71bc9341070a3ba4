"""The one accessor for the comma-separated member list (`member_user_ids`). Nothing else in
the project splits or joins that string."""

from collections.abc import Iterable


def parse_member_ids(raw: str | None) -> list[int]:
    """Member ids in stored order, without blanks, junk or duplicates."""
    ids: list[int] = []
    seen: set[int] = set()
    for part in (raw or "").split(","):
        part = part.strip()
        if not part.isdigit():
            continue
        member_id = int(part)
        if member_id not in seen:
            seen.add(member_id)
            ids.append(member_id)
    return ids


def format_member_ids(ids: Iterable[int]) -> str:
    ordered: list[int] = []
    for member_id in ids:
        member_id = int(member_id)
        if member_id not in ordered:
            ordered.append(member_id)
    return ",".join(str(i) for i in ordered)


def member_regex(user_id: int) -> str:
    """A PostgreSQL regex matching a stored member list that contains `user_id`."""
    return rf"(^|,)\s*{int(user_id)}\s*(,|$)"


def remap_cursor(old_ids: list[int], old_index: int, new_ids: list[int]) -> int:
    """The round-robin cursor after a membership change, by identity rather than position:
    it stays on the member who got the last ticket; if they left, it moves so that the next
    pick is the next surviving member in the old order. -1 (start at the first member) when
    nobody survives."""
    if not new_ids:
        return -1
    if not old_ids or not 0 <= old_index < len(old_ids):
        return min(max(old_index, -1), len(new_ids) - 1)
    last = old_ids[old_index]
    if last in new_ids:
        return new_ids.index(last)
    for step in range(1, len(old_ids) + 1):
        candidate = old_ids[(old_index + step) % len(old_ids)]
        if candidate in new_ids:
            return new_ids.index(candidate) - 1
    return -1
