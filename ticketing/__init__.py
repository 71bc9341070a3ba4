"""Ticketing: tickets, replies and their audit trail. The app spans two layers.

Core (below sla and routing): models; lifecycle.py, the state machine (every transition, and
which actions a ticket's state allows now); transitions.py, the compare-and-set primitive that
applies a transition and writes its audit record (the one writer of the trail); notify.py,
lifecycle events turned into notifications. May import (core): handler_groups,
notifications, config.

Flows (above sla and routing): services.py, the ticket_* workflow; access.py, the one home of
who may see and do what (require_* for the API and the pages); selectors.py (the pool, the
public story); apis.py; admin. May import (flows): routing, sla, the core, handler_groups,
notifications, config."""
