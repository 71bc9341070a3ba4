"""Which home page a person has, by role: agents work from My work, approvers from the
approval queue, everybody (an applicant) from My tickets. A person with several roles
chooses one with `/console/?home=…`; the choice is kept in their session."""

from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from ticketing import access

WORK, APPROVALS, TICKETS = "work", "approvals", "tickets"
HOME_LABELS = {WORK: _("My work"), APPROVALS: _("Approvals"), TICKETS: _("My tickets")}
# The page (URL name) of each home, and the session key of the chosen one.
HOME_VIEWS = {WORK: "console:pool", APPROVALS: "console:approvals", TICKETS: "console:my-tickets"}
SESSION_KEY = "console_home"


def homes_for(request: HttpRequest) -> list[str]:
    """The homes this person may choose, default first: agents (members or leaders of a
    handler group, `ticketing.handle_tickets`, staff) → My work; approvers → Approvals;
    everyone → My tickets. Read once per request."""
    cached = getattr(request, "_console_homes", None)
    if cached is not None:
        return cached
    user = request.user
    homes = []
    if user.is_authenticated:
        if access.audience_for(user).is_handler:
            homes.append(WORK)
        if access.is_approver(user):
            homes.append(APPROVALS)
        homes.append(TICKETS)
    request._console_homes = homes  # type: ignore[attr-defined]  # memo for this request
    return homes


def home_for(request: HttpRequest) -> str:
    """The chosen home if it is still one of theirs (roles change), else the role's default."""
    homes = homes_for(request)
    chosen = request.session.get(SESSION_KEY)
    if chosen in homes:
        return chosen
    return homes[0] if homes else TICKETS


def choose_home(request: HttpRequest, home: str) -> None:
    request.session[SESSION_KEY] = home


def home_links(request: HttpRequest) -> list[dict]:
    """The header's role switch: one link per home. With one home the link goes straight to
    the page; with several it goes through `?home=` so that the choice is remembered."""
    homes = homes_for(request)
    current_view = getattr(getattr(request, "resolver_match", None), "view_name", None)
    chosen = home_for(request) if len(homes) > 1 else None
    links = []
    for home in homes:
        url = reverse(HOME_VIEWS[home])
        if len(homes) > 1:
            url = f"{reverse('console:pool')}?home={home}"
        links.append(
            {
                "home": home,
                "label": HOME_LABELS[home],
                "url": url,
                "current": current_view == HOME_VIEWS[home],
                "chosen": home == chosen,
            }
        )
    return links
