"""{{param}} placeholders, pure. A missing parameter is an error, never a hole in a message."""

import re
from collections.abc import Mapping

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class TemplateError(ValueError):
    """Unknown template or missing parameters: the sender sees it; nothing is written."""


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


def render(text: str, params: Mapping[str, object]) -> str:
    missing = sorted(name for name in placeholders(text) if params.get(name) is None)
    if missing:
        raise TemplateError(f"missing parameter(s): {', '.join(missing)}")
    return PLACEHOLDER.sub(lambda m: str(params[m.group(1)]), text)
