"""``novel context``: what each agent's prompt held for a chapter (issue 16 point 7, the context inspector).

Per agent and round: a table of the prompt's sections (each filled template slot, plus the template's own
words), their token estimates and why each was included; the total and the budget; what the writer's budget
dropped or trimmed. Works for the chapter in flight too (its records are staged).
"""

from __future__ import annotations

import argparse
from typing import Any

from novel_desktop.cli.common import CliError, display_width, pad, print_json
from novel_desktop.domain.context_record import AGENT_NAMES, ContextEntry, agent_key

_STATUS = {"dropped": "已丢弃", "trimmed": "已裁剪"}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "context",
        help="上下文检查：某章各智能体的提示词内容与 token / what each agent's prompt held for a chapter",
        description=(
            "列出某章每个智能体提示词的各个部分、token 估算和纳入原因，以及被预算丢弃或裁剪的内容。"
            "智能体 agents: " + "、".join(f"{k}（{v}）" for k, v in AGENT_NAMES.items())
        ),
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--chapter", type=int, required=True, help="章号 / chapter number")
    p.add_argument("--agent", help="只看一个智能体，如 writer 或 写作 / one agent only")
    p.add_argument("--json", action="store_true", help="以 JSON 输出 / print JSON")
    p.set_defaults(handler=cmd_context)


def entry_lines(entry: ContextEntry) -> list[str]:
    """One agent's table: its header, a row per section, the total and what the budget cut."""
    head = f"== {entry.title}（模板 {entry.template}，角色 {entry.role}，模型 {entry.model}）"
    lines = [head]
    label_width = max([display_width(s.label) for s in entry.sections] + [8])
    for s in entry.sections:
        mark = f" [{_STATUS.get(s.status, s.status)}]" if s.status else ""
        why = s.why + (f"；{s.note}" if s.note else "")
        lines.append(f"  {pad(s.label, label_width)}  {s.tokens:>7,}  {why}{mark}")
    budget = f" / 预算 budget {entry.budget:,}" if entry.budget else ""
    lines.append(f"  {pad('合计 total', label_width)}  {entry.total_tokens:>7,}{budget}")
    cut = entry.dropped
    if cut:
        what = "；".join(f"{s.label}（{s.note}）" for s in cut)
        lines.append(f"  被预算丢弃或裁剪 dropped/trimmed: {what}")
    elif entry.budget:
        lines.append("  预算内，未丢弃任何内容 (nothing dropped)")
    return lines


def cmd_context(args: argparse.Namespace) -> int:
    from novel_desktop.cli.project import open_store
    from novel_desktop.pipeline.context_records import ContextUnavailable, chapter_context

    agent = None
    if args.agent is not None:
        agent = agent_key(args.agent)
        if agent is None:
            names = "、".join(f"{k}（{v}）" for k, v in AGENT_NAMES.items())
            raise CliError(f"没有这个智能体：{args.agent}；可选 {names} (unknown agent)", 1)
    if args.chapter < 1:
        raise CliError(f"章号必须是正整数：{args.chapter} (chapter must be 1 or more)", 1)
    with open_store(args.novel, write=False) as store:
        try:
            record = chapter_context(store, args.chapter)
        except ContextUnavailable as exc:
            raise CliError(str(exc), 1) from exc
    entries = record.entries if agent is None else record.for_agent(agent)
    if agent is not None and record.entries and not entries:
        have = "、".join(dict.fromkeys(e.agent for e in record.entries))
        raise CliError(f"第 {args.chapter} 章没有 {agent} 的提示词记录；有记录的智能体：{have}", 1)
    if args.json:
        data = record.to_json()
        data["entries"] = [e.to_json() for e in entries]
        print_json(data)
        return 0
    state = "（写作中 in flight）" if record.in_flight else ""
    lines = [f"第 {args.chapter} 章的上下文 context of chapter {args.chapter}{state}"]
    if record.note:
        lines.append(record.note)
    for entry in entries:
        lines += ["", *entry_lines(entry)]
    print("\n".join(lines))
    return 0
