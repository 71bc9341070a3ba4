"""Files in a real browser (static/js/attachments.js), at 1366x900 (and the composer at
390x844 too), in English and Chinese: a screenshot pasted into the composer and a PDF dropped
on it upload at once with their progress and go with the reply; Send waits while an upload
runs; a file over the limit is refused before anything is sent, in the server's words, and a
file the server refuses shows its detail; the new-ticket page takes a file from its picker."""

import re

import pytest
from django.template.defaultfilters import filesizeformat
from django.utils import translation
from playwright.sync_api import expect

from accounts.models import Profile
from attachments import services as attachment_services
from attachments import types
from attachments.errors import FileTooLarge, UnsupportedType
from attachments.models import Attachment
from tests.attachments.helpers import EXE, PDF, png
from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketReply
from workflow import services

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("media")]

VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
COMPOSER = "form.composer"
BOX = "form.composer textarea"
SEND = "form.composer .composer-send"
ROWS = "form[data-uploads] [data-upload]"
SCREENSHOT_NAME = re.compile(r"^screenshot-\d{8}-\d{6}\.png$")

# In the page: a PNG drawn on a canvas, pasted into the composer's text box as the clipboard
# of a screenshot tool has it (a file named image.png, no text).
PASTE_SCREENSHOT = """async () => {
  const canvas = document.createElement("canvas");
  canvas.width = 64; canvas.height = 48;
  const pen = canvas.getContext("2d");
  pen.fillStyle = "#c33"; pen.fillRect(0, 0, 64, 48);
  const blob = await new Promise((done) => canvas.toBlob(done, "image/png"));
  const clipboard = new DataTransfer();
  clipboard.items.add(new File([blob], "image.png", {type: "image/png"}));
  const box = document.querySelector("form.composer textarea");
  box.focus();
  const event = new ClipboardEvent(
    "paste", {clipboardData: clipboard, bubbles: true, cancelable: true}
  );
  box.dispatchEvent(event);
  return event.defaultPrevented;
}"""
# A file dragged over the composer (the drop zone lights up), then dropped on its text box.
DRAG_FILE = """([name, bytes, type]) => {
  const data = new DataTransfer();
  data.items.add(new File([new Uint8Array(bytes)], name, {type}));
  window.dragged = data;
  const box = document.querySelector("form.composer textarea");
  for (const kind of ["dragenter", "dragover"]) {
    box.dispatchEvent(new DragEvent(kind, {dataTransfer: data, bubbles: true, cancelable: true}));
  }
}"""
DROP_FILE = """() => {
  const box = document.querySelector("form.composer textarea");
  const init = {dataTransfer: window.dragged, bubbles: true, cancelable: true};
  box.dispatchEvent(new DragEvent("drop", init));
}"""


@pytest.fixture
def people(transactional_db):
    agent = UserFactory(username="it_bob", password=PASSWORD)
    return {
        "agent": agent,
        "applicant": UserFactory(username="alice", password=PASSWORD),
        "approver": ApproverFactory(username="avery"),
        "desk": HandlerGroupFactory(name="Service desk", members=[agent], assign_strategy=0),
    }


@pytest.fixture
def ticket(people):
    ticket = services.ticket_submit(
        creator=people["applicant"],
        title="VPN drops",
        content="VPN drops: details.",
        priority=2,
        handler_group_id=people["desk"].pk,
    )
    services.ticket_approve(ticket_id=ticket.pk, approver=people["approver"])
    services.ticket_accept(ticket_id=ticket.pk, handler=people["agent"])
    return ticket


def open_page(browser, base, user, path, size="desktop", lang="en"):
    Profile.objects.update_or_create(user=user, defaults={"language": lang, "time_zone": "UTC"})
    context = browser.new_context(
        viewport=VIEWPORTS[size],
        is_mobile=size == "phone",
        locale="zh-CN" if lang == "zh-hans" else "en-US",
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    uploads: list[str] = []
    page.on(
        "request",
        lambda request: (
            uploads.append(request.url)
            if request.method == "POST" and request.url.endswith("/api/attachments/")
            else None
        ),
    )
    log_in(page, base, user.get_username())
    page.goto(f"{base}{path}")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.locator("form[data-uploads-ready]")).to_have_count(1)
    return context, page, uploads


