"""``novel outline set`` and ``novel outline show``: a hand-written volume outline (seed Milestone 1)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from novel_desktop.cli.common import CliError
from novel_desktop.cli.project import open_store
from novel_desktop.domain.outline import outline_sections, section_title
from novel_desktop.storage import layout


def register(subparsers: Any) -> None:
    outline = subparsers.add_parser(
        "outline",
        help="设置或查看卷大纲 / set or show a volume outline",
        description="卷大纲是 Markdown，每章一节：以“## 第N章 标题”开头。\n"
        "A volume outline is Markdown with one section per chapter, each starting “## 第N章 标题”.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = outline.add_subparsers(dest="outline_command", metavar="子命令/subcommand")
    p = sub.add_parser(
        "set",
        help="从 Markdown 文件设置某卷大纲 / set a volume's outline from a Markdown file",
        description="把手写的大纲存入小说，续写时 ChapterWriter 按它写作。\n"
        "Store a hand-written outline; the ChapterWriter follows it.",
        epilog="例 / example: novel outline set 我的小说.novel --volume 1 outline.md",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("outline", help="大纲 Markdown 文件 / outline Markdown file")
    p.add_argument("--volume", type=int, required=True, help="卷号 / volume number")
    p.set_defaults(handler=cmd_set)
    p = sub.add_parser("show", help="打印某卷大纲 / print a volume's outline")
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--volume", type=int, default=None, help="卷号（默认当前卷） / volume (default: current)")
    p.set_defaults(handler=cmd_show)
    outline.set_defaults(handler=lambda _a: (outline.print_help(), 2)[1])


def cmd_set(args: argparse.Namespace) -> int:
    if args.volume < 1:
        raise CliError("卷号从 1 开始 (volumes start at 1)", 2)
    path = Path(args.outline)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CliError(f"找不到文件 / file not found: {path}", 2) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"无法读取 / cannot read {path}: {exc}", 2) from None
    sections = outline_sections(text)
    if not sections:
        raise CliError("大纲里没有找到“## 第N章”形式的章节标题 (no “## 第N章” headings found)", 1)
    with open_store(args.novel, write=True) as store:
        store.put_document(f"{layout.volume_dir(args.volume)}/outline.md", text)
        cp = store.checkpoint()
        changes: dict[str, Any] = {}
        if args.volume >= int(cp.get("current_volume") or 1):
            changes["current_volume"] = args.volume
        if cp.get("orchestrator_state") in ("INIT", "QUICK_START", "VOL_PLANNING", "VOL_REVIEW"):
            changes["orchestrator_state"] = "WRITING"
        if changes:
            store.update_checkpoint(**changes)
    first, last = min(sections), max(sections)
    print(f"已设置第 {args.volume} 卷大纲：第 {first}–{last} 章，共 {len(sections)} 节 (outline set)")
    for n in sorted(sections):
        print(f"  第{n}章 {section_title(sections[n])}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with open_store(args.novel, write=False) as store:
        volume = args.volume or int(store.checkpoint().get("current_volume") or 1)
        text = store.document(f"{layout.volume_dir(volume)}/outline.md")
    if text is None:
        raise CliError(f"第 {volume} 卷还没有大纲 (volume {volume} has no outline)", 1)
    print(text)
    return 0
