"""Years of a large desk's history, written fast (`bench/scale.py` builds with it).

Tickets, replies, audit records, assignment events, routing decisions, SLA clock segments,
events and outcomes, presence spans, in-app notifications, satisfaction surveys (one per
completed ticket, ~35 % answered), watchers (~5 % of tickets), links (~2 % children, ~1 %
related) and merged duplicates (~0.5 % of closed tickets), as the services would have
written them over `days` (two years by default) up to `now`: 50 groups with mixed strategies
(pool, round robin, least load, online priority, longest idle), 500 agents (10 per group, a
few in two), their leaders, approvers and ~5,000 applicants; arrivals shaped by weekday and
hour; most tickets closed, the recent ones still in every open state (awaiting approval, in
the pool, assigned, in progress, waiting on the applicant).

Written straight into the migrated tables with PostgreSQL COPY (psycopg's `cursor.copy()`)
in chunks of tickets, in one transaction, with `session_replication_role = replica` so the
foreign-key triggers and the handler-load triggers do not run per row: the ids are allocated
here from the tables' own sequences, every reference is to a row written here (the test
checks each foreign key afterwards), and the handler loads are recounted from the tickets at
the end (routing.loads.rebuild) as the trigger would have kept them.

The simplifications, stated: the SLA rules run on 24/7 time (no business calendar) with the
default ladder (warn before, time out at each deadline); routing picks by the group's
strategy without replaying presence instant by instant (round robin cycles, the others pick
among the members); the demo's bulk writer (demo/history.py) is the model for each row's
shape. Deterministic for a seed and a `now`."""

from __future__ import annotations

import json
import math
import random
import time
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from django.db import connection, transaction

WEEKDAY_FACTOR = (1.15, 1.05, 1.0, 0.95, 0.85, 0.18, 0.12)
HOUR_WEIGHTS = (
    0.05, 0.03, 0.02, 0.02, 0.03, 0.05, 0.15, 0.4, 0.9, 1.5, 2.0, 1.7,
    1.0, 1.3, 1.9, 1.6, 1.2, 0.8, 0.45, 0.3, 0.2, 0.15, 0.1, 0.07,
)  # fmt: skip

GROUPS = 50
AGENTS_PER_GROUP = 10
APPLICANTS = 5000
APPROVERS = 10
STRATEGIES = (
    0,
    1,
    2,
    3,
    4,
)  # pool (manual), round robin, least load, online priority, longest idle
PASSWORD = "scale12345"
SHOWCASE_REPLIES = 200
CHUNK = 20000

THEMES = [
    ("hardware", ["Laptop will not boot", "Monitor flickers", "Docking station dead",
                  "Keyboard keys stuck", "Battery drains in an hour"]),
    ("network", ["VPN drops every few minutes", "Wi-Fi slow on floor 2",
                 "Cannot reach the intranet",
                 "Proxy blocks the supplier portal"]),
    ("access", ["Password reset", "Access to the finance share", "New starter needs an account",
                "MFA token lost", "Locked out after holiday"]),
    ("software", ["Install the statistics package", "Outlook keeps asking for the password",
                  "Excel crashes on open", "Licence expired"]),
    ("payroll", ["Payslip question", "Expense claim not paid", "Overtime missing"]),
    ("leave", ["Holiday balance looks wrong", "Parental leave request", "Sick note upload"]),
    ("facilities", ["Heating broken in room 4.12", "Desk booking fails", "Broken chair"]),
]  # fmt: skip
REPLIES_PUBLIC = [
    "Thanks, looking into it now.",
    "Could you send a screenshot of the error?",
    "It happens every morning around nine.",
    "I have attached the log file.",
    "Please try again now and tell me whether it works.",
    "Still the same, unfortunately.",
    "That fixed it, thank you!",
    "I have escalated this to the vendor.",
]
REPLIES_INTERNAL = [
    "Known issue, see the vendor ticket.",
    "Needs a replacement part; ordered.",
    "Checked the logs: the account was disabled by the nightly sync.",
]
TEMPLATES = {
    "ticket-assigned": (
        "Ticket {billCode} assigned to you",
        "Ticket {billCode} ({title}) of {group} is assigned to you.",
    ),
    "ticket-offered": (
        "Ticket {billCode} offered to you",
        "Ticket {billCode} ({title}) is offered to you; accept it within {minutes} minutes "
        "or it goes to someone else.",
    ),
    "ticket-replied": (
        "New reply on {billCode}",
        "{author} replied on ticket {billCode} ({title}).",
    ),
    "ticket-completed": (
        "Ticket {billCode} completed",
        "Your ticket {billCode} ({title}) has been completed by {handler}. "
        "Close it if you are satisfied, or reply if not.",
    ),
    "ticket-rejected": (
        "Ticket {billCode} rejected",
        "Your ticket {billCode} ({title}) was rejected: {reason}",
    ),
    "ticket-sla-warn": (
        "[SLA warning] {billCode}",
        "[SLA warning] Ticket {billCode} ({title}): {type} deadline at {deadline}, "
        "please act soon.",
    ),
    "ticket-sla-timeout": (
        "[SLA timeout] {billCode}",
        "[SLA timeout] Ticket {billCode} ({title}): {type} deadline passed, please act now.",
    ),
}

# Table → columns written (every NOT NULL column without a database default).
COLUMNS = {
    "oa_ticket_bill": (
        "id", "bill_code", "title", "content", "priority", "category", "process_status",
        "ticket_status", "submitted_time", "approved_time", "assigned_time", "accepted_time",
        "completed_time", "closed_time", "response_deadline", "resolve_deadline",
        "response_timeout", "resolve_timeout", "reply_count", "creator_id", "handler_id",
        "handler_group_id", "resolve_warned", "response_warned", "sla_paused", "sla_paused_at",
        "sla_rule_id", "queued_time", "responded_time", "public_reply_count", "merged_into_id",
        "tags", "fields",
    ),
    "oa_ticket_reply": (
        "id", "reply_type", "content", "created", "author_id", "ticket_id", "merged_from_id",
    ),
    "oa_ticket_record": (
        "id", "action", "from_status", "to_status", "created", "detail", "actor_id", "ticket_id",
    ),
    "oa_assignment_event": (
        "id", "kind", "strategy", "pick_ms", "overflowed", "reclaimed", "created", "group_id",
        "ticket_id", "user_id", "notified",
    ),
    "oa_routing_decision": (
        "id", "trigger", "strategy", "outcome", "members", "created", "chosen_id", "group_id",
        "ticket_id",
    ),
    "oa_sla_clock_segment": ("id", "clock", "kind", "at", "created", "actor_id", "ticket_id"),
    "oa_sla_event": (
        "id", "clock", "level", "due_at", "state", "fired_at", "escalation_level_id", "ticket_id",
    ),
    "oa_sla_outcome": (
        "id", "response_minutes", "resolve_minutes", "response_met", "resolve_met",
        "completed_time", "ticket_id", "rule_id", "closed_before_completion", "response_result",
        "resolve_result",
    ),
    "oa_notification": (
        "id", "template_code", "title", "content", "params", "dedupe_key", "created", "read_at",
        "recipient_id", "ticket_id",
    ),
    "oa_presence_span": ("id", "state", "started", "ended", "user_id"),
    "oa_ticket_survey": (
        "id", "ticket_id", "applicant_id", "handler_id", "handler_group_id", "asked", "expires",
        "rating", "comment", "answered",
    ),
    "oa_ticket_watcher": ("id", "ticket_id", "user_id", "added_by_id", "source", "added"),
    "oa_ticket_link": ("id", "source_id", "target_id", "kind", "created_by_id", "created"),
}  # fmt: skip
TABLES = tuple(COLUMNS)

