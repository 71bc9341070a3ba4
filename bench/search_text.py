"""Support text for the search bench (bench/search.py): mixed Chinese and English, drawn with a
seeded random from a vocabulary of a few thousand words with a Zipf-like law, so that the
common words are in a large share of the documents and the rare ones in a handful.

The vocabulary: real support words first (English with several forms of a word — printer,
printers, printing — and Chinese two- and three-character words), then made-up words (English
from syllables, Chinese from common characters) to reach the size. A word's rank decides its
frequency: weight 1 / (rank + 2) ** 1.05."""

from __future__ import annotations

import random
from bisect import bisect_right
from itertools import accumulate

ENGLISH = """
printer printers printing print printed scanner scanners scanning laptop laptops monitor
monitors screen screens keyboard mouse battery batteries charger dock docking cable cables
network networks wifi wireless vpn proxy firewall router switch connection connections
connect connected connecting disconnect disconnected timeout timeouts slow slower latency
password passwords reset resets account accounts login logins locked unlock unlocked access
permission permissions share shared folder folders drive drives disk disks storage backup
backups restore restored email emails mailbox outlook calendar meeting meetings invite
invites teams chat call calls phone phones headset microphone camera video audio sound
update updates updated updating install installed installing installation uninstall upgrade
upgraded licence licences license expired expire expires renewal renew certificate
certificates token tokens mfa authenticator error errors crash crashes crashed crashing
freeze freezes frozen hang hangs boot booting reboot restart restarted shutdown blue fan
noise overheating overheat hot power adapter office excel word powerpoint pdf document
documents file files attachment attachments upload uploads uploaded download downloads
sync syncing synced server servers database databases query report reports dashboard
invoice invoices payment payments payroll payslip salary expense expenses claim claims
overtime holiday holidays leave sick parental request requests approval approve approved
reject rejected manager team colleague colleagues new starter leaver contract contracts
desk desks chair chairs room rooms heating cooling light lights door badge badges parking
building floor kitchen coffee machine machines paper jam jams jammed toner ink tray
queue queues ticket tickets issue issues problem problems fix fixed fixing broken working
works worked again still urgent asap today tomorrow yesterday morning afternoon evening
week weekend monday friday deadline customer customers supplier suppliers portal website
browser chrome firefox edge cache cookies page pages link links popup popups blocked
virus malware spam phishing suspicious security policy policies encryption encrypted
bitlocker recovery key keys usb port ports hdmi display displays resolution driver drivers
firmware bios settings setting configuration configure configured profile profiles
""".split()

CHINESE = """
打印 打印机 扫描 扫描仪 电脑 笔记本 显示器 屏幕 键盘 鼠标 电池 充电器 网络 无线 证书
代理 防火墙 路由器 连接 断开 超时 缓慢 密码 重置 账号 登录 锁定 解锁 权限 共享 文件夹
硬盘 存储 备份 恢复 邮件 邮箱 日历 会议 邀请 电话 耳机 麦克风 摄像头 视频 音频 声音
更新 安装 卸载 升级 许可证 过期 续期 令牌 认证 错误 崩溃 死机 卡顿 启动 重启 关机 蓝屏
风扇 噪音 过热 电源 适配器 办公 表格 文档 文件 附件 上传 下载 同步 服务器 数据库 查询
报表 报告 发票 付款 工资 工资单 报销 加班 假期 请假 病假 产假 申请 审批 批准 驳回 经理
团队 同事 新员工 离职 合同 工位 椅子 房间 暖气 空调 灯 门禁 工牌 停车 大楼 楼层 厨房
咖啡机 机器 卡纸 纸张 墨盒 硒鼓 纸盒 队列 工单 问题 故障 修复 损坏 正常 仍然 紧急 尽快
今天 明天 昨天 上午 下午 晚上 周末 截止 客户 供应商 门户 网站 浏览器 缓存 页面 链接 弹窗
拦截 病毒 恶意软件 垃圾邮件 钓鱼 可疑 安全 策略 加密 密钥 接口 驱动 固件 设置 配置 无法
不能 已经 需要 请问 谢谢 麻烦 处理 帮忙 检查 确认 提交 反馈 联系 等待 完成 关闭 打开
""".split()

