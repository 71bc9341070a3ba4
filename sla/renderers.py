"""The SLA report as CSV: GET /api/sla/report/?format=csv (or Accept: text/csv)."""

import csv
import io

from rest_framework.renderers import BaseRenderer

from .serializers import ReportRow

# A cell a spreadsheet would run as a formula (a category is free text): quoted as text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value) -> object:
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class ReportCsvRenderer(BaseRenderer):
    """One line per report row, the JSON rows' fields as columns and their names as the
    header: the group_by value under its own name, then `key` and the ReportRow fields.
    Only a report body is rendered here: the view answers errors in JSON."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"
    filename = "sla-report.csv"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        response = (renderer_context or {}).get("response")
        if response is not None:
            response["Content-Disposition"] = f'attachment; filename="{self.filename}"'
        columns = [data["group_by"], *ReportRow().fields]
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(columns)
        for row in data["rows"]:
            writer.writerow([_cell(row.get(column)) for column in columns])
        return out.getvalue().encode(self.charset)
