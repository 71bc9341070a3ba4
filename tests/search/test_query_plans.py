"""The search statement reads the big tables through their indexes (EXPLAIN, not timing): the
GIN indexes of the search vectors for the words, the bill code's unique index for a code;
never a sequential scan of the tickets, the replies or the files, whoever searches."""

import pytest
from django.db import connection

from search import selectors
from search.text import parse
from tests.factories import HandlerGroupFactory, UserFactory

pytestmark = pytest.mark.django_db

BIG_TABLES = ("oa_ticket_bill", "oa_ticket_reply", "attachments_attachment")


def fill(tickets: int, creator_id: int, group_ids: list[int]) -> None:
    """`tickets` tickets with 3 replies each (one in six a note) and a file on one in five,
    their text drawn from 400 words with a skewed law (w1 in most documents, w300 in few),
    some of them Chinese; written in three statements, then ANALYZE."""
    groups = "ARRAY[" + ",".join(str(g) for g in group_ids) + "]::bigint[]"
    words = "ARRAY[" + ",".join(f"'w{i}'" for i in range(1, 401)) + ",'打印机','证书','网络']"
    text = (
        f"(SELECT string_agg(({words})[1 + floor(403 * random() ^ 3)::int], ' ') "
        "FROM generate_series(1, {n}) WHERE i > 0)"
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.25)")
        cursor.execute(
            f"""
            INSERT INTO oa_ticket_bill (bill_code, title, content, priority, category,
                creator_id, handler_group_id, process_status, ticket_status, submitted_time)
            SELECT 'TK20260101' || lpad(i::text, 8, '0'), {text.format(n=5)},
                   {text.format(n=20)}, 1 + i %% 4, '', %s,
                   ({groups})[1 + floor(random() * {len(group_ids)})::int], 2, 5,
                   now() - (%s - i) * interval '1 minute'
            FROM generate_series(1, %s) AS i
            """,
            [creator_id, tickets, tickets],
        )
        cursor.execute(
            f"""
            INSERT INTO oa_ticket_reply (ticket_id, reply_type, content, created)
            SELECT t.id, CASE WHEN r = 3 AND t.id % 2 = 0 THEN 2 ELSE 1 END,
                   {text.format(n=12).replace("i > 0", "r > 0 AND t.id > 0")}, now()
            FROM oa_ticket_bill t, generate_series(1, 3) AS r
            """
        )
        cursor.execute(
            f"""
            INSERT INTO attachments_blob (sha256, size, content_type, created, thumbnail)
            VALUES (repeat('0', 64), 1, 'text/plain', now(), '');
            INSERT INTO attachments_attachment (blob_id, filename, uploaded, attached, ticket_id)
            SELECT (SELECT max(id) FROM attachments_blob),
                   {text.format(n=2).replace("i > 0", "t.id > 0")} || '.png', now(), now(), t.id
            FROM oa_ticket_bill t WHERE t.id % 5 = 0
            """
        )
        cursor.execute("ANALYZE oa_ticket_bill, oa_ticket_reply, attachments_attachment")


def plan(user, q: str) -> str:
    query = parse(q)
    sql, params = selectors.search_statement(user, query, selectors.tsquery_of(query))
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.fixture(scope="module")
def people(django_db_setup, django_db_blocker):
    """100,000 tickets in 20 groups, 300,000 replies, 20,000 files: written once for the
    module and removed after it."""
    with django_db_blocker.unblock():
        creator = UserFactory(username="plan-creator")
        agent = UserFactory(username="plan-agent")
        staff = UserFactory(username="plan-staff", is_staff=True)
        groups = [HandlerGroupFactory(name=f"plan{i}") for i in range(20)]
        groups[0].member_ids = [agent.pk]
        groups[0].save()
        fill(100_000, creator.pk, [g.pk for g in groups])
        yield {"agent": agent, "staff": staff, "applicant": creator}
        with connection.cursor() as cursor:
            cursor.execute(
                "TRUNCATE attachments_attachment, attachments_blob, oa_ticket_reply, "
                "oa_ticket_bill CASCADE"
            )
        for group in groups:
            group.delete()
        for user in (creator, agent, staff):
            user.delete()


def assert_no_seq_scan(found: str) -> None:
    for table in BIG_TABLES:
        assert f"Seq Scan on {table}" not in found, found


@pytest.mark.parametrize("who", ["staff", "agent", "applicant"])
def test_two_words_are_found_through_the_gin_indexes(people, who):
    found = plan(people[who], "w120 w150")
    assert_no_seq_scan(found)
    for index in ("ticket_search_vector_idx", "reply_search_vector_idx"):
        assert index in found, found


def test_a_chinese_word_and_a_file_name_go_through_their_indexes(people):
    found = plan(people["agent"], "证书")
    assert_no_seq_scan(found)
    assert "attachment_search_vector_idx" in found, found


@pytest.mark.parametrize("who", ["staff", "agent"])
def test_a_word_in_most_documents_never_scans_a_table(people, who):
    """A word in most documents: walking the newest first (the primary key, backwards) until
    enough match, or the index; not a read of the whole table."""
    assert_no_seq_scan(plan(people[who], "w1"))


def test_a_bill_code_is_found_through_its_unique_index(people):
    found = plan(people["agent"], "TK2026010100050000")
    assert "oa_ticket_bill_bill_code_key" in found, found
    assert_no_seq_scan(found)