# Statuses as stored (ticketing.models).
APPROVING, APPROVED, REJECTED = 1, 2, 3
SUBMITTED, PENDING_ASSIGN, PENDING_PROCESS, PROCESSING, COMPLETED, CLOSED = range(6)
PUBLIC, INTERNAL = 1, 2
REPLY_TYPES = {PUBLIC: "public", INTERNAL: "internal"}
REJECT_REASON = "Not a matter for this desk."
STATUS_FIELD = '{"field": "ticket_status"}'
# Collaboration and satisfaction (collaboration.models, satisfaction.models).
SURVEY_VALID_FOR = timedelta(days=14)  # satisfaction.services.SURVEY_VALID_FOR
SURVEY_ANSWERED = 0.35
RATING_WEIGHTS = (3, 5, 12, 32, 48)  # 1..5: ~8 % 1-2, ~80 % 4-5
SURVEY_COMMENTS = {
    1: ["Nobody told me what was going on.", "Took far too long."],
    2: ["Solved in the end, but I had to chase it."],
    3: ["Fine."],
    4: ["Quick, thanks.", "Good, the workaround helps."],
    5: ["Excellent, thank you!", "Fixed within the hour, great.", "Very helpful."],
}
WATCHED = 0.05  # of tickets, 1-3 watchers each
CHILD = 0.02  # of tickets, the child of an earlier ticket of the same period
RELATED = 0.01  # of tickets, related to an earlier one
MERGED = 0.0065  # of closed tickets drawn: ~0.5 % end merged (some find no target)
LINK_WINDOW = timedelta(days=14)  # "the same period"
RECENT = 400  # earlier tickets a link or a merge looks among
CC_POOL = 500  # applicants copied in: one department's colleagues
PROCESS_FIELD = '{"field": "process_status"}'


@dataclass
class People:
    admin: int
    staff: int
    approvers: list[int]
    leaders: list[int]  # by group
    agents: list[int]
    applicants: list[int]
    names: dict[int, str]


@dataclass
class Rule:
    id: int
    response: timedelta
    resolve: timedelta
    warn: timedelta
    levels: dict[tuple[str, str], tuple[int, int]]  # (clock, "warn"/"timeout") -> (position, id)


@dataclass
class Group:
    id: int
    name: str
    strategy: int
    members: list[int]
    leader: int
    offer_minutes: int | None
    requires_presence: bool
    cursor: int = -1
    templates: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class Summary:
    tickets: int = 0
    rows: Counter = field(default_factory=Counter)
    states: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    showcase_ticket: int | None = None


class Ids:
    """Ids from each table's own sequence: taken from `nextval` once, handed out here, and the
    sequence set past the last one at the end."""

    def __init__(self, cursor, tables):
        self.next: dict[str, int] = {}
        self.first: dict[str, int] = {}
        for table in tables:
            cursor.execute(f"SELECT nextval(pg_get_serial_sequence('{table}', 'id'))")
            self.next[table] = self.first[table] = cursor.fetchone()[0]

    def take(self, table: str) -> int:
        value = self.next[table]
        self.next[table] = value + 1
        return value

    def finish(self, cursor) -> None:
        for table, value in self.next.items():
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), %s, false)", [value]
            )


# The toolbox's data (issue 28), chosen from the ticket id so that the rest of the build's
# random sequence is what it was: three tickets in ten carry one or two of their theme's tags;
# the hardware tickets an asset number, the network ones a floor (TOOLBOX_FIELDS).
THEME_TAGS = {
    "hardware": ("laptop", "warranty", "needs-part", "vip"),
    "network": ("vpn", "wifi", "outage", "vip"),
    "access": ("password", "mfa", "new-starter", "vip"),
    "software": ("licence", "outlook", "install", "vip"),
    "payroll": ("payslip", "expenses", "vip"),
    "leave": ("holiday", "sick-note", "vip"),
    "facilities": ("heating", "furniture", "vip"),
}
TOOLBOX_FIELDS = (
    # key, label, type, the category it applies to
    ("asset_tag", "Asset tag", "text", "hardware"),
    ("floor", "Floor", "number", "network"),
)


