"""Message bodies in Markdown, rendered once for every reader: the console's replies and
ticket content and the e-mail about a reply call `render_markdown`, so they carry the same
HTML. CommonMark with line breaks kept (old plain-text bodies read as they did: paragraphs
and line breaks), raw HTML shown as text, and the result sanitised again by nh3 (the
allow-list below): no scripts, event attributes, frames or javascript:/data: URLs. Images
are not rendered (a remote image in a reply or an e-mail is a tracking pixel): `![alt](url)`
becomes a link. Links open in a new tab with rel="noopener noreferrer nofollow"."""

import nh3
from markdown_it import MarkdownIt

ALLOWED_TAGS = {
    "p",
    "br",
    "strong",
    "em",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "a",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}
LINK_REL = "noopener noreferrer nofollow"


def _parser() -> MarkdownIt:
    # html=False: a "<script>" typed in a reply is text, shown as typed.
    parser = MarkdownIt("commonmark", {"breaks": True, "html": False})
    return parser.disable("image")


_markdown = _parser()


def render_markdown(text: str) -> str:
    """The body's HTML, safe to put in a page or an e-mail as it is."""
    html = _markdown.render(text or "")
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel=LINK_REL,
        set_tag_attribute_values={"a": {"target": "_blank"}},
        strip_comments=True,
    ).strip()
