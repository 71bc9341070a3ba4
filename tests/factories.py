import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone

from handler_groups.models import HandlerGroup
from ticketing.models import Ticket


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.test")

    @factory.post_generation
    def password(self, create, extracted, **kwargs):
        self.set_password(extracted or "pw")
        if create:
            self.save(update_fields=["password"])


class ApproverFactory(UserFactory):
    username = factory.Sequence(lambda n: f"approver{n}")

    @factory.post_generation
    def approve_permission(self, create, extracted, **kwargs):
        if create:
            self.user_permissions.add(Permission.objects.get(codename="approve_ticket"))


class StaffFactory(UserFactory):
    username = factory.Sequence(lambda n: f"staff{n}")
    is_staff = True


class HandlerGroupFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = HandlerGroup
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"group{n}")
    assign_strategy = 0

    @factory.post_generation
    def members(self, create, extracted, **kwargs):
        if extracted is not None:
            self.member_ids = [u.pk for u in extracted]
            if create:
                self.save(update_fields=["member_user_ids"])


class TicketFactory(factory.django.DjangoModelFactory):
    """A submitted ticket (awaiting approval). Use services to move it further."""

    class Meta:
        model = Ticket

    bill_code = factory.Sequence(lambda n: f"TKF{n:08d}")
    title = factory.Sequence(lambda n: f"Ticket {n}")
    content = "Something is broken."
    priority = 2
    creator = factory.SubFactory(UserFactory)
    submitted_time = factory.LazyFunction(timezone.now)
