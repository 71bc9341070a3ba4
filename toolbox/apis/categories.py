"""Categories: everyone signed in lists the active ones (staff: `?all=1` adds the inactive);
staff create and change them. A rename carries over to the tickets, SLA rules and mailboxes
holding the old name in one transaction (ticketing.categories says what it costs)."""

from django.urls import path
from django.utils import translation
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import Forbidden
from config.openapi import errors
from ticketing import categories as services
from ticketing.models import Category


class CategoryOutput(serializers.ModelSerializer):
    label = serializers.SerializerMethodField(  # type: ignore[assignment]
        help_text="The name in the caller's language (its translation, else the name)."
    )
    translations = serializers.DictField(
        child=serializers.CharField(), help_text='The name by language, {"zh-hans": "打印机"}.'
    )
    handler_group_id = serializers.IntegerField(
        allow_null=True,
        help_text="Where a ticket of this category submitted without a group goes.",
    )

    class Meta:
        model = Category
        fields = ["id", "name", "label", "translations", "handler_group_id", "active", "order"]
        read_only_fields = fields

    def get_label(self, category: Category) -> str:
        return category.label(translation.get_language())


class CategoryInput(serializers.Serializer):
    name = serializers.CharField(
        max_length=50, help_text="Unique; what tickets, SLA rules and mailboxes hold."
    )
    translations = serializers.DictField(child=serializers.CharField(max_length=50), required=False)
    handler_group_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    active = serializers.BooleanField(required=False)
    order = serializers.IntegerField(required=False, min_value=0, max_value=1_000_000)


class CategoryQuery(serializers.Serializer):
    all = serializers.BooleanField(
        required=False, default=False, help_text="Staff: the inactive categories too."
    )


def _require_staff(request: Request) -> None:
    if not request.user.is_staff:
        raise Forbidden(translation.gettext("Only staff may change categories."))


def _output(category_id: int) -> dict:
    return dict(CategoryOutput(Category.objects.get(pk=category_id)).data)


class CategoriesView(APIView):
    @extend_schema(
        operation_id="categories_list",
        summary="List categories",
        description="What tickets may be about, in order, each with its label in the caller's "
        "language. Everyone signed in; `?all=1` (staff only) adds the inactive ones.",
        parameters=[CategoryQuery],
        responses={200: CategoryOutput(many=True), **errors(400, 401, 403)},
    )
    def get(self, request: Request) -> Response:
        query = CategoryQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        if query.validated_data["all"]:
            _require_staff(request)
        listed = services.categories_listed(include_inactive=query.validated_data["all"])
        return Response(CategoryOutput(listed, many=True).data)

    @extend_schema(
        operation_id="categories_create",
        summary="Create a category",
        description="Staff only. 400 naming `name` (missing, taken, too long), `translations` "
        "or `handler_group_id` (no such group).",
        request=CategoryInput,
        responses={201: CategoryOutput, **errors(400, 401, 403)},
    )
    def post(self, request: Request) -> Response:
        _require_staff(request)
        data = CategoryInput(data=request.data)
        data.is_valid(raise_exception=True)
        category = services.category_create(values=dict(data.validated_data))
        return Response(_output(category.pk), status=status.HTTP_201_CREATED)


class CategoryView(APIView):
    @extend_schema(
        operation_id="categories_partial_update",
        summary="Change a category",
        description="Staff only; only the fields sent change. A new `name` is written, in the "
        "same transaction, to every ticket, SLA rule and mailbox holding the old one (one "
        "UPDATE per table over the rows of that name: slow for a category of many tickets, "
        "whose rows it locks until it commits). `active: false` stops it being offered for "
        "new tickets; tickets keep it.",
        request=CategoryInput(partial=True),
        responses={200: CategoryOutput, **errors(400, 401, 403, 404)},
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH)],
    )
    def patch(self, request: Request, id: int) -> Response:
        _require_staff(request)
        Category.objects.get(pk=id)  # (404 before judging the input)
        data = CategoryInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        category = services.category_update(category_id=id, values=dict(data.validated_data))
        return Response(_output(category.pk))


urlpatterns: list = [
    path("categories/", CategoriesView.as_view(), name="categories"),
    path("categories/<int:id>/", CategoryView.as_view(), name="category"),
]
