"""Console pages by audience: pool.py (agents), ticket.py (the ticket page for every viewer,
and its actions), applicant.py, approvals.py, inbox.py."""