def expect_uploaded(page, count: int) -> None:
    """`count` rows, every upload finished: its progress full, its id in the form."""
    rows = page.locator(ROWS)
    expect(rows).to_have_count(count)
    expect(page.locator(f"{ROWS}[data-state=done]")).to_have_count(count)
    expect(page.locator("form[data-uploads] input[name=attachment_ids]")).to_have_count(count)
    for i in range(count):
        expect(rows.nth(i).locator("progress")).to_have_attribute("value", "100")


@pytest.mark.parametrize(
    ("size", "lang"), [("desktop", "en"), ("desktop", "zh-hans"), ("phone", "en")]
)
def test_a_pasted_screenshot_and_a_dropped_pdf_go_with_the_reply(
    people, ticket, live_server, browser, screenshots_dir, size, lang
):
    base = live_server.url
    context, page, uploads = open_page(
        browser, base, people["agent"], f"/console/tickets/{ticket.pk}/", size, lang
    )
    page.locator(BOX).fill("The screenshot and the guide are attached.")
    assert page.evaluate(PASTE_SCREENSHOT) is True  # the picture is not pasted as text
    expect(page.locator(BOX)).to_have_value("The screenshot and the guide are attached.")
    page.evaluate(DRAG_FILE, ["vpn-guide.pdf", list(PDF), "application/pdf"])
    expect(page.locator(COMPOSER)).to_have_class(re.compile(r"\bis-drop-target\b"))
    page.screenshot(path=screenshots_dir / f"attachments-drop-zone-{size}-{lang}.png")
    page.evaluate(DROP_FILE)
    expect(page.locator(COMPOSER)).not_to_have_class(re.compile(r"\bis-drop-target\b"))
    expect_uploaded(page, 2)
    assert len(uploads) == 2
    names = page.locator(f"{ROWS} [data-upload-name]").all_text_contents()
    assert SCREENSHOT_NAME.match(names[0]), names
    assert names[1] == "vpn-guide.pdf"
    # The size as the server writes it (filesizeformat), in the page's language.
    with translation.override(lang):
        pdf_size = filesizeformat(len(PDF))
    expect(page.locator(ROWS).nth(1).locator("[data-upload-size]")).to_have_text(pdf_size)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= VIEWPORTS[size]["width"]
    page.screenshot(path=screenshots_dir / f"attachments-composer-{size}-{lang}.png")

    page.locator(SEND).click()
    expect(page.locator(BOX)).to_have_value("")
    reply = TicketReply.objects.get(ticket=ticket)
    # (in the order the uploads finished)
    files = {
        a.blob.content_type: a
        for a in Attachment.objects.filter(reply=reply).select_related("blob")
    }
    assert set(files) == {"image/png", "application/pdf"}
    screenshot, guide = files["image/png"], files["application/pdf"]
    assert SCREENSHOT_NAME.match(screenshot.filename) and guide.filename == "vpn-guide.pdf"
    expect(page.locator(ROWS)).to_have_count(0)  # a fresh composer
    page.reload()
    shown = page.locator(f"#reply-{reply.pk} [data-testid=file] .file-name")
    expect(shown).to_have_count(2)
    assert sorted(shown.all_text_contents()) == sorted([screenshot.filename, "vpn-guide.pdf"])
    expect(shown.filter(has_text="vpn-guide.pdf")).to_have_attribute(
        "href", f"/api/attachments/{guide.pk}/download/"
    )
    expect(page.get_by_test_id("files-card").get_by_test_id("file")).to_have_count(2)
    # Once the worker made the screenshot's thumbnail, the page shows it (through the API's
    # permission check, with the session).
    expect(page.locator(".file-tile img")).to_have_count(0)
    assert attachment_services.make_thumbnail(screenshot.blob_id) is True
    page.reload()
    thumbnail = page.locator(f"#reply-{reply.pk} .file-tile img")
    expect(thumbnail).to_have_attribute("src", f"/api/attachments/{screenshot.pk}/thumbnail/")
    expect(thumbnail).to_have_attribute("loading", "lazy")
    thumbnail.scroll_into_view_if_needed()
    page.wait_for_function(
        "(img) => img.complete && img.naturalWidth > 0", arg=thumbnail.element_handle()
    )
    assert page.evaluate("() => document.documentElement.scrollWidth") <= VIEWPORTS[size]["width"]
    page.screenshot(path=screenshots_dir / f"attachments-reply-{size}-{lang}.png", full_page=True)
    context.close()


