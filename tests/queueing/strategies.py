"""Random queues with their cache contents, for the fidelity tests."""

import json

from hypothesis import strategies as st


def rr(level: str) -> str:
    """A `lechat_<uid>` value."""
    return json.dumps({"rr_1p5": level})


RR_VALUES = [rr(f"R{k}") for k in range(1, 10)] + [
    None,
    rr("R10"),
    "{bad json",
    json.dumps({"rr_1p5": 5}),
]


@st.composite
def queues(draw, max_size=24):
    n = draw(st.integers(0, max_size))
    uids = [draw(st.sampled_from([f"u{k}", k])) for k in range(n)]
    everyone = [str(uid) for uid in uids] + ["gone-1", "gone-2"]
    persons = []
    cache = {}
    for uid in uids:
        p = {
            "uid": uid,
            "already_wait_time": draw(
                st.one_of(
                    st.sampled_from([0, 35, 60, 1800, 3600, 3600.0, 7200]),
                    st.floats(0, 20_000, allow_nan=False),
                )
            ),
            "is_online": draw(st.integers(0, 1)),
            "is_complaint": draw(st.integers(0, 1)),
            "confirm_num": draw(st.integers(0, 4)),
            "not_confirm_num": draw(st.sampled_from([0, 0, 1, 3, 4, 5])),
            "note": "kept",
        }
        if draw(st.booleans()):
            p["is_ssvip"] = draw(st.sampled_from([0, 1, False, True]))
        if draw(st.integers(0, 3)):
            p["be_jump"] = draw(st.sampled_from([0, 1, 5, 12, 13, 14, 15, 16]))
        persons.append(p)
        value = draw(st.sampled_from(RR_VALUES))
        if value is not None:
            cache[f"lechat_{uid}"] = value
        if draw(st.booleans()):
            # Jumpers already in the cache, duplicates and customers no longer waiting included.
            stored = draw(st.lists(st.sampled_from(everyone), max_size=8))
            cache[f"lechat_jump_uids_{uid}"] = json.dumps(stored)
    return persons, cache
