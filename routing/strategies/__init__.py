"""Assignment strategies. Each strategy is a small class in its own module, registered under
the source system's integer code (registry.py); routing/apps.py loads them all. Routing only
ever calls `service.pick_handler`; every strategy takes its candidates from one eligibility
rule (eligibility.py, pure) over member figures read in one statement (candidates.py)."""
