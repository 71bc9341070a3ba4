"""The ticket page's links card (being written)."""


def panel(request, ticket, audience) -> dict:
    """What the ticket page shows of this, as the viewer may see it."""
    return {}
