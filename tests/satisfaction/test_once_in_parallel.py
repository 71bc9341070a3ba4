"""Two answers at the same moment (two tabs, a double click, the link and the page): exactly
one is taken, on real parallel connections."""

import pytest
from knox.models import AuthToken
from rest_framework.test import APIClient

from satisfaction.models import Survey
from tests.concurrency import run_in_parallel
from ticketing.models import TicketRecord

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_parallel_answers_one_is_taken_the_other_is_a_409(completed, applicant):
    token = AuthToken.objects.create(user=applicant)[1]

    def answer(rating: int):
        def call():
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
            response = client.post(
                f"/api/tickets/{completed.pk}/satisfaction/", {"rating": rating}, format="json"
            )
            return response.status_code, rating

        return call

    results = run_in_parallel([answer(5), answer(1), answer(3)])
    codes = sorted(code for code, _rating in results)  # type: ignore[misc]
    assert codes == [201, 409, 409], results
    winner = next(rating for code, rating in results if code == 201)  # type: ignore[misc]
    assert Survey.objects.get(ticket=completed).rating == winner
    assert TicketRecord.objects.filter(ticket_id=completed.pk, action="rated").count() == 1
