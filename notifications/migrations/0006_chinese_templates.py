"""The shipped templates' wording in Simplified Chinese (recipients whose language is zh-hans
read these; operators edit them in admin like the templates themselves)."""

from django.db import migrations

ZH_HANS = {
    "ticket-assigned": (
        "工单 {{billCode}} 已分配给你",
        "{{group}} 的工单 {{billCode}}（{{title}}）已分配给你。",
    ),
    "ticket-offered": (
        "工单 {{billCode}} 等你接单",
        "工单 {{billCode}}（{{title}}）已派给你，请在 {{minutes}} 分钟内接单，否则将转给其他人。",
    ),
    "ticket-reclaimed": (
        "工单 {{billCode}} 已改派",
        "你没有及时接单，工单 {{billCode}}（{{title}}）已改派给其他人。",
    ),
    "ticket-replied": (
        "{{billCode}} 有新回复",
        "{{author}} 回复了工单 {{billCode}}（{{title}}）。",
    ),
    "ticket-completed": (
        "工单 {{billCode}} 已处理完成",
        "你的工单 {{billCode}}（{{title}}）已由 {{handler}} 处理完成。满意请关闭工单，如仍有问题请回复。",
    ),
    "ticket-rejected": (
        "工单 {{billCode}} 未通过审批",
        "你的工单 {{billCode}}（{{title}}）未通过审批：{{reason}}",
    ),
    "ticket-sla-warn": (
        "[SLA 预警] {{billCode}}",
        "[SLA 预警] 工单 {{billCode}}（{{title}}）：{{type}}时限为 {{deadline}}，请尽快处理。",
    ),
    "ticket-sla-timeout": (
        "[SLA 超时] {{billCode}}",
        "[SLA 超时] 工单 {{billCode}}（{{title}}）：{{type}}时限已过，请立即处理。",
    ),
    "ticket-overflow": (
        "{{billCode}} 无人可接",
        "工单 {{billCode}}（{{title}}）已在 {{group}} 等待 {{minutes}} 分钟，无人可接，请手动分配。",
    ),
}


def install(apps, schema_editor):
    NotifyTemplate = apps.get_model("notifications", "NotifyTemplate")
    Translation = apps.get_model("notifications", "NotifyTemplateTranslation")
    for template in NotifyTemplate.objects.filter(code__in=list(ZH_HANS)):
        title, content = ZH_HANS[template.code]
        Translation.objects.get_or_create(
            template=template, language="zh-hans", defaults={"title": title, "content": content}
        )


def remove(apps, schema_editor):
    apps.get_model("notifications", "NotifyTemplateTranslation").objects.filter(
        language="zh-hans", template__code__in=list(ZH_HANS)
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("notifications", "0005_template_translations")]

    operations = [migrations.RunPython(install, remove)]
