"""The survey link's token: the survey and its ticket, signed (django.core.signing with the
site's SECRET_KEY and a salt of its own, so no other signed value of the site passes for
one), valid SURVEY_VALID_FOR from when it was made. Nothing is stored: the signature is the
proof that the link was the one sent."""

from datetime import timedelta

from django.core import signing

SALT = "ticketdesk.survey"
# How long the applicant may answer: the link's age, and the survey's `expires` alike.
SURVEY_VALID_FOR = timedelta(days=14)


class BadToken(Exception):
    """Not a survey token of this site: forged, altered, or for another ticket."""


class ExpiredToken(BadToken):
    """A genuine token, older than SURVEY_VALID_FOR."""


def make_token(*, survey_id: int, ticket_id: int) -> str:
    return signing.dumps({"s": survey_id, "t": ticket_id}, salt=SALT)


def read_token(token: str) -> tuple[int, int]:
    """The (survey id, ticket id) a token carries; BadToken unless this site signed it for a
    survey, ExpiredToken when it is older than SURVEY_VALID_FOR."""
    try:
        data = signing.loads(token, salt=SALT, max_age=SURVEY_VALID_FOR)
    except signing.SignatureExpired:
        raise ExpiredToken() from None
    except (signing.BadSignature, ValueError):
        raise BadToken() from None
    if not isinstance(data, dict):
        raise BadToken()
    survey_id, ticket_id = data.get("s"), data.get("t")
    if not isinstance(survey_id, int) or not isinstance(ticket_id, int):
        raise BadToken()
    return survey_id, ticket_id
