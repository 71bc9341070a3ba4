"""A plain transcription of the ranking algorithm as issue 6 states it: the full double loops,
one cache read per person and per swap. The reference the fast implementation is compared
with; deliberately naive, do not optimise."""

import json


def transcribe(persons: list[dict], cache: dict[str, str]) -> list[dict]:
    """Rank `persons` (request dicts) against `cache` (key -> stored text, like Redis), which
    is updated in place with the jump bookkeeping. Returns new dicts in the final order, each
    with rough_sort_score, rr, user_group and be_jump."""
    q = [dict(p, be_jump=p.get("be_jump", 0), is_ssvip=p.get("is_ssvip", 0)) for p in persons]

    # 1. Rough score.
    for p in q:
        if p["not_confirm_num"] >= 4:
            p["rough_sort_score"] = 0
        else:
            score = p["already_wait_time"] / 3600
            if p["is_online"] == 1:
                score = score + 0.3
            if p["is_complaint"] == 1:
                score = score + 0.3
            p["rough_sort_score"] = score + p["confirm_num"] * 0.1

    # 2. Stable sort, highest first.
    q = sorted(q, key=lambda p: p["rough_sort_score"], reverse=True)

    # 3. RR level.
    for p in q:
        p["rr"] = 9
        raw = cache.get("lechat_" + str(p["uid"]))
        if raw is not None:
            try:
                value = json.loads(raw)
            except ValueError:
                value = None
            if isinstance(value, dict) and value.get("rr_1p5") in [f"R{k}" for k in range(1, 10)]:
                p["rr"] = int(value["rr_1p5"][1:])
        p["user_group"] = 2 if p["rr"] <= 5 else 1

    # 4. RR adjustment.
    n = len(q)
    for i in range(n):
        j = 0
        while j < n - 1 - i:
            a, b = q[j], q[j + 1]
            if (
                6 <= a["rr"] <= 9
                and 1 <= b["rr"] <= 5
                and a["rr"] > b["rr"]
                and a["be_jump"] < 15
                and b["not_confirm_num"] < 4
            ):
                q[j], q[j + 1] = b, a
                key = "lechat_jump_uids_" + str(a["uid"])
                jumped = json.loads(cache[key]) if key in cache else []
                if str(b["uid"]) not in jumped:
                    a["be_jump"] += 1
                    jumped.append(str(b["uid"]))
                    cache[key] = json.dumps(jumped)
            j += 1

    # 5. SSVIP adjustment.
    for i in range(n):
        j = 0
        while j < n - 1 - i:
            a, b = q[j], q[j + 1]
            if (
                a["not_confirm_num"] < 4
                and not a["is_ssvip"]
                and b["is_ssvip"]
                and b["user_group"] >= a["user_group"]
            ):
                q[j], q[j + 1] = b, a
            j += 1

    # 6. Return the queue.
    return q
