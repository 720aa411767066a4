"""``novel cost``: what the novel's model calls cost, in total, per chapter and per purpose (the ledger)."""

from __future__ import annotations

import argparse
from typing import Any

from novel_desktop.cli.common import display_width, pad, print_json
from novel_desktop.domain.ledger import BEFORE_LEDGER, DISCARDED_DRAFT, WRITE_AHEAD, CostTotals

PURPOSE_NAMES = {
    "write": "写作",
    WRITE_AHEAD: "预写（进程中断）",
    DISCARDED_DRAFT: "作废的预写",
    "revise": "修订",
    "summarize": "摘要",
    "refine": "润色",
    "polish": "二次润色",
    "judge": "评审",
    "rejudge": "重新评审",
    "reevaluate": "批量重评",
    "plan": "规划",
    "quick_start": "快速开始",
    "on_demand": "按需智能体",
    "rebuild": "重建",
    "adopt": "接续书稿",
    "audit": "一致性检查",
    "suggest": "建议",
    "volume_review": "卷末回顾",
    BEFORE_LEDGER: "账本之前（旧文件合计）",
}


def cost_line(total: CostTotals) -> str:
    """``novel status``'s line: the novel's total cost and tokens."""
    return (
        f"总花费 cost: ${total.cost_usd:.4f}（{total.calls} 次调用 calls，"
        f"输入 input {total.total_input_tokens:,} / 输出 output {total.output_tokens:,} tokens）"
    )


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "cost",
        help="花费明细：总计、每章、每种用途 / cost per chapter and per purpose",
        description="列出本小说所有模型调用的 token 与花费（含失败、取消和中断的调用）。",
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--json", action="store_true", help="以 JSON 输出 / print JSON")
    p.set_defaults(handler=cmd_cost)


def _row(label: str, t: CostTotals, width: int) -> str:
    return (
        f"  {pad(label, width)} ${t.cost_usd:>10.4f}  {t.calls:>5} 次  "
        f"输入 {t.total_input_tokens:>10,}  输出 {t.output_tokens:>9,}"
    )


def cmd_cost(args: argparse.Namespace) -> int:
    from novel_desktop.cli.project import open_store

    with open_store(args.novel, write=False) as store:
        report = store.cost_report()
    if args.json:
        print_json(report.to_json())
        return 0
    numbered = sorted((n, t) for n, t in report.by_chapter.items() if n is not None)
    chapters = [(f"第 {n} 章", t) for n, t in numbered]
    if report.by_chapter.get(None) is not None:
        chapters.append(("章节之外 other", report.by_chapter[None]))
    purposes = [
        (PURPOSE_NAMES.get(purpose, purpose), t)
        for purpose, t in sorted(report.by_purpose.items(), key=lambda kv: -kv[1].cost_usd)
    ]
    # One column for the labels of both lists, as wide as the widest (a CJK character takes two columns).
    width = max([display_width(label) for label, _t in chapters + purposes] + [14])
    lines = [cost_line(report.total), "", "每章 per chapter:"]
    lines += [_row(label, t, width) for label, t in chapters] or ["  （无 none）"]
    lines += ["", "每种用途 per purpose:"]
    lines += [_row(label, t, width) for label, t in purposes]
    print("\n".join(lines))
    return 0
