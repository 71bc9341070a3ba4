"""@username in an internal note: who it tells, and who the composer offers to mention.

A mention tells a person (ticketing.notify.mentioned, in-app, in their language) only when they
are active, may see the ticket and are on its team (access.can_work_on; staff are); any other
`@word` stays text and tells nobody. The composer's autocomplete (`mentionable`) offers the
people who could be told: staff, the ticket's group's members and leader, and its handler."""

import re

from django.contrib.auth import get_user_model
from django.db.models import Q

from ticketing import access
from ticketing.models import Ticket

# Usernames as Django's validator allows them ([\w.@+-]); an `@` right after one of those
# characters is inside a word or an e-mail address (a@b.com), not a mention.
MENTION = re.compile(r"(?<![\w.@+-])@([\w.@+-]+)")
# Characters a sentence may put right after a name ("ask @bob.", "@carol-").
TRAILING = ".@+-"
MENTIONABLE_LIMIT = 10


def candidates(content: str) -> list[str]:
    """The usernames `content` may mention, in order of appearance: each `@word`, and the
    word without the punctuation a sentence may have put after it. Pure."""
    found: list[str] = []
    for match in MENTION.finditer(content or ""):
        word = match.group(1)
        for name in (word, word.rstrip(TRAILING)):
            if name and name not in found:
                found.append(name)
    return found


def mentioned_in(*, ticket: Ticket, content: str, author) -> list[int]:
    """The ids of the people an internal note on `ticket` tells, in order of appearance:
    those `@username` names who are active, may see the ticket and are on its team (or staff);
    never the author. A name followed by punctuation matches the longest username it
    spells."""
    names = candidates(content)
    if not names:
        return []
    users = {
        user.get_username(): user
        for user in get_user_model().objects.filter(username__in=names, is_active=True)
    }
    told: list[int] = []
    for match in MENTION.finditer(content):
        word = match.group(1)
        user = users.get(word) or users.get(word.rstrip(TRAILING))
        if user is None or user.pk == author.pk or user.pk in told:
            continue
        if _may_be_told(user, ticket):
            told.append(user.pk)
    return told


def _may_be_told(user, ticket: Ticket) -> bool:
    if not access.visible_tickets(user).filter(pk=ticket.pk).exists():
        return False
    return access.can_work_on(user, ticket)


def mentionable(ticket: Ticket, q: str = "") -> list:
    """Up to MENTIONABLE_LIMIT active people the composer offers for `@`: staff, the ticket's
    group's members and leader, its handler; whose username, first or last name starts with
    `q` (any case), by username."""
    team = Q(is_staff=True)
    ids = []
    if ticket.handler_id:
        ids.append(ticket.handler_id)
    group = ticket.handler_group if ticket.handler_group_id else None
    if group is not None:
        ids.extend(group.member_ids)
        if group.leader_id:
            ids.append(group.leader_id)
    if ids:
        team |= Q(pk__in=ids)
    qs = get_user_model().objects.filter(team, is_active=True)
    q = (q or "").strip().lstrip("@")
    if q:
        qs = qs.filter(
            Q(username__istartswith=q) | Q(first_name__istartswith=q) | Q(last_name__istartswith=q)
        )
    return list(qs.order_by("username")[:MENTIONABLE_LIMIT])