SYLLABLES = "ka lo mi ne tor vex dra pli qua zen ost rum bel fin gar hop jin kel mar nob".split()
HAN_COMMON = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过"
    "子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体"
    "制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内"
)


def vocabulary(rng: random.Random, size_en: int = 2000, size_zh: int = 2000):
    """(English words, Chinese words), each in rank order (most frequent first)."""
    en = list(dict.fromkeys(ENGLISH))
    rng.shuffle(en)
    made: set[str] = set(en)
    while len(en) < size_en:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
        if word not in made:
            made.add(word)
            en.append(word)
    zh = list(dict.fromkeys(CHINESE))
    rng.shuffle(zh)
    made = set(zh)
    while len(zh) < size_zh:
        word = "".join(rng.choice(HAN_COMMON) for _ in range(rng.choice((2, 2, 3))))
        if word not in made:
            made.add(word)
            zh.append(word)
    return en, zh


def _cumulative(n: int) -> list[float]:
    return list(accumulate(1 / (rank + 2) ** 1.05 for rank in range(n)))


class Writer:
    """Documents of support text: `title()`, `body(low, high)` (that many words)."""

    def __init__(self, seed: int, stream: int = 0):
        """The vocabulary follows `seed`; the draws follow `seed` and `stream` (one per
        writing process)."""
        self.rng = random.Random(seed * 1000 + stream)
        self.en, self.zh = vocabulary(random.Random(seed))
        self._cum_en = _cumulative(len(self.en))
        self._cum_zh = _cumulative(len(self.zh))
        self._pool_en: list[str] = []
        self._pool_zh: list[str] = []

    def share(self, word: str) -> float:
        """The chance that one drawn word is `word` (its weight in its language)."""
        for words, cum in ((self.en, self._cum_en), (self.zh, self._cum_zh)):
            if word in words:
                rank = words.index(word)
                return (cum[rank] - (cum[rank - 1] if rank else 0)) / cum[-1]
        return 0.0

    def _words(self, zh: bool, k: int) -> list[str]:
        pool = self._pool_zh if zh else self._pool_en
        if len(pool) < k:
            words, cum = (self.zh, self._cum_zh) if zh else (self.en, self._cum_en)
            pool.extend(self.rng.choices(words, cum_weights=cum, k=200_000))
        taken = pool[-k:]
        del pool[-k:]
        return taken

    def sentence(self, zh: bool, k: int) -> str:
        words = self._words(zh, k)
        if zh:
            return "".join(words) + "。"
        return " ".join(words).capitalize() + "."

    def body(self, low: int, high: int) -> str:
        """45 % Chinese, 35 % English, 20 % both (sentences alternate)."""
        n = self.rng.randint(low, high)
        r = self.rng.random()
        if r < 0.45:
            return self.sentence(True, max(1, n // 2))  # a Chinese word is ~2 characters
        if r < 0.80:
            return self.sentence(False, n)
        parts, left, zh = [], n, self.rng.random() < 0.5
        while left > 0:
            k = min(left, self.rng.randint(4, 10))
            parts.append(self.sentence(zh, max(1, k // 2) if zh else k))
            left -= k
            zh = not zh
        return " ".join(parts)

    def title(self) -> str:
        return self.body(4, 9).rstrip("。.")

    def filename(self) -> str:
        zh = self.rng.random() < 0.4
        words = self._words(zh, self.rng.randint(1, 3))
        stem = ("_" if zh else "-").join(words)
        return f"{stem}.{self.rng.choice(('png', 'txt', 'log', 'pdf', 'jpg', 'docx'))}"


def rank_of(words: list[str], cum: list[float], share: float) -> int:
    """The first rank whose word is drawn with at most this share."""
    total = cum[-1]
    for rank in range(len(words)):
        weight = (cum[rank] - (cum[rank - 1] if rank else 0)) / total
        if weight <= share:
            return rank
    return bisect_right(cum, total) - 1
