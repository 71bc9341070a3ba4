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
