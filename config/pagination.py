from django.utils.translation import gettext_lazy as _
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 200

    def paginate_queryset(self, queryset, request, view=None):
        """A page that is not a number is bad input (400); a page past the end stays a 404."""
        raw = request.query_params.get(self.page_query_param)
        if (
            raw is not None
            and raw not in self.last_page_strings
            and not (raw.isascii() and raw.isdigit())
        ):
            raise ValidationError(
                {self.page_query_param: [_("A page number is a positive integer.")]}
            )
        try:
            return super().paginate_queryset(queryset, request, view)
        except NotFound as exc:
            if raw is not None and raw.isascii() and raw.isdigit() and int(raw) == 0:
                raise ValidationError({self.page_query_param: [_("Pages start at 1.")]}) from exc
            raise

    def get_schema_operation_parameters(self, view):
        """Pages start at 1; a page holds 1 to max_page_size results."""
        bounds = {
            self.page_query_param: {"minimum": 1},
            self.page_size_query_param: {"minimum": 1, "maximum": self.max_page_size},
        }
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"].update(bounds.get(parameter["name"], {}))
        return parameters
