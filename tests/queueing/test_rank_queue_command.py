"""`manage.py rank_queue FILE.json [--explain]`."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from .helpers import person


def run(*args) -> str:
    out = StringIO()
    call_command("rank_queue", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def complaint(tmp_path, queue_cache):
    """uid "late" complains that "vip" and "ssvip" were served first."""
    queue_cache.set_rr("late", "R7")
    queue_cache.set_rr("vip", "R2")
    queue_cache.set_rr("ssvip", "R7")
    queue_cache.set_jumps("late", ["someone-else"])
    path = tmp_path / "queue.json"
    queue = [
        person("late", already_wait_time=1800, is_online=1, confirm_num=1),
        person("vip", already_wait_time=900),
        person("ssvip", already_wait_time=60, is_ssvip=1),
    ]
    path.write_text(json.dumps({"queue": queue}))
    return path


def test_prints_the_ranked_queue(complaint):
    lines = run(str(complaint)).splitlines()
    ranked = [line for line in lines if line.startswith("#")]
    # vip (rr 2) jumps late (rr 7); ssvip moves ahead of late (same group), not of vip.
    assert [line.split()[1] for line in ranked] == ["uid=vip", "uid=ssvip", "uid=late"]
    assert "be_jump=0->1" in ranked[2]
    assert "rr=7" in ranked[2] and "user_group=1" in ranked[2]


def test_explain_prints_score_terms_and_every_swap(complaint):
    output = run(str(complaint), "--explain")
    late = output[output.index("uid=late") :]
    assert "rough score: 0.9 = already_wait_time 1800/3600 = 0.5, is_online +0.3" in late
    assert "confirm_num 1*0.1 = 0.1" in late
    assert "after the rough sort: #1" in late
    assert (
        "RR adjustment pass i=0: vip (rr 2) jumped ahead (rr 7; new in late's jump list, "
        "its be_jump -> 1)" in late
    )
    assert "SSVIP adjustment pass i=0: SSVIP ssvip moved ahead (user_group 1 >= 1)" in late
    vip = output[output.index("uid=vip") : output.index("uid=late")]
    assert "jumped ahead of late" in vip


def test_explain_is_a_dry_run(complaint, queue_cache):
    run(str(complaint), "--explain")
    assert queue_cache.jumps("late") == ["someone-else"]


def test_accepts_a_bare_list_and_prints_json(tmp_path, queue_cache):
    path = tmp_path / "queue.json"
    path.write_text(json.dumps([person("a"), person("b", already_wait_time=10, extra="x")]))
    body = json.loads(run(str(path), "--json"))
    assert [p["uid"] for p in body["queue"]] == ["b", "a"]
    assert body["queue"][0]["extra"] == "x"
    assert body["degraded"] is False


def test_an_invalid_queue_names_index_and_field(tmp_path, queue_cache):
    path = tmp_path / "queue.json"
    path.write_text(json.dumps({"queue": [person("a"), person("b", confirm_num=-2)]}))
    with pytest.raises(CommandError, match=r'"1": \{"confirm_num"'):
        run(str(path))


@pytest.mark.parametrize("content", [None, "{not json"])
def test_an_unreadable_file_is_an_error(tmp_path, content):
    path = tmp_path / "queue.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(CommandError, match="Cannot read"):
        run(str(path))