def test_send_waits_while_an_upload_runs(people, ticket, live_server, browser):
    base = live_server.url
    context, page, _ = open_page(browser, base, people["agent"], f"/console/tickets/{ticket.pk}/")
    held = []
    page.route("**/api/attachments/", lambda route: held.append(route))
    page.locator(BOX).fill("Log attached.")
    page.locator("form.composer input[type=file]").set_input_files(
        {"name": "vpn.log", "mimeType": "text/plain", "buffer": b"tunnel down\n"}
    )
    expect(page.locator(SEND)).to_be_disabled()
    expect(page.locator("form.composer [data-upload-wait]")).to_be_visible()
    page.locator(BOX).press("Control+Enter")  # nor by the keys
    page.wait_for_timeout(300)
    assert not TicketReply.objects.exists()
    held[0].continue_()
    expect_uploaded(page, 1)
    expect(page.locator(SEND)).to_be_enabled()
    expect(page.locator("form.composer [data-upload-wait]")).to_be_hidden()
    page.locator(BOX).press("Control+Enter")
    expect(page.locator(BOX)).to_have_value("")
    reply = TicketReply.objects.get()
    assert [a.filename for a in Attachment.objects.filter(reply=reply)] == ["vpn.log"]
    context.close()


def test_a_removed_upload_is_not_sent(people, ticket, live_server, browser):
    base = live_server.url
    context, page, _ = open_page(browser, base, people["agent"], f"/console/tickets/{ticket.pk}/")
    page.locator("form.composer input[type=file]").set_input_files(
        [
            {"name": "keep.pdf", "mimeType": "application/pdf", "buffer": PDF},
            {"name": "drop.png", "mimeType": "image/png", "buffer": png()},
        ]
    )
    expect_uploaded(page, 2)
    page.locator(ROWS).nth(1).locator("[data-upload-remove]").click()
    expect(page.locator(ROWS)).to_have_count(1)
    page.locator(BOX).fill("Only the PDF.")
    page.locator(SEND).click()
    expect(page.locator(BOX)).to_have_value("")
    reply = TicketReply.objects.get()
    assert [a.filename for a in Attachment.objects.filter(reply=reply)] == ["keep.pdf"]
    context.close()


def test_a_file_over_the_limit_is_refused_before_any_upload(
    people, ticket, live_server, browser, settings, screenshots_dir
):
    settings.ATTACHMENT_MAX_BYTES = 1000
    base = live_server.url
    context, page, uploads = open_page(
        browser, base, people["agent"], f"/console/tickets/{ticket.pk}/"
    )
    expect(page.locator(COMPOSER)).to_have_attribute("data-max-bytes", "1000")
    page.locator("form.composer input[type=file]").set_input_files(
        {"name": "big.log", "mimeType": "text/plain", "buffer": b"x" * 1001}
    )
    row = page.locator(ROWS)
    expect(row).to_have_attribute("data-state", "failed")
    expect(row.locator("[data-upload-error]")).to_have_text(str(FileTooLarge(1000).detail))
    expect(page.locator(SEND)).to_be_enabled()  # a refused file holds nothing up
    page.screenshot(path=screenshots_dir / "attachments-too-large.png")
    page.wait_for_timeout(300)
    assert uploads == []
    assert not Attachment.objects.exists()
    # Sent anyway, the reply goes without it.
    page.locator(BOX).fill("Without the log.")
    page.locator(SEND).click()
    expect(page.locator(BOX)).to_have_value("")
    assert TicketReply.objects.get().content == "Without the log."
    assert not Attachment.objects.exists()
    context.close()