def _toolbox_values(tid: int, theme: str) -> tuple[str, str]:
    tags: list[str] = []
    vocabulary = THEME_TAGS.get(theme, ())
    if vocabulary and tid % 10 < 3:
        tags.append(vocabulary[tid % len(vocabulary)])
        if tid % 10 == 0:
            second = vocabulary[(tid // 10) % len(vocabulary)]
            if second not in tags:
                tags.append(second)
    fields: dict = {}
    if theme == "hardware":
        fields["asset_tag"] = f"PC-{tid % 5000:05d}"
    elif theme == "network":
        fields["floor"] = tid % 12
    array = "{" + ",".join(tags) + "}"
    return array, json.dumps(fields)


def _toolbox_rows(cursor) -> dict[str, int]:
    """The categories the tickets name, the fields and the tags' counts (from the tickets)."""
    cursor.execute(
        'INSERT INTO ticket_category (name, translations, active, "order") '
        "SELECT DISTINCT category, '{}'::jsonb, true, 0 FROM oa_ticket_bill "
        "WHERE category <> '' ON CONFLICT (name) DO NOTHING"
    )
    for order, (key, label, kind, category) in enumerate(TOOLBOX_FIELDS):
        cursor.execute(
            "INSERT INTO ticket_field (key, label, label_translations, type, required, "
            "choices, help_text, \"order\", active) VALUES (%s, %s, '{}', %s, false, '[]', '', "
            "%s, true) ON CONFLICT (key) DO NOTHING RETURNING id",
            [key, label, kind, order],
        )
        made = cursor.fetchone()
        if made:
            cursor.execute(
                "INSERT INTO ticket_field_categories (ticketfield_id, category_id) "
                "SELECT %s, id FROM ticket_category WHERE name = %s",
                [made[0], category],
            )
    cursor.execute(
        "INSERT INTO ticket_tag (name, ticket_count) SELECT tag, count(*) FROM oa_ticket_bill, "
        "unnest(tags) AS tag GROUP BY tag ON CONFLICT (name) DO UPDATE SET ticket_count = "
        "EXCLUDED.ticket_count"
    )
    cursor.execute("SELECT count(*) FROM ticket_tag")
    tags = cursor.fetchone()[0]
    cursor.execute("SELECT count(*) FROM ticket_category")
    return {"ticket_tag": tags, "ticket_category": cursor.fetchone()[0]}


def _iso(t: datetime) -> str:
    return t.isoformat()


def _people(cursor, now: datetime, password_hash: str) -> People:
    """Users through the ORM's tables in one COPY: one password hash shared by all, the
    approvers' permission, a profile each."""
    hashed = password_hash
    specs: list[tuple[str, bool, bool]] = [
        ("scale_admin", True, True),
        ("scale_staff", True, False),
    ]
    specs += [(f"scale_approver{i}", False, False) for i in range(APPROVERS)]
    specs += [(f"scale_lead{g:02d}", False, False) for g in range(GROUPS)]
    specs += [(f"scale_agent{a:03d}", False, False) for a in range(GROUPS * AGENTS_PER_GROUP)]
    specs += [(f"scale_user{u:04d}", False, False) for u in range(APPLICANTS)]
    cursor.execute("SELECT nextval(pg_get_serial_sequence('auth_user', 'id'))")
    first = cursor.fetchone()[0]
    joined = now - timedelta(days=800)
    with cursor.copy(
        "COPY auth_user (id, password, is_superuser, username, first_name, last_name, email, "
        "is_staff, is_active, date_joined) FROM STDIN"
    ) as copy:
        for i, (name, staff, superuser) in enumerate(specs):
            copy.write_row(
                (
                    first + i,
                    hashed,
                    superuser,
                    name,
                    "",
                    "",
                    f"{name}@example.test",
                    staff,
                    True,
                    joined,
                )
            )
    cursor.execute(
        "SELECT setval(pg_get_serial_sequence('auth_user', 'id'), %s)", [first + len(specs) - 1]
    )
    with cursor.copy(
        "COPY oa_user_profile (user_id, time_zone, language, browser_language) FROM STDIN"
    ) as copy:
        for i in range(len(specs)):
            copy.write_row((first + i, "", "", ""))
    ids = [first + i for i in range(len(specs))]
    names = {first + i: spec[0] for i, spec in enumerate(specs)}
    approvers = ids[2 : 2 + APPROVERS]
    cursor.execute(
        "INSERT INTO auth_user_user_permissions (user_id, permission_id) "
        "SELECT u, p.id FROM unnest(%s::int[]) u, auth_permission p "
        "WHERE p.codename = 'approve_ticket'",
        [approvers],
    )
    at = 2 + APPROVERS
    leaders = ids[at : at + GROUPS]
    at += GROUPS
    agents = ids[at : at + GROUPS * AGENTS_PER_GROUP]
    applicants = ids[at + GROUPS * AGENTS_PER_GROUP :]
    return People(ids[0], ids[1], approvers, leaders, agents, applicants, names)


def _groups(people: People) -> list[Group]:
    from handler_groups.models import HandlerGroup

    groups: list[Group] = []
    rows = []
    for g in range(GROUPS):
        strategy = STRATEGIES[g % len(STRATEGIES)]
        members = people.agents[g * AGENTS_PER_GROUP : (g + 1) * AGENTS_PER_GROUP]
        if g % 5 == 1:  # some agents in two groups: two of the next group's help out here
            nxt = (g + 1) % GROUPS
            members = members + people.agents[nxt * AGENTS_PER_GROUP : nxt * AGENTS_PER_GROUP + 2]
        rows.append(
            HandlerGroup(
                name=f"Scale group {g:02d}",
                leader_id=people.leaders[g],
                member_user_ids=",".join(map(str, members)),
                assign_strategy=strategy,
                status=1,
                requires_presence=strategy in (3, 4),
                max_active=8 if strategy in (2, 3, 4) else None,
                offer_timeout_seconds=600 if strategy == 4 else None,
            )
        )
    for g, row in enumerate(HandlerGroup.objects.bulk_create(rows)):
        groups.append(
            Group(
                id=row.pk,
                name=row.name,
                strategy=row.assign_strategy,
                members=row.member_ids,
                leader=people.leaders[g],
                offer_minutes=10 if row.offer_timeout_seconds else None,
                requires_presence=row.requires_presence,
            )
        )
        groups[-1].templates = _member_templates(groups[-1], people)
    return groups


def _rules() -> dict[int, Rule]:
    """Priority → the SLA rule a ticket of it matches: one rule per priority above low (24/7,
    the default ladder); low falls to the migrations' catch-all."""
    from sla import ladder
    from sla.models import SlaRule
    from sla.rules import set_levels
    from sla.selectors import match_rule

    for priority, name, response, resolve in (
        (4, "Scale urgent", "1", "8"),
        (3, "Scale high", "4", "24"),
        (2, "Scale medium", "8", "48"),
    ):
        rule, created = SlaRule.objects.get_or_create(
            name=name,
            defaults={
                "priority": priority,
                "response_hours": Decimal(response),
                "resolve_hours": Decimal(resolve),
                "warn_before_minutes": 30,
                "sort": 10 + priority,
                "status": 1,
            },
        )
        if created or not rule.levels.exists():
            set_levels(rule, ladder.default_ladder(rule.warn_before_minutes))
    rules: dict[int, Rule] = {}
    for priority in (1, 2, 3, 4):
        rule = match_rule(priority=priority, category="")
        assert rule is not None and rule.calendar_id is None, "24/7 rules expected"
        levels = {}
        for level in rule.levels.all():
            kind = "warn" if level.trigger == "minutes_before" else "timeout"
            levels[(level.clock, kind)] = (level.position, level.pk)
        rules[priority] = Rule(
            id=rule.pk,
            response=timedelta(hours=float(rule.response_hours or 0)),
            resolve=timedelta(hours=float(rule.resolve_hours or 0)),
            warn=timedelta(minutes=rule.warn_before_minutes),
            levels=levels,
        )
    return rules


def _arrivals(rng: random.Random, n: int, now: datetime, days: int) -> list[datetime]:
    """n instants over `days` days before now, by weekday and hour, growing a little."""
    start = (now - timedelta(days=days)).replace(minute=0, second=0, microsecond=0)
    hours = int((now - start).total_seconds() // 3600)
    weights = []
    for h in range(hours):
        t = start + timedelta(hours=h)
        growth = 0.8 + 0.4 * h / hours
        weights.append(WEEKDAY_FACTOR[t.weekday()] * HOUR_WEIGHTS[t.hour] * growth)
    picked = rng.choices(range(hours), weights=weights, k=n)
    out = sorted(start + timedelta(hours=h + rng.random()) for h in picked)
    return [min(t, now - timedelta(seconds=30)) for t in out]


def _office(rng: random.Random, t: datetime, median_minutes: float) -> datetime:
    """The next moment someone working weekdays 08:00-18:00 picks it up."""
    if t.weekday() < 5 and 8 <= t.hour < 18:
        return t + timedelta(minutes=rng.lognormvariate(math.log(median_minutes), 0.8))
    day = t.date() + timedelta(days=0 if t.hour < 8 else 1)
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return datetime.combine(day, datetime.min.time(), tzinfo=UTC) + timedelta(
        hours=8 + rng.uniform(0, 0.8)
    )


def _member_templates(group: Group, people: People) -> list[tuple[int, str]]:
    """Per member, the JSON of what a routing decision records of them (strategies/service.py
    `seen`) with %-slots for the figures that change: formatting is much cheaper than dumps."""
    cap = "8" if group.strategy in (2, 3, 4) else "null"
    out = []
    for user_id in group.members:
        head = json.dumps({"user_id": user_id, "username": people.names[user_id]})[:-1]
        out.append(
            (
                user_id,
                head
                + ', "state": "%s", "active": %d, "max_active": '
                + cap
                + ', "open_offers": 0, "online_since": %s, "idle_since": "%s", '
                '"assigned_today": %d, "eligible": %s, "reason": %s}',
            )
        )
    return out


def _members_seen(group: Group, chosen: int | None, at: datetime, rng) -> str:
    online = f'"{(at - timedelta(hours=2)).isoformat()}"' if group.requires_presence else "null"
    parts = []
    for user_id, template in group.templates:
        r = rng.random()
        eligible = chosen is not None and (user_id == chosen or r < 0.6)
        parts.append(
            template
            % (
                "available" if eligible else ("busy" if r < 0.8 else "offline"),
                int(r * 5),
                online,
                (at - timedelta(minutes=1 + int(r * 90))).isoformat(),
                int(r * 7),
                "true" if eligible else "false",
                "null" if eligible else '"not available"',
            )
        )
    return "[" + ", ".join(parts) + "]"


def _drop_indexes(cursor, tables) -> list[str]:
    """Drop the tables' secondary indexes and unique constraints (not the primary keys) and
    return the statements that make them again exactly as the migrations did (pg_get_indexdef,
    pg_get_constraintdef): building an index once over the loaded rows is several times
    cheaper than inserting every row into it."""
    cursor.execute(
        """
        SELECT t.relname, i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid),
               c.conname, pg_get_constraintdef(c.oid)
        FROM pg_index i
        JOIN pg_class t ON t.oid = i.indrelid
        LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.contype IN ('u', 'x')
        WHERE t.relname = ANY(%s) AND NOT i.indisprimary
        ORDER BY 1, 2
        """,
        [list(tables)],
    )
    again = []
    for table, index, indexdef, constraint, constraintdef in cursor.fetchall():
        if constraint:
            cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{constraint}"')
            again.append(f'ALTER TABLE {table} ADD CONSTRAINT "{constraint}" {constraintdef}')
        else:
            cursor.execute(f"DROP INDEX {index}")
            again.append(indexdef)
    return again


def build(
    *,
    tickets: int,
    now: datetime,
    days: int = 730,
    seed: int = 23,
    rebuild_indexes: bool = True,
    password_hash: str | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> Summary:
    """Write the history into the (migrated, empty) database Django is connected to.
    `rebuild_indexes`: drop the secondary indexes for the load and build them after (faster
    from some 100,000 tickets on; the result is the same either way). `password_hash`: every
    user's (default: PASSWORD with production's PBKDF2, whatever this process's settings)."""
    if password_hash is None:
        from django.contrib.auth.hashers import PBKDF2PasswordHasher

        password_hash = PBKDF2PasswordHasher().encode(PASSWORD, "scalebenchsalt01")
    started = time.monotonic()
    rng = random.Random(seed)
    summary = Summary()
    with transaction.atomic():
        with connection.cursor() as dj:
            dj.execute("SET LOCAL session_replication_role = replica")
            cursor = dj.cursor  # the psycopg cursor: COPY
            people = _people(cursor, now, password_hash)
            groups = _groups(people)
            rules = _rules()
            ids = Ids(cursor, TABLES)
            again = _drop_indexes(cursor, TABLES) if rebuild_indexes else []
            arrivals = _arrivals(rng, tickets, now, days)
            progress(f"{len(people.names)} users, {len(groups)} groups; {tickets} arrivals drawn")
            group_weights = [1 / (1 + g / 8) for g in range(GROUPS)]
            applicant_weights = [1 / (1 + (u % 500) / 25) for u in range(len(people.applicants))]
            cursor.execute("SELECT nextval('ticket_bill_code_seq')")
            bill_next = cursor.fetchone()[0]
            showcase_at = bisect_left(arrivals, now - timedelta(days=min(10, days / 3)))
            showcase_at = min(showcase_at, tickets - 1)
            writer = _Writer(rng, people, groups, rules, ids, now, summary)
            done = 0
            while done < tickets:
                batch = arrivals[done : done + CHUNK]
                group_picks = rng.choices(range(GROUPS), weights=group_weights, k=len(batch))
                creators = rng.choices(people.applicants, weights=applicant_weights, k=len(batch))
                for i, submitted in enumerate(batch):
                    index = done + i
                    writer.ticket(
                        submitted=submitted,
                        group=groups[group_picks[i]] if index != showcase_at else groups[1],
                        creator=creators[i],
                        bill_code=f"TK{submitted:%Y%m%d}{bill_next + index:06d}",
                        showcase=index == showcase_at,
                    )
                done += len(batch)
                writer.flush(cursor)
                elapsed = time.monotonic() - started
                rate = done / elapsed
                progress(
                    f"tickets {done}/{tickets} ({100 * done / tickets:.0f}%), "
                    f"{sum(summary.rows.values())} rows, {rate:.0f} tickets/s, "
                    f"ETA {(tickets - done) / rate:.0f}s"
                )
            cursor.execute("SELECT setval('ticket_bill_code_seq', %s)", [bill_next + tickets])
            rows = summary.rows
            progress(
                f"{rows['oa_ticket_survey']} surveys, {rows['oa_ticket_watcher']} watchers, "
                f"{rows['oa_ticket_link']} links, {writer.merged} merged"
            )
            summary.rows["oa_presence_span"] += _presence(cursor, rng, people, ids, now, days)
            summary.rows.update(_toolbox_rows(cursor))
            ids.finish(cursor)
            progress(f"presence written ({time.monotonic() - started:.0f}s)")
            if again:
                dj.execute("SET LOCAL maintenance_work_mem = '256MB'")
                for i, statement in enumerate(again, start=1):
                    cursor.execute(statement)
                    if i % 5 == 0 or i == len(again):
                        progress(
                            f"indexes {i}/{len(again)} made again "
                            f"({time.monotonic() - started:.0f}s)"
                        )
            dj.execute("SET LOCAL session_replication_role = DEFAULT")
            progress("recounting the handler loads")
        from routing.loads import rebuild

        summary.rows["oa_handler_load"] = rebuild(now=now)
    summary.tickets = tickets
    summary.showcase_ticket = writer.showcase_id
    summary.seconds = time.monotonic() - started
    return summary


class _Writer:
    """One ticket's life into row buffers, flushed with COPY per chunk."""

    def __init__(self, rng, people: People, groups, rules, ids: Ids, now, summary: Summary):
        self.rng, self.people, self.groups, self.rules = rng, people, groups, rules
        self.ids, self.now, self.summary = ids, now, summary
        self.buffers: dict[str, list[tuple]] = {table: [] for table in TABLES}
        self.showcase_id: int | None = None
        self.params_json = ""
        self.reply_counts = [1, 2, 3, 3, 4, 4, 5, 5, 5, 6, 6, 7, 8, 9, 10]  # mean ~5.2
        self.recent: list[_Recent] = []  # the last RECENT tickets written, oldest first
        self.bill_rows: dict[int, int] = {}  # ticket id -> its row in the unflushed buffer
        self.watching: dict[int, set[int]] = {}  # unflushed ticket id -> its watchers
        self.showcase_children = 0  # tickets still to become the showcase's children
        self.merged = 0

    def flush(self, cursor) -> None:
        for table, rows in self.buffers.items():
            if not rows:
                continue
            with cursor.copy(f"COPY {table} ({', '.join(COLUMNS[table])}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            self.summary.rows[table] += len(rows)
            rows.clear()
        self.bill_rows.clear()
        self.watching.clear()

    def notify(self, code, recipient, params, dedupe, ticket_id, created, extra="") -> None:
        """An inbox row as notifications.sending writes it: the template's wording rendered
        with `params`; the params' JSON is the ticket's own part (`self.params_json`) and
        `extra`, already JSON (one dumps per ticket, not per row)."""
        now, rng = self.now, self.rng
        if created > now:
            return
        title, content = TEMPLATES[code]
        age = now - created
        read_at = None
        if age > timedelta(days=3) and rng.random() < 0.92 or rng.random() < 0.3:
            read_at = min(now, created + timedelta(minutes=rng.lognormvariate(math.log(90), 1)))
        self.buffers["oa_notification"].append(
            (
                self.ids.take("oa_notification"),
                code,
                title.format(**params),
                content.format(**params),
                "{" + self.params_json + extra + "}",
                dedupe,
                created,
                read_at,
                recipient,
                ticket_id,
            )
        )

    def record(self, ticket_id, action, actor, before, after, created, detail: str) -> None:
        """`detail` is the JSON text (written as is: formatting it here costs less than
        json.dumps per row)."""
        self.buffers["oa_ticket_record"].append(
            (
                self.ids.take("oa_ticket_record"),
                action,
                before,
                after,
                created,
                detail,
                actor,
                ticket_id,
            )
        )

    def ticket(self, *, submitted, group: Group, creator, bill_code, showcase) -> None:
        rng, now, people = self.rng, self.now, self.people
        tid = self.ids.take("oa_ticket_bill")
        theme, titles = rng.choice(THEMES)
        title = rng.choice(titles)
        priority = rng.choices((1, 2, 3, 4), weights=(25, 50, 20, 5))[0]
        rule = self.rules[priority]
        approver = rng.choice(people.approvers)
        params = {"billCode": bill_code, "title": title, "ticketId": tid, "group": group.name}
        self.params_json = json.dumps(params)[1:-1]

        # The life as instants (None: did not happen), then cut at now.
        decided = _office(rng, submitted, 6)
        rejected = decided if rng.random() < 0.03 and not showcase else None
        approved = None if rejected else decided
        queued = assigned = accepted = completed = closed = None
        routed = group.strategy != 0
        pause: tuple[datetime, datetime | None] | None = None
        handler = None
        if approved:
            if not routed:  # the pool: an agent takes it, some only days later
                queued = approved
                assigned = _office(rng, approved, 45)
                if rng.random() < 0.3:
                    assigned += timedelta(days=rng.lognormvariate(math.log(1.5), 0.8))
            elif rng.random() < 0.12:  # nobody eligible: waits, then the drain assigns it
                queued = approved
                assigned = approved + timedelta(minutes=rng.lognormvariate(math.log(12), 1.0))
                if rng.random() < 0.1:  # everyone at max_active for a while
                    assigned += timedelta(days=rng.lognormvariate(math.log(1), 0.8))
            else:
                assigned = approved + timedelta(seconds=rng.uniform(0.05, 2))
            if group.strategy == 1:
                group.cursor = (group.cursor + 1) % len(group.members)
                handler = group.members[group.cursor]
            else:
                handler = rng.choice(group.members)
            accepted = assigned + timedelta(minutes=rng.lognormvariate(math.log(4), 1.0))
            if rng.random() < 0.03:  # left unaccepted for a day or so
                accepted += timedelta(days=rng.lognormvariate(math.log(0.8), 0.8))
            handle = timedelta(minutes=rng.lognormvariate(math.log(150), 1.1))
            if rng.random() < 0.08:  # the ones that drag on for days or weeks
                handle = timedelta(days=rng.lognormvariate(math.log(5), 1.0))
            work_from = accepted
            if rng.random() < 0.07:  # waits on the applicant halfway
                paused = accepted + handle * 0.4
                resumed = paused + timedelta(minutes=rng.lognormvariate(math.log(180), 1.0))
                if rng.random() < 0.2:  # the applicant takes days to answer
                    resumed = paused + timedelta(days=rng.lognormvariate(math.log(4), 0.8))
                pause = (paused, resumed)
                work_from, handle = resumed, handle * 0.6
            completed = work_from + handle
            if rng.random() < 0.96:
                closed = completed + timedelta(minutes=rng.lognormvariate(math.log(300), 1.2))
        if showcase:
            handler = group.members[0]
            completed = closed = None
            pause = None
        # Cut at now: what had not happened yet did not.
        if approved and approved > now:
            approved = queued = assigned = accepted = completed = closed = None
            pause, handler = None, None
        if rejected and rejected > now:
            rejected = None
        if assigned and assigned > now:
            assigned = accepted = completed = closed = handler = None
            pause = None
        if accepted and accepted > now:
            accepted = completed = closed = None
            pause = None
        if pause and pause[0] > now:
            pause = None
        if pause and pause[1] and pause[1] > now:
            pause = (pause[0], None)
            completed = closed = None
        if completed and completed > now:
            completed = closed = None
        if closed and closed > now:
            closed = None
        # A duplicate, merged soon after its acceptance into an earlier ticket of its group
        # still open then (collaboration.services.merging): closed unfinished, its clocks
        # `merged`, its conversation and applicant moved to the target.
        merge_into: _Recent | None = None
        merge_at = None
        if closed and completed and not pause and not showcase and rng.random() < MERGED:
            merge_at = accepted + timedelta(minutes=rng.lognormvariate(math.log(40), 0.8))
            if merge_at < completed:
                merge_into = self._merge_target(group, submitted, merge_at)
            if merge_into:
                completed, closed = None, merge_at
            else:
                merge_at = None

        # Statuses.
        process_status = APPROVING
        status = SUBMITTED
        if rejected:
            process_status = REJECTED
        elif approved:
            process_status = APPROVED
            status = PENDING_ASSIGN if queued else SUBMITTED
            if assigned:
                status = PENDING_PROCESS
            if accepted:
                status = PROCESSING
            if completed:
                status = COMPLETED
            if closed:
                status = CLOSED
        if assigned and status == PENDING_ASSIGN:
            queued = None  # (cannot happen: assigned implies pending process or later)

        # Audit trail.
        record = self.record
        record(tid, "submit", creator, None, SUBMITTED, submitted, "{}")
        if rejected:
            record(
                tid,
                "reject",
                approver,
                APPROVING,
                REJECTED,
                rejected,
                '{"field": "process_status", "reason": "Not a matter for this desk."}',
            )
            self.notify(
                "ticket-rejected",
                creator,
                {**params, "reason": REJECT_REASON},
                f"ticket:{tid}:rejected",
                tid,
                rejected,
                f', "reason": "{REJECT_REASON}"',
            )
        sla_rule_id = None
        response_deadline = resolve_deadline = None
        response_timeout = resolve_timeout = response_warned = resolve_warned = False
        sla_paused, sla_paused_at = False, None
        reply_count = public_count = 0
        if approved:
            sla_rule_id = rule.id
            record(tid, "approve", approver, APPROVING, APPROVED, approved, PROCESS_FIELD)
            before = SUBMITTED
            if queued:
                record(tid, "enter_pool", approver, SUBMITTED, PENDING_ASSIGN, queued, STATUS_FIELD)
                before = PENDING_ASSIGN
            decisions = self.buffers["oa_routing_decision"]
            if queued:
                decisions.append(
                    (
                        self.ids.take("oa_routing_decision"),
                        "approval",
                        group.strategy,
                        "queued",
                        _members_seen(group, None, queued, rng),
                        queued,
                        None,
                        group.id,
                        tid,
                    )
                )
            if assigned:
                actor = handler if not routed else (None if queued else approver)
                record(
                    tid,
                    "assign",
                    actor,
                    before,
                    PENDING_PROCESS,
                    assigned,
                    f'{{"field": "ticket_status", "handler_id": {handler}, '
                    f'"strategy": {group.strategy}}}',
                )
                if routed:
                    outcome = "offered" if group.offer_minutes else "assigned"
                    decisions.append(
                        (
                            self.ids.take("oa_routing_decision"),
                            "drain" if queued else "approval",
                            group.strategy,
                            outcome,
                            _members_seen(group, handler, assigned, rng),
                            assigned,
                            handler,
                            group.id,
                            tid,
                        )
                    )
                    self.buffers["oa_assignment_event"].append(
                        (
                            self.ids.take("oa_assignment_event"),
                            "assigned",
                            group.strategy,
                            round(0.3 + (tid % 7) * 0.1, 2),
                            False,
                            False,
                            assigned,
                            group.id,
                            tid,
                            handler,
                            True,
                        )
                    )
                at = assigned.astimezone(UTC).isoformat()
                if routed and group.offer_minutes:
                    self.notify(
                        "ticket-offered",
                        handler,
                        {**params, "minutes": group.offer_minutes},
                        f"ticket:{tid}:offered:{handler}:{at}",
                        tid,
                        assigned,
                        f', "minutes": {group.offer_minutes}',
                    )
                else:
                    self.notify(
                        "ticket-assigned",
                        handler,
                        params,
                        f"ticket:{tid}:assigned:{handler}:{at}",
                        tid,
                        assigned,
                    )
            if accepted:
                record(tid, "accept", handler, PENDING_PROCESS, PROCESSING, accepted, STATUS_FIELD)
            segments = self.buffers["oa_sla_clock_segment"]
            for clock in ("response", "resolve"):
                segments.append(
                    (
                        self.ids.take("oa_sla_clock_segment"),
                        clock,
                        "start",
                        submitted,
                        approved,
                        None,
                        tid,
                    )
                )
            paused_total = timedelta(0)
            if pause:
                record(tid, "sla_pause", handler, None, None, pause[0], "{}")
                segments.append(
                    (
                        self.ids.take("oa_sla_clock_segment"),
                        "resolve",
                        "pause",
                        pause[0],
                        pause[0],
                        handler,
                        tid,
                    )
                )
                if pause[1]:
                    record(tid, "sla_resume", creator, None, None, pause[1], "{}")
                    segments.append(
                        (
                            self.ids.take("oa_sla_clock_segment"),
                            "resolve",
                            "resume",
                            pause[1],
                            pause[1],
                            creator,
                            tid,
                        )
                    )
                    paused_total = pause[1] - pause[0]
                else:
                    sla_paused, sla_paused_at = True, pause[0]
            # Replies, between acceptance and completion (or now).
            if accepted:
                n = SHOWCASE_REPLIES if showcase else rng.choice(self.reply_counts)
                end = completed or merge_at or now
                reply_to = merge_into.id if merge_into else tid
                merged_from = tid if merge_into else None
                span = (end - accepted).total_seconds()
                times = sorted(accepted + timedelta(seconds=rng.random() * span) for _ in range(n))
                replies = self.buffers["oa_ticket_reply"]
                for k, created in enumerate(times):
                    rid = self.ids.take("oa_ticket_reply")
                    if rng.random() < 0.15:
                        kind, author = INTERNAL, handler
                        text = rng.choice(REPLIES_INTERNAL)
                    else:
                        kind = PUBLIC
                        author = handler if k % 2 == 0 else creator
                        text = rng.choice(REPLIES_PUBLIC)
                    replies.append((rid, kind, text, created, author, reply_to, merged_from))
                    reply_count += 1
                    public_count += kind == PUBLIC
                    record(
                        tid,
                        "reply",
                        author,
                        None,
                        None,
                        created,
                        f'{{"reply_id": {rid}, "reply_type": "{REPLY_TYPES[kind]}"}}',
                    )
                    recipient = handler if author == creator or kind == INTERNAL else creator
                    if recipient != author:
                        name = people.names[author]
                        self.notify(
                            "ticket-replied",
                            recipient,
                            {**params, "author": name},
                            f"ticket:{tid}:reply:{rid}",
                            tid,
                            created,
                            f', "author": "{name}"',
                        )
            if completed:
                record(tid, "complete", handler, PROCESSING, COMPLETED, completed, STATUS_FIELD)
                name = people.names[handler]
                self.notify(
                    "ticket-completed",
                    creator,
                    {**params, "handler": name},
                    f"ticket:{tid}:completed",
                    tid,
                    completed,
                    f', "handler": "{name}"',
                )
            if merge_into:
                record(
                    tid,
                    "merge",
                    group.leader,
                    PROCESSING,
                    CLOSED,
                    closed,
                    f'{{"field": "ticket_status", "into_id": {merge_into.id}, '
                    f'"into_bill": "{merge_into.bill_code}"}}',
                )
            elif closed:
                record(tid, "close", creator, COMPLETED, CLOSED, closed, STATUS_FIELD)

            # SLA: 24/7 deadlines, the default ladder's events, timeouts and the outcome.
            response_deadline = submitted + rule.response
            resolve_deadline = submitted + rule.resolve + paused_total
            response_stop = accepted or completed
            resolve_stop = completed or merge_at
            events = self.buffers["oa_sla_event"]
            for clock, deadline, stop in (
                ("response", response_deadline, response_stop),
                ("resolve", resolve_deadline, resolve_stop),
            ):
                open_pause = sla_paused_at if clock == "resolve" else None
                for kind, due in (("warn", deadline - rule.warn), ("timeout", deadline)):
                    position, level_id = rule.levels[(clock, kind)]
                    fired_at = None
                    if stop is not None and stop <= due:
                        state = "void"
                    elif due <= now and not (open_pause and open_pause <= due):
                        state, fired_at = "fired", due + timedelta(seconds=1)
                        record(
                            tid,
                            f"sla_{clock}_level",
                            None,
                            None,
                            None,
                            fired_at,
                            f'{{"clock": "{clock}", "level": {position}, '
                            f'"due_at": "{due.isoformat()}"}}',
                        )
                        code = "ticket-sla-warn" if kind == "warn" else "ticket-sla-timeout"
                        to = [r for r in (handler, group.leader) if r] or people.approvers[:1]
                        shown = f"{deadline:%Y-%m-%d %H:%M} UTC"
                        for recipient in to:
                            self.notify(
                                code,
                                recipient,
                                {**params, "type": clock, "deadline": shown},
                                f"sla:{clock}:level{position}:{tid}",
                                tid,
                                fired_at,
                                f', "type": "{clock}", "deadline": "{shown}"',
                            )
                        if kind == "warn":
                            if clock == "response":
                                response_warned = True
                            else:
                                resolve_warned = True
                        else:
                            record(
                                tid,
                                f"sla_{clock}_timeout",
                                None,
                                None,
                                None,
                                deadline + timedelta(seconds=20),
                                f'{{"deadline": "{deadline.isoformat()}"}}',
                            )
                            if clock == "response":
                                response_timeout = True
                            else:
                                resolve_timeout = True
                    else:
                        state = "pending"
                        if open_pause:
                            due = None
                    events.append(
                        (
                            self.ids.take("oa_sla_event"),
                            clock,
                            position,
                            due,
                            state,
                            fired_at,
                            level_id,
                            tid,
                        )
                    )
            if completed and accepted:
                response_minutes = (accepted - submitted).total_seconds() / 60
                resolve_minutes = (completed - submitted - paused_total).total_seconds() / 60
                response_met = not response_timeout
                resolve_met = not resolve_timeout
                self.buffers["oa_sla_outcome"].append(
                    (
                        self.ids.take("oa_sla_outcome"),
                        round(response_minutes, 2),
                        round(resolve_minutes, 2),
                        response_met,
                        resolve_met,
                        completed,
                        tid,
                        rule.id,
                        False,
                        "met" if response_met else "breached",
                        "met" if resolve_met else "breached",
                    )
                )
            elif merge_into:  # sla_finalize(merged=True): neither met nor breached
                self.buffers["oa_sla_outcome"].append(
                    (
                        self.ids.take("oa_sla_outcome"),
                        round((accepted - submitted).total_seconds() / 60, 2),
                        round((merge_at - submitted).total_seconds() / 60, 2),
                        None,
                        None,
                        merge_at,
                        tid,
                        rule.id,
                        True,
                        "merged",
                        "merged",
                    )
                )

        if showcase:
            self.showcase_id = tid
        moved = moved_public = 0
        if merge_into:  # the replies went with it, and its description as one more
            moved, moved_public = reply_count + 1, public_count + 1
            reply_count = public_count = 0
        self.summary.states[_state(process_status, status, sla_paused)] += 1
        self.buffers["oa_ticket_bill"].append(
            (
                tid,
                bill_code,
                title,
                f"{title}. Reported through the portal.",
                priority,
                theme,
                process_status,
                status,
                submitted,
                approved,
                assigned,
                accepted,
                completed,
                closed,
                response_deadline,
                resolve_deadline,
                response_timeout,
                resolve_timeout,
                reply_count,
                creator,
                handler,
                group.id,
                resolve_warned,
                response_warned,
                sla_paused,
                sla_paused_at,
                sla_rule_id,
                queued if status == PENDING_ASSIGN else None,
                accepted,
                public_count,
                merge_into.id if merge_into else None,
                *_toolbox_values(tid, theme),
            )
        )
        self.bill_rows[tid] = len(self.buffers["oa_ticket_bill"]) - 1
        me = _Recent(tid, group.id, submitted, approved, closed, bill_code, creator)
        me.merged = merge_into is not None
        me.showcase = showcase
        if merge_into:
            self.merged += 1
            self._merge(me, merge_into, group, title, moved, moved_public, merge_at)
        elif approved:
            self._watchers(me, group, handler, closed, showcase)
            self._links(me, group, handler, showcase)
        if completed:
            self._survey(tid, creator, handler, group.id, completed)
        self.recent.append(me)
        if len(self.recent) > RECENT:
            del self.recent[: len(self.recent) - RECENT]

    # Collaboration and satisfaction, once the ticket's row is buffered.

    def _merge_target(self, group: Group, submitted, merge_at) -> _Recent | None:
        """The ticket a duplicate goes into: an earlier one of its group, of the same period,
        approved by then and still open at the merge (a completed one may be merged into),
        not itself merged, not the showcase, its row not yet flushed (its counts move)."""
        for other in reversed(self.recent):
            if submitted - other.submitted > LINK_WINDOW:
                return None
            if (
                other.group == group.id
                and not other.merged
                and not other.showcase
                and other.id in self.bill_rows
                and other.approved is not None
                and other.approved <= merge_at
                and (other.closed is None or other.closed > merge_at)
            ):
                return other
        return None

    def _merge(self, me: _Recent, into: _Recent, group: Group, title, moved, public, at):
        """ticket_merge's rows on the target: its description as a public reply written by
        its applicant at submission, the counts, the applicant as a `merge` watcher, the
        `merged_from` record."""
        self.buffers["oa_ticket_reply"].append(
            (
                self.ids.take("oa_ticket_reply"),
                PUBLIC,
                f"{title}\n\n{title}. Reported through the portal.",
                me.submitted,
                me.creator,
                into.id,
                me.id,
            )
        )
        rows = self.buffers["oa_ticket_bill"]
        row = list(rows[self.bill_rows[into.id]])
        row[18] += moved  # reply_count
        row[29] += public  # public_reply_count
        rows[self.bill_rows[into.id]] = tuple(row)
        watching = self.watching.setdefault(into.id, set())
        added = 0
        if me.creator != into.creator and me.creator not in watching:
            watching.add(me.creator)
            self._watch(into.id, me.creator, group.leader, "merge", at)
            added = 1
        self.record(
            into.id,
            "merged_from",
            group.leader,
            None,
            None,
            at,
            f'{{"source_id": {me.id}, "source_bill": "{me.bill_code}", "replies": {moved}, '
            f'"attachments": 0, "watchers": {added}}}',
        )

    def _watch(self, tid, user, added_by, source, at) -> None:
        self.buffers["oa_ticket_watcher"].append(
            (self.ids.take("oa_ticket_watcher"), tid, user, added_by, source, at)
        )
        self.record(
            tid,
            "watcher_added",
            added_by,
            None,
            None,
            at,
            f'{{"user_id": {user}, "source": "{source}"}}',
        )

    def _watchers(self, me: _Recent, group: Group, handler, closed, showcase) -> None:
        """~5 % of tickets: 1-3 watchers, colleagues the team added (`team`) or the applicant
        copied in (`cc`, from one department); the showcase two of the team and one cc."""
        rng = self.rng
        if showcase:
            picks = [("team", group.members[1]), ("team", group.members[2]), ("cc", None)]
        elif rng.random() < WATCHED:
            picks = [
                ("team" if rng.random() < 0.5 else "cc", None)
                for _ in range(rng.choice((1, 1, 2, 3)))
            ]
        else:
            return
        end = min(closed or self.now, self.now)
        watching = self.watching.setdefault(me.id, set())
        for source, user in picks:
            if user is None:
                if source == "team":
                    user = rng.choice(self.people.agents)
                else:
                    user = self.people.applicants[rng.randrange(CC_POOL)]
            if user in (me.creator, handler) or user in watching:
                continue
            watching.add(user)
            if source == "cc":
                by, at = me.creator, me.submitted + timedelta(seconds=rng.uniform(5, 300))
            else:
                by = handler or group.leader
                at = me.submitted + (end - me.submitted) * rng.uniform(0.05, 0.6)
            self._watch(me.id, user, by, source, min(at, end))

    def _links(self, me: _Recent, group: Group, handler, showcase) -> None:
        """~2 % of tickets the child of an earlier ticket of the same period (a parent link
        always points to a smaller id: no cycle, one parent per child), ~1 % related to an
        earlier one (stored smaller id first); never a merged ticket. The showcase has a
        parent and the next three tickets as its children."""
        rng = self.rng
        by = handler or group.leader
        parent = None
        if self.showcase_children and not showcase:
            parent = next(r for r in reversed(self.recent) if r.showcase)
            self.showcase_children -= 1
        elif showcase or rng.random() < CHILD:
            parent = self._earlier(me)
            if showcase:
                self.showcase_children = 3
        if parent is not None:
            self._link(me, parent, "parent", by)
        if rng.random() < RELATED:
            other = self._earlier(me)
            if other is not None and other is not parent:
                self._link(other, me, "related", by)

    def _earlier(self, me: _Recent) -> _Recent | None:
        candidates = [
            r
            for r in self.recent[-50:]
            if not r.merged
            and r.approved is not None
            and me.submitted - r.submitted <= LINK_WINDOW
            and not r.showcase
        ]
        return self.rng.choice(candidates) if candidates else None

    def _link(self, source: _Recent, target: _Recent, kind: str, by) -> None:
        """The row and link_added on both tickets, each naming the other as seen from it."""
        at = max(source.submitted, target.submitted) + timedelta(
            minutes=self.rng.lognormvariate(math.log(30), 1.0)
        )
        at = min(at, self.now)
        self.buffers["oa_ticket_link"].append(
            (self.ids.take("oa_ticket_link"), source.id, target.id, kind, by, at)
        )
        seen = {"parent": ("parent", "child"), "related": ("related", "related")}[kind]
        for one, two, word in ((source, target, seen[0]), (target, source, seen[1])):
            self.record(
                one.id,
                "link_added",
                by,
                None,
                None,
                at,
                f'{{"ticket_id": {two.id}, "bill_code": "{two.bill_code}", "kind": "{word}"}}',
            )

    def _survey(self, tid, creator, handler, group_id, completed) -> None:
        """survey_ask at the completion; ~35 % answered within days (survey_answer's `rated`
        record), ratings mostly 4-5, a few with a comment."""
        rng, now = self.rng, self.now
        expires = completed + SURVEY_VALID_FOR
        rating = answered = None
        comment = ""
        if rng.random() < SURVEY_ANSWERED:
            answered = completed + timedelta(hours=rng.lognormvariate(math.log(6), 1.3))
            answered = min(answered, expires - timedelta(minutes=1))
            if answered > now:
                answered = None
            else:
                rating = rng.choices((1, 2, 3, 4, 5), weights=RATING_WEIGHTS)[0]
                if rng.random() < (0.6 if rating <= 2 else 0.12):
                    comment = rng.choice(SURVEY_COMMENTS[rating])
                self.record(tid, "rated", creator, None, None, answered, f'{{"rating": {rating}}}')
        self.buffers["oa_ticket_survey"].append(
            (
                self.ids.take("oa_ticket_survey"),
                tid,
                creator,
                handler,
                group_id,
                completed,
                expires,
                rating,
                comment,
                answered,
            )
        )


class _Recent:
    """What a later ticket's link or merge needs of an earlier one."""

    __slots__ = (
        "id", "group", "submitted", "approved", "closed", "bill_code", "creator", "merged",
        "showcase",
    )  # fmt: skip

    def __init__(self, id, group, submitted, approved, closed, bill_code, creator):
        self.id, self.group, self.submitted, self.approved = id, group, submitted, approved
        self.closed, self.bill_code, self.creator = closed, bill_code, creator
        self.merged = self.showcase = False


def _state(process_status: int, status: int, paused: bool) -> str:
    if process_status == APPROVING:
        return "awaiting approval"
    if process_status == REJECTED:
        return "rejected"
    if paused and status == PROCESSING:
        return "paused"
    return {
        SUBMITTED: "approved",
        PENDING_ASSIGN: "in pool",
        PENDING_PROCESS: "assigned",
        PROCESSING: "in progress",
        COMPLETED: "completed",
        CLOSED: "closed",
    }[status]


def _presence(cursor, rng, people: People, ids: Ids, now: datetime, days: int) -> int:
    """Every agent's shifts (weekdays, a coffee break and lunch as busy), offline between;
    the span running now stays open; AgentPresence says offline since its start."""
    first_day = (now - timedelta(days=days)).date()
    written = 0
    with cursor.copy(
        f"COPY oa_presence_span ({', '.join(COLUMNS['oa_presence_span'])}) FROM STDIN"
    ) as copy:
        states = []
        for user_id in people.agents:
            base = rng.uniform(7.5, 10)
            cursor_at = datetime.combine(first_day, datetime.min.time(), tzinfo=UTC)
            last_state_since = cursor_at
            for offset in range(days + 1):
                day = first_day + timedelta(days=offset)
                if day.weekday() >= 5 or rng.random() < 0.06:
                    continue
                midnight = datetime.combine(day, datetime.min.time(), tzinfo=UTC)
                begin = base + rng.uniform(-0.2, 0.3)
                coffee = begin + 2 + rng.uniform(0, 0.5)
                lunch = begin + 4 + rng.uniform(0, 0.5)
                points = [begin, coffee, coffee + 0.2, lunch, lunch + 0.6, begin + 8.5]
                marks = [midnight + timedelta(hours=h) for h in points]
                if marks[0] >= now:
                    break
                spans = [("offline", cursor_at, marks[0])]
                for i in range(len(marks) - 1):
                    spans.append(("available" if i % 2 == 0 else "busy", marks[i], marks[i + 1]))
                for state, s, e in spans:
                    if s >= now:
                        break
                    copy.write_row((ids.take("oa_presence_span"), state, s, min(e, now), user_id))
                    written += 1
                cursor_at = marks[-1]
            last_state_since = min(cursor_at, now)
            copy.write_row(
                (ids.take("oa_presence_span"), "offline", last_state_since, None, user_id)
            )
            written += 1
            states.append((user_id, "offline", last_state_since))
    with cursor.copy("COPY oa_agent_presence (user_id, state, state_since) FROM STDIN") as copy:
        for row in states:
            copy.write_row(row)
    return written


def orphans() -> dict[str, int]:
    """Rows whose foreign key names no row (every one of the tables written here): a history
    written with the foreign-key triggers off must have none."""
    checks = {
        "ticket.creator": ("oa_ticket_bill", "creator_id", "auth_user"),
        "ticket.handler": ("oa_ticket_bill", "handler_id", "auth_user"),
        "ticket.group": ("oa_ticket_bill", "handler_group_id", "oa_ticket_handler_group"),
        "ticket.rule": ("oa_ticket_bill", "sla_rule_id", "oa_sla_rule"),
        "reply.ticket": ("oa_ticket_reply", "ticket_id", "oa_ticket_bill"),
        "reply.author": ("oa_ticket_reply", "author_id", "auth_user"),
        "record.ticket": ("oa_ticket_record", "ticket_id", "oa_ticket_bill"),
        "record.actor": ("oa_ticket_record", "actor_id", "auth_user"),
        "assignment.ticket": ("oa_assignment_event", "ticket_id", "oa_ticket_bill"),
        "assignment.user": ("oa_assignment_event", "user_id", "auth_user"),
        "assignment.group": ("oa_assignment_event", "group_id", "oa_ticket_handler_group"),
        "decision.ticket": ("oa_routing_decision", "ticket_id", "oa_ticket_bill"),
        "decision.chosen": ("oa_routing_decision", "chosen_id", "auth_user"),
        "segment.ticket": ("oa_sla_clock_segment", "ticket_id", "oa_ticket_bill"),
        "event.ticket": ("oa_sla_event", "ticket_id", "oa_ticket_bill"),
        "event.level": ("oa_sla_event", "escalation_level_id", "oa_sla_level"),
        "outcome.ticket": ("oa_sla_outcome", "ticket_id", "oa_ticket_bill"),
        "outcome.rule": ("oa_sla_outcome", "rule_id", "oa_sla_rule"),
        "notification.recipient": ("oa_notification", "recipient_id", "auth_user"),
        "notification.ticket": ("oa_notification", "ticket_id", "oa_ticket_bill"),
        "span.user": ("oa_presence_span", "user_id", "auth_user"),
        "presence.user": ("oa_agent_presence", "user_id", "auth_user"),
        "ticket.merged_into": ("oa_ticket_bill", "merged_into_id", "oa_ticket_bill"),
        "reply.merged_from": ("oa_ticket_reply", "merged_from_id", "oa_ticket_bill"),
        "survey.ticket": ("oa_ticket_survey", "ticket_id", "oa_ticket_bill"),
        "survey.applicant": ("oa_ticket_survey", "applicant_id", "auth_user"),
        "survey.handler": ("oa_ticket_survey", "handler_id", "auth_user"),
        "survey.group": ("oa_ticket_survey", "handler_group_id", "oa_ticket_handler_group"),
        "watcher.ticket": ("oa_ticket_watcher", "ticket_id", "oa_ticket_bill"),
        "watcher.user": ("oa_ticket_watcher", "user_id", "auth_user"),
        "watcher.added_by": ("oa_ticket_watcher", "added_by_id", "auth_user"),
        "link.source": ("oa_ticket_link", "source_id", "oa_ticket_bill"),
        "link.target": ("oa_ticket_link", "target_id", "oa_ticket_bill"),
        "link.created_by": ("oa_ticket_link", "created_by_id", "auth_user"),
    }
    found = {}
    with connection.cursor() as cursor:
        for name, (table, column, target) in checks.items():
            cursor.execute(
                f"SELECT count(*) FROM {table} t WHERE t.{column} IS NOT NULL AND NOT EXISTS "
                f"(SELECT 1 FROM {target} x WHERE x.id = t.{column})"
            )
            found[name] = cursor.fetchone()[0]
    return found
