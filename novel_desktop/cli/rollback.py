"""``novel rollback`` and ``novel archive``: go back to any chapter, and the chapters a rollback removed.

A rollback moves every chapter after N to the archive (never destroyed) and brings the state, memories,
foreshadowing ledger, contracts and volume position back to right after chapter N, in one transaction.
The archive lists, shows and restores them (one as the next chapter, stale until rebuilt).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from novel_desktop.cli.common import CliError, print_json
from novel_desktop.cli.project import open_store

EXIT_INVALID = 1


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "rollback",
        help="回滚到某一章：移除之后的章节（保留在存档里） / roll back to a chapter",
        description=(
            "回滚到第 N 章：第 N 章之后的章节（和写作中的章节）移到存档里，可随时查看、恢复；\n"
            "状态、故事线记忆、伏笔账本、角色契约和卷进度恢复为第 N 章刚提交后的样子。一次事务完成。\n"
            "不加 --yes 时会先列出要移除的章节并询问。\n"
            "Roll back to chapter N: the chapters after it move to the archive (viewable, restorable);\n"
            "the state, memories, foreshadowing ledger, contracts and volume position are as right after N.\n"
            "退出码 exit codes: 0 已回滚 rolled back, 1 无效或已取消 invalid or declined (nothing changed),\n"
            "2 无法读取 unreadable, 3 被占用 locked"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="例 / example: novel rollback 我的小说.novel --to-chapter 4 --yes",
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--to-chapter", type=int, required=True, metavar="N", help="回滚到第几章 / the chapter")
    p.add_argument("--yes", action="store_true", help="不询问，直接回滚 / do not ask")
    p.add_argument("--json", action="store_true", help="以 JSON 输出结果 / print the result as JSON")
    p.set_defaults(handler=cmd_rollback)

    p = subparsers.add_parser(
        "archive",
        help="回滚移除的章节：列出、查看、恢复 / the chapters rollbacks removed",
        description=(
            "回滚（和重新试写）移除的章节：不加参数时列出；--show ID 打印一章的正文和各版本；\n"
            "--restore ID 把它恢复为下一章（章号须是最后一章 + 1；恢复后标记为待重建）。\n"
            "The archive of removed chapters: list, --show ID, --restore ID (as the next chapter, stale).\n"
            "退出码 exit codes: 0 完成 done, 1 无效或无法恢复 invalid or refused, 2 无法读取 unreadable,\n"
            "3 被占用 locked"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="例 / examples:\n  novel archive 我的小说.novel\n  novel archive 我的小说.novel --restore 3",
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--show", type=int, metavar="ID", help="查看一章 / show one archived chapter")
    group.add_argument("--restore", type=int, metavar="ID", help="恢复为下一章 / restore as the next chapter")
    p.add_argument("--json", action="store_true", help="以 JSON 输出 / print JSON")
    p.set_defaults(handler=cmd_archive)


def _refused(exc: Exception) -> CliError:
    return CliError(f"{exc}；未做任何改动 (nothing changed)", EXIT_INVALID)


def _confirm(prompt: str) -> bool:
    try:
        tty = bool(sys.stdin.isatty())
    except (AttributeError, ValueError, OSError):
        tty = False
    if not tty:
        raise CliError(
            "需要确认才能回滚：请在终端中运行，或加 --yes "
            "(confirmation needed: run it in a terminal or pass --yes)",
            EXIT_INVALID,
        )
    sys.stderr.write(prompt)
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes", "是")


def cmd_rollback(args: argparse.Namespace) -> int:
    from novel_desktop.storage.rollback import RollbackRefused

    target = int(args.to_chapter)
    with open_store(args.novel, write=True) as store:
        try:
            plan = store.rollback_plan(target)
        except RollbackRefused as exc:
            raise _refused(exc) from None
        if not args.yes:
            names = "、".join(f"第{n}章" for n, _t, _c in plan.chapters)
            staged = f"，以及写作中的第 {plan.staged_chapter} 章" if plan.staged_chapter else ""
            print(
                f"将移除 {names}（共 {len(plan.chapters)} 章，{plan.chars} 字）{staged}。\n"
                "它们会保留在存档里（novel archive），可随时查看或恢复；状态、记忆、伏笔和卷进度回到第 "
                f"{target} 章之后。",
                file=sys.stderr,
            )
            if not _confirm(f"回滚到第 {target} 章？[y/N] "):
                print("已取消，未做任何改动 / cancelled, nothing changed", file=sys.stderr)
                return EXIT_INVALID
        try:
            report = store.rollback_to(target)
        except RollbackRefused as exc:
            raise _refused(exc) from None
    if args.json:
        print_json(report.to_json())
        return 0
    print(
        f"已回滚到第 {target} 章：移除 {len(report.removed)} 章（{report.removed_chars} 字），"
        f"已存入存档 #{report.rollback_id} / rolled back to chapter {target}"
    )
    for path in report.restored_documents:
        print(f"  恢复 restored: {path}")
    for path in report.deleted_documents:
        print(f"  移除 removed: {path}")
    print(f"查看或恢复：novel archive {args.novel}")
    return 0


def cmd_archive(args: argparse.Namespace) -> int:
    from novel_desktop.storage.rollback import RollbackRefused

    with open_store(args.novel, write=args.restore is not None) as store:
        try:
            if args.restore is not None:
                info = store.restore_archived(args.restore)
                if args.json:
                    print_json(info.to_json())
                else:
                    print(
                        f"已恢复第 {info.chapter} 章（{info.chars} 字），已标记为待重建；"
                        f"请运行 novel rebuild {args.novel} --from-chapter {info.chapter} "
                        f"/ restored chapter {info.chapter}; it is stale until rebuilt"
                    )
                return 0
            if args.show is not None:
                full = store.archived_chapter(args.show)
                if args.json:
                    print_json(
                        {
                            **full.info.to_json(),
                            "content": full.content,
                            "summary": full.summary,
                            "revisions": [vars(r) for r in full.revisions],
                        }
                    )
                else:
                    info = full.info
                    head = f"#{info.id} 第{info.chapter}章 {info.title}"
                    print(f"{head}（{info.chars} 字，移除于 {info.removed_at}）")
                    print("版本 revisions: " + "、".join(f"{r.kind} {r.chars}字" for r in full.revisions))
                    print()
                    print(full.content)
                return 0
        except RollbackRefused as exc:
            raise _refused(exc) from None
        chapters = store.archived_chapters()
    if args.json:
        print_json([c.to_json() for c in chapters])
        return 0
    if not chapters:
        print("存档里没有章节 / the archive is empty")
        return 0
    for c in chapters:
        mark = f"  已恢复 restored {c.restored_at}" if c.restored_at else ""
        staged = "（写作中）" if c.staged else ""
        head = f"#{c.id}  回滚 {c.rollback_id}  第{c.chapter}章{staged} {c.title}"
        print(f"{head}  {c.chars}字  {c.removed_at}{mark}")
    return 0
