"""``novel draft`` (the staged chapter after 手动改) and ``novel chapter`` (a committed one): read, replace.

The same powers the window's draft tab and chapter editor give (issue 14, items 1-2). A replacement comes from
a UTF-8 file; an empty, non-UTF-8 or too large file is refused with nothing changed (exit 1).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from novel_desktop.cli.common import CliError, print_json
from novel_desktop.cli.project import open_store

#: A replacement file larger than this is certainly not a chapter (bytes).
MAX_FILE_BYTES = 2_000_000
EXIT_INVALID = 1


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "draft",
        help="查看、替换或直接提交暂存区里等你修改的章节 / show, replace or commit the staged chapter",
        description=(
            "在低分门控选了“手动改”之后，章节留在暂存区等你修改。\n"
            "  novel draft 小说.novel            打印章号、正文和评审意见\n"
            "  novel draft 小说.novel --replace 改稿.md   换成你的改稿（保留原稿为一个版本）；\n"
            "      下次 novel continue 只重新摘要和评审（不再调用写作模型），然后照常门控\n"
            "  novel draft 小说.novel --commit   按现状直接提交（标记质量问题）\n"
            "After 手动改 at the low-score gate the chapter waits in staging: show it, replace it with your\n"
            "edit (the next `novel continue` re-summarizes and re-judges it, no writer call), or commit it.\n"
            "退出码 exit codes: 0 成功 ok, 1 没有暂存章节或改稿无效 nothing staged / bad file, "
            "2 无法读取 unreadable, 3 被占用 locked"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="例 / example: novel draft 我的小说.novel --replace 改稿.md && novel continue 我的小说.novel",
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--replace", metavar="FILE", help="用这个 UTF-8 文件替换暂存正文 / replace the text")
    group.add_argument("--commit", action="store_true", help="直接提交（标记） / commit as is, flagged")
    p.add_argument("--json", action="store_true", help="以 JSON 输出 / print JSON")
    p.set_defaults(handler=cmd_draft)

    p = subparsers.add_parser(
        "chapter",
        help="查看或替换一个已提交的章节 / show or replace a committed chapter",
        description=(
            "打印第 N 章正文，或用文件替换它（与窗口里编辑保存相同：保留修订版本，"
            "本章及之后的章节标记为需要重建）。\n"
            "Print chapter N, or replace it as the window's editor does (a revision is kept; the chapter\n"
            "and the ones after it are marked as needing rebuild: run `novel rebuild`).\n"
            "退出码 exit codes: 0 成功 ok, 1 章节不存在或文件无效 no such chapter / bad file, "
            "2 无法读取 unreadable, 3 被占用 locked"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="例 / example: novel chapter 我的小说.novel 12 --replace 第12章.md",
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("number", type=int, help="章节号 / chapter number")
    p.add_argument("--replace", metavar="FILE", help="用这个 UTF-8 文件替换正文 / replace the text")
    p.add_argument("--json", action="store_true", help="以 JSON 输出 / print JSON")
    p.set_defaults(handler=cmd_chapter)


def read_text_file(path: str) -> str:
    """The UTF-8 text of a replacement file (a BOM is dropped); raise CliError (exit 1) when unusable."""
    from novel_desktop.pipeline.draft import DraftError, check_text

    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise CliError(
                f"文件太大（{size} 字节，上限 {MAX_FILE_BYTES}），未做任何改动 / file too large: {p}",
                EXIT_INVALID,
            )
        raw = p.read_bytes()
    except FileNotFoundError:
        raise CliError(f"找不到文件，未做任何改动 / file not found: {p}", EXIT_INVALID) from None
    except IsADirectoryError:
        raise CliError(f"这是一个文件夹，不是文本文件 / not a file: {p}", EXIT_INVALID) from None
    except OSError as exc:
        raise CliError(f"无法读取文件 / cannot read {p}: {exc.strerror or exc}", EXIT_INVALID) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CliError(
            f"文件不是 UTF-8 文本，未做任何改动（请另存为 UTF-8） / not UTF-8 text: {p}", EXIT_INVALID
        ) from None
    try:
        return check_text(text.replace("\r\n", "\n"))
    except DraftError as exc:
        raise CliError(f"{exc}：{p}", EXIT_INVALID) from None


def _print_draft(draft: Any) -> None:
    score = f"{draft.score:.1f}" if draft.score is not None else "—"
    state = "等你修改" if draft.awaiting_author else ("你的改稿，待重新评审" if draft.author_edited else "")
    print(f"第 {draft.chapter} 章（暂存区，{draft.chars} 字，评分 {score}）{state}")
    if draft.judged_text_changed:
        print("以下评审意见针对改稿之前的正文 (the judge's issues below are about the text before your edit)")
    for title, items in (
        ("评审问题 issues", draft.issues),
        ("必须修改 required fixes", draft.required_fixes),
        ("违反契约 violations", draft.violations),
    ):
        if items:
            print(f"{title}:")
            for item in items:
                print(f"  - {item}")
    print("-" * 40)
    sys.stdout.write(draft.text if draft.text.endswith("\n") else draft.text + "\n")


def cmd_draft(args: argparse.Namespace) -> int:
    from novel_desktop.pipeline.draft import DraftError, commit_as_is, replace_staged_text, staged_draft

    text = read_text_file(args.replace) if args.replace else None
    with open_store(args.novel, write=bool(text is not None or args.commit)) as store:
        draft = staged_draft(store)
        if draft is None:
            raise CliError(
                "暂存区里没有等待修改的章节 (nothing is staged)：先 novel continue；"
                "低分时选“手动改”，章节就会留在这里",
                EXIT_INVALID,
            )
        try:
            if text is not None:
                draft = replace_staged_text(store, draft.chapter, text)
                message = (
                    f"第 {draft.chapter} 章的暂存正文已换成你的改稿（{draft.chars} 字，原稿保留为一个版本）；"
                    "下次 novel continue 会重新摘要并评审它，不再调用写作模型"
                )
            elif args.commit:
                result = commit_as_is(store, draft.chapter)
                stale = draft.chapter in store.status().stale_chapters
                message = (
                    f"第 {draft.chapter} 章已按现状提交（已标记质量问题），状态版本 {result.state_version}"
                )
                if stale:
                    message += (
                        f"；改稿还没有摘要，请运行 novel rebuild {args.novel} --from-chapter {draft.chapter}"
                    )
            else:
                message = ""
        except DraftError as exc:
            raise CliError(str(exc), EXIT_INVALID) from None
    if args.json:
        data = draft.to_json_dict()
        if message:
            data["message"] = message
        data["committed"] = bool(args.commit)
        print_json(data)
    elif message:
        print(message)
    else:
        _print_draft(draft)
    return 0


def cmd_chapter(args: argparse.Namespace) -> int:
    n = int(args.number)
    text = read_text_file(args.replace) if args.replace else None
    with open_store(args.novel, write=text is not None) as store:
        current = store.chapter_text(n) if n >= 1 else None
        if current is None:
            last = store.checkpoint().get("last_completed_chapter") or 0
            raise CliError(
                f"第 {n} 章不存在（已提交到第 {last} 章），未做任何改动 / chapter {n} does not exist",
                EXIT_INVALID,
            )
        info = next(c for c in store.list_chapters() if c.number == n)
        if text is None:
            if args.json:
                evaluation = store.evaluation(n) or {}
                print_json(
                    {
                        "chapter": n,
                        "title": info.title,
                        "volume": info.volume,
                        "status": info.status,
                        "chars": info.chars,
                        "score": evaluation.get("overall"),
                        "revisions": len(store.revisions(n)),
                        "text": current,
                    }
                )
            else:
                sys.stdout.write(current if current.endswith("\n") else current + "\n")
            return 0
        marked = store.save_manual_edit(n, text, note="novel chapter --replace")
    if args.json:
        print_json({"chapter": n, "changed": bool(marked), "needs_rebuild": marked})
    elif not marked:
        print(f"第 {n} 章正文与文件相同，没有改动 (unchanged)")
    else:
        chapters = "、".join(str(c) for c in marked)
        print(f"第 {n} 章已替换（保留了修订版本）；标记为需要重建的章节：{chapters}")
        print(f"运行 novel rebuild {args.novel} --from-chapter {n} 重新摘要并核对后续章节")
    return 0
