"""What the demo's people write: each ticket's description and the conversation around it
(the agent's first answer, a question that puts the clock on hold and the applicant's answer
that resumes it, notes to the team, a nudge, the fix and a thank-you). Plain data and a pure
function of a random generator and the ticket's instants, so the history stays deterministic
for a seed; demo/history.py writes the rows.

Most tickets are in English; the titles in Chinese are a Chinese applicant's tickets, and the
conversation around them is in Chinese too."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class Topic:
    body: str  # the applicant's description
    question: str  # what the agent asks when they need the applicant (the clock pauses)
    answer: str  # the applicant's answer (the clock resumes)
    note: str  # a note to the team
    fix: str  # the agent's reply when done


TOPICS: dict[str, Topic] = {
    "Laptop will not boot": Topic(
        "My laptop shows the manufacturer logo and then goes black. I tried holding the power "
        "button for 30 seconds; same thing. I have a client call at three.",
        "Does it show any error message or beep when it goes black? And is it still under "
        "the asset tag sticker on the bottom (number starting with LT-)?",
        "No message, no beeps. The tag is LT-20417.",
        "LT-20417 is in warranty until March. Disk health check failed in the BIOS log.",
        "The disk had failed. I have swapped it and restored your profile from last night's "
        "backup; please check your Desktop files are all there.",
    ),
    "VPN drops every few minutes": Topic(
        "Working from home today and the VPN disconnects every five minutes or so. My home "
        "internet is fine otherwise (video calls work).",
        "Which VPN client version do you see under Help → About? And are you on Wi-Fi or a cable?",
        "Version 5.1.2, on Wi-Fi. Plugged in a cable now and it seems more stable.",
        "5.1.2 has the known keep-alive bug; 5.2.0 is in the software centre since Monday.",
        "I have pushed client 5.2.0 to your laptop; after a restart the tunnel should stay "
        "up on Wi-Fi too.",
    ),
    "Password reset": Topic(
        "I was away for three weeks and my password has expired. I cannot log in to anything.",
        "To confirm it is you: which office do you usually work from, and what is your "
        "manager's name?",
        "Floor 2 in the Lindenstrasse office, my manager is Petra Novak.",
        "Identity confirmed against HR records. Temporary password sent by SMS.",
        "You should have a temporary password by SMS now; you will be asked to choose a new "
        "one at first login.",
    ),
    "New starter needs an account": Topic(
        "Jonas Weber starts in Marketing on Monday and will need a login, e-mail and access "
        "to the Marketing share.",
        "Could you send me Jonas's personnel number and confirm the cost centre?",
        "Personnel number 100482, cost centre 4410.",
        "Account created, licence assigned. Laptop LT-20561 reserved for Monday.",
        "Jonas's account is ready; the first-day letter with his password is with reception.",
    ),
    "Printer on floor 3 jams": Topic(
        "The big printer by the kitchen on floor 3 jams on every second page. There is a "
        "queue of people waiting.",
        "Does it jam with both trays, or only with tray 2 (the A4 one)?",
        "Only tray 2. Tray 1 printed fine just now.",
        "Tray 2 pickup roller worn. Spare roller in the store room, shelf B.",
        "Replaced the tray 2 pickup roller and ran 50 test pages without a jam.",
    ),
    "Outlook keeps asking for the password": Topic(
        "Since this morning Outlook asks for my password every few minutes. I type it, it "
        "works for a while, then asks again.",
        "Did you change your password recently, perhaps on your phone?",
        "Yes, yesterday evening on my phone.",
        "Old credentials cached in Credential Manager. Cleared them remotely.",
        "I have cleared the old saved password; restart Outlook and enter the new one once.",
    ),
    "Monitor flickers": Topic(
        "My left monitor flickers whenever I move the cable a little. It is giving me a headache.",
        "Is it connected through the docking station or directly to the laptop?",
        "Through the docking station.",
        "Probably the DisplayPort cable; we have new ones in the store.",
        "Swapped the DisplayPort cable; the flicker is gone when I wiggle it now.",
    ),
    "Access to the finance share": Topic(
        "I joined the budgeting project and need read access to the Finance\\Planning folder.",
        "Access to Finance needs your manager's approval; can you ask them to reply here?",
        "My manager approved it in the e-mail I forwarded to the service desk address.",
        "Approval found in the shared mailbox, 10:42. Added to FIN-Planning-Read.",
        "You now have read access to Finance\\Planning; log off and on again to see it.",
    ),
    "Install the statistics package": Topic(
        "For the customer survey analysis I need the statistics package on my laptop.",
        "Do you need the full version or is the viewer enough? The full one needs a licence "
        "from your department.",
        "The full version, please; our department has two licences, one is free.",
        "Licence pool shows 1 of 2 free for Research. Assigned.",
        "Installed with the department licence; you will find it in the start menu.",
    ),
    "Phone not syncing mail": Topic(
        "My work phone stopped getting new mail two days ago. Calendar still updates.",
        "Which mail app do you use on the phone, the built-in one or Outlook?",
        "The built-in one.",
        "Device is on the blocked list since the policy change; needs the Outlook app.",
        "Mail on phones now has to go through the Outlook app; I have sent you the install "
        "link and your mail syncs there.",
    ),
    "Payslip question": Topic(
        "My November payslip shows a deduction called 'Adj. 04' that I do not recognise.",
        "Could you tell me your personnel number so I can look at the payroll run?",
        "It is 100233.",
        "Adj. 04 is the canteen card top-up from October, booked late.",
        "'Adj. 04' is the canteen card top-up you made in October; it was booked a month "
        "late, so it appears on November's payslip.",
    ),
    "Holiday balance looks wrong": Topic(
        "The portal says I have 4 days of holiday left, but by my count it should be 9.",
        "Did you carry over days from last year? Those expire on 31 March.",
        "Yes, 5 days. I did not know they expire.",
        "Carry-over of 5 days expired 31/03 as per policy; balance is correct.",
        "The balance is right: the 5 days carried over from last year expired at the end of "
        "March. I have added a note to the portal so this is clearer next year.",
    ),
    "Change of address": Topic(
        "I moved last week. New address: Gartenweg 12, 10115 Berlin.",
        "Please upload your registration certificate (Meldebescheinigung) so we can update "
        "the records.",
        "Uploaded it to the portal just now.",
        "Certificate checked, address updated in payroll and the personnel file.",
        "Your new address is in our records and will be on your next payslip.",
    ),
    "Parental leave request": Topic(
        "I would like to take parental leave from 1 March for six months. What do I need to send?",
        "Could you send the expected date of birth and whether you want to work part-time "
        "during the leave?",
        "Expected date is 12 February; no part-time, full leave please.",
        "Request form prepared; needs the manager's signature before the 7-week deadline.",
        "Your leave from 1 March to 31 August is registered; the confirmation letter is in "
        "your portal inbox.",
    ),
    "Employment certificate needed": Topic(
        "For my flat application I need a certificate of employment stating my salary.",
        "Should the certificate state your gross monthly or annual salary?",
        "Gross monthly, please.",
        "Template 'Employment certificate with salary' filled in; signed by Anna.",
        "The signed certificate is in your portal inbox as a PDF.",
    ),
    "Expense claim not paid": Topic(
        "I submitted my travel expenses for the Hamburg trip six weeks ago and have not been "
        "paid yet.",
        "I cannot find the receipts for the hotel; could you upload them again?",
        "Re-uploaded the hotel invoice and the train tickets.",
        "Claim was stuck waiting for receipts; now complete and approved.",
        "Your claim is approved and will be paid with the next payroll run on the 25th.",
    ),
    "打印机无法连接": Topic(
        "我的笔记本电脑连不上三楼的打印机，显示“打印机脱机”。今天下午要打印合同。",
        "请问您是通过公司 Wi-Fi 还是网线连接的？打印机屏幕上有错误提示吗？",
        "用的是公司 Wi-Fi，打印机屏幕上没有提示。",
        "打印机 IP 在周末被 DHCP 改了，需要在打印服务器上更新端口。",
        "已更新打印服务器上的端口，请重新打印一次试试。",
    ),
    "邮箱空间已满": Topic(
        "邮箱提示空间已满，无法发送邮件。能帮忙扩容吗？",
        "您的邮箱里有很多大附件，可以先归档去年的邮件吗？还是需要申请扩容？",
        "我已经归档了一部分，但还是希望扩容，工作需要保留附件。",
        "部门经理已批准扩容到 100 GB。",
        "邮箱已扩容到 100 GB，现在可以正常收发邮件了。",
    ),
    "工资条有疑问": Topic(
        "这个月的工资条上多扣了一笔“补扣社保”，请问是什么原因？",
        "请提供您的工号，我查一下本月的工资核算。",
        "工号 100587。",
        "补扣的是上月入职时未扣的社保部分，金额正确。",
        "这笔是您入职当月未扣的社保，本月补扣，金额无误。已在系统中备注说明。",
    ),
    # The tickets around now (demo/history.py's staged ones).
    "Docking station missing": Topic(
        "My desk on floor 4 has no docking station since the move. I am working on the "
        "laptop screen only.",
        "",
        "",
        "",
        "",
    ),
    "Cannot open the CRM": Topic(
        "The CRM shows 'Session expired' as soon as I log in, in both Chrome and Edge.",
        "",
        "",
        "",
        "",
    ),
    "Keyboard replacement": Topic(
        "The space bar on my keyboard sticks. Could I get a new keyboard?", "", "", "", ""
    ),
    "Sick note upload fails": Topic(
        "Uploading my sick note in the portal fails with 'File type not allowed'. It is a "
        "photo from my phone (HEIC).",
        "",
        "",
        "",
        "",
    ),
    "Teams camera black": Topic(
        "In Teams my camera shows only a black picture. It works in the Camera app.",
        "",
        "",
        "",
        "",
    ),
    "Overtime not on payslip": Topic(
        "The 12 hours of overtime I did in October are not on my November payslip.",
        "",
        "",
        "",
        "",
    ),
    "Shared mailbox access": Topic(
        "Please give me access to the sales-support@ shared mailbox; I am covering for Lea "
        "while she is on leave.",
        "",
        "",
        "Lea's manager confirmed the cover by phone; access until the 20th.",
        "",
    ),
    "Pension enrolment": Topic(
        "I would like to join the company pension scheme. How do I enrol?",
        "",
        "",
        "Scheme form v3 is the current one; the old v2 PDF is still on the intranet.",
        "",
    ),
    "Which laptop model do you have?": Topic(
        "I need a replacement charger for my laptop; mine stopped working this morning.",
        "Which laptop model do you have? The model name is on the sticker under the laptop.",
        "",
        "Chargers for the 14-inch and 15-inch models look alike but differ (65 W vs 90 W).",
        "",
    ),
    "Wi-Fi password for guests": Topic(
        "We have visitors from a supplier this afternoon; what is today's guest Wi-Fi password?",
        "",
        "",
        "",
        "Today's guest password is on the card at reception; I have also e-mailed it to you.",
    ),
    "Holiday request approved?": Topic(
        "I requested holiday for 23-27 December two weeks ago and it still says 'pending'.",
        "",
        "",
        "",
        "Your manager approved it this morning; the portal shows it as approved now.",
    ),
    "Mouse not working": Topic(
        "My mouse stopped working; new batteries did not help.",
        "",
        "",
        "",
        "I have left a new mouse on your desk.",
    ),
    "Server room badge reader broken": Topic(
        "The badge reader at the server room door does not react; the on-call engineer "
        "cannot get in.",
        "",
        "",
        "",
        "",
    ),
    "Contract amendment": Topic(
        "I moved to four days a week from January; my contract amendment has not arrived.",
        "",
        "",
        "Amendment draft with legal since last week.",
        "",
    ),
}

FIRST_ANSWERS = {
    "en": [
        "Thanks for reporting this, I am on it.",
        "Hi, I have picked this up and am looking into it now.",
        "Thanks, I can see the problem. Give me a little while.",
    ],
    "zh": ["收到，我来处理。", "您好，这个问题我来跟进。"],
}
NUDGES = {
    "en": ["Any news on this?", "Is there anything else you need from me?"],
    "zh": ["请问处理得怎么样了？"],
}
NUDGE_ANSWERS = {
    "en": ["Still on it; I expect to have it done today.", "Nearly there, thanks for waiting."],
    "zh": ["正在处理，今天内完成。"],
}
THANKS = {
    "en": ["Works now, thank you!", "All good, thanks for the quick help.", "Confirmed, thanks."],
    "zh": ["已经好了，谢谢！", "问题解决了，非常感谢。"],
}
STAGED_NOTES = {
    "en": "Checked the knowledge base; nothing similar open right now.",
    "zh": "已查知识库，暂无类似问题。",
}
PUBLIC, INTERNAL = 1, 2


@dataclass(frozen=True)
class Line:
    """One message: who wrote it (applicant or agent), public or a note, when."""

    by_agent: bool
    reply_type: int
    content: str
    at: datetime


def language(title: str) -> str:
    return "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in title) else "en"


def body(title: str) -> str:
    topic = TOPICS.get(title)
    return topic.body if topic else title


def conversation(
    rng: random.Random,
    *,
    title: str,
    accepted: datetime | None,
    pauses: list[tuple[datetime, datetime | None]],
    completed: datetime | None,
    closed: datetime | None,
    now: datetime,
) -> list[Line]:
    """The messages of a ticket handled from `accepted` on, each strictly inside the stretch
    it belongs to (so the audit trail stays in order): a first answer after the accept; for
    each pause the agent's question just before it and, when it ended, the applicant's answer
    at its end (the answer is what resumed the clock, as in workflow.services.ticket_reply);
    sometimes a note to the team or a nudge and its answer; the fix just before completion;
    often the applicant's thanks before the close."""
    if accepted is None:
        return []
    topic = TOPICS.get(title)
    lang = language(title)
    end = completed or now
    lines: list[Line] = []
    first = accepted + (end - accepted) * rng.uniform(0.02, 0.1)
    if pauses:
        first = min(first, pauses[0][0] - timedelta(seconds=30))
    if first > accepted:
        lines.append(Line(True, PUBLIC, rng.choice(FIRST_ANSWERS[lang]), first))
    for paused, resumed in pauses:
        question = topic.question if topic and topic.question else None
        if question:
            lines.append(Line(True, PUBLIC, question, paused - timedelta(seconds=5)))
        if resumed is not None and topic and topic.answer:
            lines.append(Line(False, PUBLIC, topic.answer, resumed))
    # From the last resume on (None: waiting on the applicant now, nothing more happens).
    working_from: datetime | None = pauses[-1][1] if pauses else accepted
    if working_from is not None and topic and topic.note and rng.random() < 0.6:
        at = working_from + (end - working_from) * rng.uniform(0.3, 0.6)
        lines.append(Line(True, INTERNAL, topic.note, at))
    elif working_from is not None and completed is None and topic and not topic.note:
        at = working_from + (end - working_from) * 0.5
        lines.append(Line(True, INTERNAL, STAGED_NOTES[lang], at))
    if working_from is not None and rng.random() < 0.15 and end - working_from > timedelta(hours=2):
        nudge = working_from + (end - working_from) * 0.7
        lines.append(Line(False, PUBLIC, rng.choice(NUDGES[lang]), nudge))
        lines.append(
            Line(True, PUBLIC, rng.choice(NUDGE_ANSWERS[lang]), nudge + timedelta(minutes=4))
        )
    if completed is not None:
        fix = topic.fix if topic and topic.fix else None
        if fix:
            lines.append(Line(True, PUBLIC, fix, completed - timedelta(seconds=20)))
        if closed is not None and rng.random() < 0.6:
            thanks_at = completed + (closed - completed) * rng.uniform(0.1, 0.9)
            lines.append(Line(False, PUBLIC, rng.choice(THANKS[lang]), thanks_at))
    lines = [line for line in lines if accepted < line.at <= now]
    return sorted(lines, key=lambda line: line.at)
