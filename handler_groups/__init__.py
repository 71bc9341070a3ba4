"""Handler groups: the teams tickets are routed to — their members (stored as the source
system's comma string, read and written only through membership.py), leader, strategy and
routing settings (one list: services.ROUTING_FIELDS), per-member capacities, and the names of
the strategies a group can use (strategies.py; routing registers the implementations).

May import: config. Imported by: everything above it (ticketing, sla, routing, console)."""
