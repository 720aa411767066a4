"""``novel suggest NOVEL N``: the judge's issues on a chapter as edits, applied by id (issue 14, item 7).

Without ``--apply`` the suggestions are printed (``--json`` for scripts); they are kept with the chapter's
text, so ``--apply S1 S3`` (or ``--apply-all``) then applies exactly those, as a manual edit: a revision is
kept and the chapter and the later ones are marked as needing rebuild, as an edit in the window.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from novel_desktop.cli.common import CliError, print_json
from novel_desktop.cli.on_demand import EXIT_FAILED, _run
from novel_desktop.cli.project import open_session


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "suggest",
        help="按评审意见生成修改建议 / the judge's issues as edits",
        description=(
            "把评审对一章的意见变成逐条的修改建议；--apply 采纳其中几条（作为手动修改保存）。\n"
            "Turn the judge's issues on a chapter into edits; --apply applies chosen ones as a manual edit."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("chapter", type=int, help="章节号 / chapter number")
    p.add_argument("--json", action="store_true", help="以 JSON 输出 / print JSON")
    p.add_argument("--fresh", action="store_true", help="重新生成，不用上次的建议 / ask the model again")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--apply", nargs="+", metavar="ID", help="采纳这些建议，如 S1 S3 / apply these ids")
    which.add_argument("--apply-all", action="store_true", help="采纳全部建议 / apply every suggestion")
    p.set_defaults(handler=cmd_suggest)


def _show(result: Any, as_json: bool) -> None:
    if as_json:
        print_json(
            {
                "chapter": result.chapter,
                "staged": result.staged,
                "issues": result.issues,
                "suggestions": [s.model_dump() for s in result.suggestions],
                "dropped": result.dropped,
                "cost_usd": round(result.cost_usd, 6),
            }
        )
        return
    where = "（暂存草稿）" if result.staged else ""
    print(
        f"第{result.chapter}章{where} 评审意见 {len(result.issues)} 条，修改建议 {len(result.suggestions)} 条"
    )
    for s in result.suggestions:
        print(f"\n[{s.id}] {s.issue}".rstrip())
        print(f"  原文 old: {s.original}")
        print(f"  改为 new: {s.replacement}")
        if s.reason:
            print(f"  理由 why: {s.reason}")
    for line in result.dropped:
        print(f"  ! 已忽略 dropped: {line}", file=sys.stderr)
    for warning in result.warnings:
        print(f"  ! {warning}", file=sys.stderr)
    if result.suggestions:
        print("\n采纳 apply: novel suggest NOVEL N --apply S1 S2 … | --apply-all")
    if result.cost_usd:
        print(f"费用 cost: ${result.cost_usd:.4f}")


def cmd_suggest(args: argparse.Namespace) -> int:
    from novel_desktop.pipeline.suggestions import apply_suggestions, chapter_suggestions

    if args.chapter < 1:
        raise CliError(f"章节号无效：{args.chapter} (bad chapter number)", EXIT_FAILED)
    with open_session(args.novel, write=True) as session:
        if args.apply or args.apply_all:
            ids = None if args.apply_all else list(args.apply)
            done = _run(session, lambda s: apply_suggestions(s.store, s.agents.judge, args.chapter, ids))
            if args.json:
                print_json({"chapter": done.chapter, "applied": done.applied, "marked": done.marked})
                return 0
            applied = "、".join(done.applied)
            print(f"第{done.chapter}章 已采纳 applied: {applied}（保存为手动修改，旧版本可在历史版本中找回）")
            if done.marked:
                later = "、".join(str(n) for n in done.marked)
                print(f"需要重建 needs rebuild: 第 {later} 章（novel rebuild）")
            return 0
        result = _run(
            session, lambda s: chapter_suggestions(s.store, s.agents.judge, args.chapter, fresh=args.fresh)
        )
        _show(result, args.json)
        return 0