def test_a_file_the_server_refuses_shows_its_detail(people, ticket, live_server, browser):
    base = live_server.url
    context, page, uploads = open_page(
        browser, base, people["agent"], f"/console/tickets/{ticket.pk}/"
    )
    with page.expect_response(lambda r: r.url.endswith("/api/attachments/")) as answer:
        page.locator("form.composer input[type=file]").set_input_files(
            {"name": "invoice.pdf", "mimeType": "application/pdf", "buffer": EXE}
        )
    assert answer.value.status == 415
    row = page.locator(ROWS)
    expect(row).to_have_attribute("data-state", "failed")
    expect(row.locator("[data-upload-error]")).to_have_text(
        str(UnsupportedType(types.detect(EXE)).detail)
    )
    expect(page.locator("form.composer input[name=attachment_ids]")).to_have_count(0)
    row.locator("[data-upload-remove]").click()
    expect(row).to_have_count(0)
    assert len(uploads) == 1 and not Attachment.objects.exists()
    context.close()


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_the_new_ticket_page_takes_a_file_from_its_picker(
    people, live_server, browser, screenshots_dir, lang
):
    base = live_server.url
    context, page, uploads = open_page(
        browser, base, people["applicant"], "/console/submit/", lang=lang
    )
    # Without script a plain file input; with it, its button.
    expect(page.locator("form[data-uploads] input[type=file]")).to_be_hidden()
    expect(page.locator("[data-upload-pick]")).to_be_visible()
    page.locator("#id_title").fill("Printer shows an error")
    page.locator("#id_content").fill("The error is on the photo.")
    with page.expect_file_chooser() as chooser:
        page.locator("[data-upload-pick]").click()
    chooser.value.set_files({"name": "错误 photo.png", "mimeType": "image/png", "buffer": png()})
    expect_uploaded(page, 1)
    expect(page.locator(f"{ROWS} [data-upload-name]")).to_have_text("错误 photo.png")
    assert len(uploads) == 1
    page.screenshot(path=screenshots_dir / f"attachments-submit-{lang}.png")
    page.get_by_test_id("submit-form").locator("button[type=submit]").click()
    page.wait_for_url(re.compile(r"/console/tickets/\d+/$"))
    ticket = Ticket.objects.get()
    assert [a.filename for a in Attachment.objects.filter(ticket=ticket, reply=None)] == [
        "错误 photo.png"
    ]
    expect(page.locator(".side-facts [data-testid=file] .file-name")).to_have_text("错误 photo.png")
    context.close()


def test_without_script_the_files_go_with_the_form(people, live_server, browser):
    base = live_server.url
    people["applicant"].refresh_from_db()
    context = browser.new_context(viewport=VIEWPORTS["desktop"], java_script_enabled=False)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, base, "alice")
    page.goto(f"{base}/console/submit/")
    expect(page.locator("[data-upload-pick]")).to_be_hidden()
    picker = page.locator("input[type=file][name=files]")
    expect(picker).to_be_visible()
    page.locator("#id_title").fill("Scanner broken")
    page.locator("#id_content").fill("Two files.")
    picker.set_input_files(
        [
            {"name": "scan.pdf", "mimeType": "application/pdf", "buffer": PDF},
            {"name": "tool.pdf", "mimeType": "application/pdf", "buffer": EXE},
        ]
    )
    page.get_by_test_id("submit-form").locator("button[type=submit]").click()
    # Refused: nothing submitted, the message by the file field, the text kept.
    expect(page.get_by_test_id("files-error")).to_have_text(
        str(UnsupportedType(types.detect(EXE)).detail)
    )
    expect(page.locator("#id_title")).to_have_value("Scanner broken")
    assert not Ticket.objects.exists() and not Attachment.objects.exists()
    picker.set_input_files({"name": "scan.pdf", "mimeType": "application/pdf", "buffer": PDF})
    page.get_by_test_id("submit-form").locator("button[type=submit]").click()
    page.wait_for_url(re.compile(r"/console/tickets/\d+/$"))
    expect(page.locator(".side-facts [data-testid=file] .file-name")).to_have_text("scan.pdf")
    assert [a.filename for a in Attachment.objects.filter(ticket=Ticket.objects.get())] == [
        "scan.pdf"
    ]
    context.close()
