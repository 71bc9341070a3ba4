"""The Simplified Chinese catalogue is complete and shipped compiled: every string the code and
templates mark for translation has a Chinese translation (read from the sources here, in
Python: no GNU gettext needed to run this), none is fuzzy, each keeps its placeholders, and
the committed .mo says exactly what the .po says (`make messages` regenerates both)."""

import ast
import re
from pathlib import Path

import polib
from django.utils.translation.template import templatize

ROOT = Path(__file__).resolve().parents[1]
PO = ROOT / "locale/zh_Hans/LC_MESSAGES/django.po"
MO = PO.with_suffix(".mo")
PACKAGES = ["accounts", "config", "console", "handler_groups", "insight", "notifications"]
PACKAGES += ["queueing", "routing", "sla", "ticketing", "workflow", "demo"]
PACKAGES += ["attachments", "search", "collaboration", "satisfaction", "live", "mail", "toolbox"]
# function name -> (index of the context argument or None, index of the message)
MARKERS = {
    "_": (None, 0),
    "gettext": (None, 0),
    "gettext_lazy": (None, 0),
    "gettext_noop": (None, 0),
    "ngettext": (None, 0),
    "ngettext_lazy": (None, 0),
    "pgettext": (0, 1),
    "pgettext_lazy": (0, 1),
    "npgettext": (0, 1),
    "npgettext_lazy": (0, 1),
}
PLACEHOLDERS = re.compile(r"%\(\w+\)[sd]|%[sd]")


def _python_calls(source: str) -> set[tuple[str, str]]:
    """(context, msgid) of every marker call in Python whose arguments are string literals."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in MARKERS
        ):
            continue
        literals = [a.value if isinstance(a, ast.Constant) else None for a in node.args]
        context_at, message_at = MARKERS[node.func.id]
        message = literals[message_at] if len(literals) > message_at else None
        context = literals[context_at] if context_at is not None else ""
        if isinstance(message, str) and message and isinstance(context, str):
            found.add((context, message))
    return found


_LITERAL = r"""u(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
TEMPLATE_CALL = re.compile(rf"\b(n?p?gettext)\(((?:\s*{_LITERAL}\s*,?)+)")
LITERAL = re.compile(_LITERAL)


def _template_calls(source: str) -> set[tuple[str, str]]:
    """The same for a template, from Django's own templatize (what makemessages feeds to
    xgettext): gettext(u'…'), pgettext(u'context', u'…'), ngettext(u'…', u'…', …)."""
    found = set()
    for match in TEMPLATE_CALL.finditer(source):
        literals = [ast.literal_eval(lit) for lit in LITERAL.findall(match.group(2))]
        context_at, message_at = MARKERS[match.group(1)]
        context = literals[context_at] if context_at is not None else ""
        if len(literals) > message_at and literals[message_at]:
            found.add((context, literals[message_at]))
    return found


def _python_sources():
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                yield path


def extracted() -> dict[tuple[str, str], str]:
    """Every marked string of the project, with where it was found."""
    found: dict[tuple[str, str], str] = {}
    for path in _python_sources():
        for key in _python_calls(path.read_text()):
            found.setdefault(key, str(path.relative_to(ROOT)))
    for path in (ROOT / "templates").rglob("*.html"):
        source = templatize(path.read_text(), origin=str(path))
        for key in _template_calls(source):
            found.setdefault(key, str(path.relative_to(ROOT)))
    return found


def _catalogue() -> polib.POFile:
    return polib.pofile(str(PO))


def test_the_extractor_finds_strings_in_python_and_templates():
    found = extracted()
    assert ("", "My work") in found  # {% translate %} in a template
    assert ("", "Unknown language.") in found  # gettext in Python
    assert ("SLA clock", "resolve") in found  # pgettext_lazy with a context
    assert len(found) > 300


def test_every_marked_string_has_a_chinese_translation():
    catalogue = {(entry.msgctxt or "", entry.msgid): entry for entry in _catalogue()}
    missing = [
        f"{where}: {msgid!r}" + (f" (context {context!r})" if context else "")
        for (context, msgid), where in sorted(extracted().items(), key=lambda kv: kv[1])
        if (context, msgid) not in catalogue
        or catalogue[(context, msgid)].obsolete
        or not (catalogue[(context, msgid)].msgstr or catalogue[(context, msgid)].msgstr_plural)
    ]
    assert not missing, "not in the zh-hans catalogue (make messages):\n" + "\n".join(missing)


def test_no_entry_is_fuzzy_or_empty_and_each_keeps_its_placeholders():
    problems = []
    for entry in _catalogue():
        if entry.obsolete:
            continue
        if "fuzzy" in entry.flags:
            problems.append(f"fuzzy: {entry.msgid!r}")
        translations = list(entry.msgstr_plural.values()) if entry.msgid_plural else [entry.msgstr]
        expected = set(PLACEHOLDERS.findall(entry.msgid))
        for text in translations:
            if not text:
                problems.append(f"empty: {entry.msgid!r}")
            elif set(PLACEHOLDERS.findall(text)) != expected:
                problems.append(f"placeholders differ: {entry.msgid!r} -> {text!r}")
    assert not problems, "\n".join(problems)


def test_the_compiled_catalogue_says_what_the_po_says():
    compiled = {(e.msgctxt or "", e.msgid): (e.msgstr, e.msgstr_plural) for e in polib.mofile(MO)}
    source = {
        (e.msgctxt or "", e.msgid): (e.msgstr, e.msgstr_plural)
        for e in _catalogue()
        if not e.obsolete and "fuzzy" not in e.flags and e.msgid
    }
    compiled.pop(("", ""), None)  # the header
    assert compiled == source, "locale/*.mo is stale: run make messages"


def test_no_template_comment_spans_lines():
    # Django's {# … #} ends at the line's end: one spread over lines prints as page text
    # (untranslated). Longer notes go in {% comment %}.
    spread = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in (ROOT / "templates").rglob("*.html")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "{#" in line and "#}" not in line[line.index("{#") :]
    ]
    assert not spread, spread
