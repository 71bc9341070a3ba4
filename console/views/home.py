"""`/console/`: each person's home by role (console.roles). Agents get My work here; an
approver's home is the approval queue and everyone else's My tickets, which this page
redirects to. `?home=work|approvals|tickets` switches (and remembers) the home of a person
with several roles."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET

from console import roles
from console.pages import render_console

from .pool import pool


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    homes = roles.homes_for(request)
    asked = request.GET.get("home")
    if asked is not None:
        if asked not in homes:
            return render_console(
                request,
                "console/home_choice.html",
                {"asked": asked, "links": roles.home_links(request)},
                status=400,
            )
        roles.choose_home(request, asked)
        return redirect(roles.HOME_VIEWS[asked])
    # An explicit tab (or any list parameter) is the agent page; a bare /console/ is home.
    if "view" not in request.GET:
        chosen = roles.home_for(request)
        if chosen != roles.WORK:
            return redirect(roles.HOME_VIEWS[chosen])
    return pool(request, default_view="mine")
