"""Satisfaction: asking a ticket's applicant, once, whether the help helped (CSAT).

Owns the Survey (one per completed ticket: who was asked, when it expires, the rating and
comment once answered, the agent and group it rates), the signed link `/survey/<token>/`
that answers it without signing in (tokens.py), the rating API, the alert of a low rating to
the group's leader, and the figures (selectors.satisfaction_figures: responses, response rate,
CSAT, mean, per agent, in SQL).

May import: ticketing (models, access, transitions, notify), notifications, handler_groups,
accounts, config. Imported by: workflow (completion asks), insight and console (figures),
config.urls."""
