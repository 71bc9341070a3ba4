"""Handler groups: the teams tickets are routed to — their members (stored as the source
system's comma string, read and written only through membership.py), leader, strategy and
routing settings (one list: services.ROUTING_FIELDS), per-member capacities, and the names of
the strategies a group can use (strategies.py; routing registers the implementations), and
the leader rule: who supervises which groups (selectors.groups_led_by, supervises) and the
refusals by it (access.py), for every supervisor's API and page.

May import: config. Imported by: everything above it (ticketing, sla, routing, console)."""
