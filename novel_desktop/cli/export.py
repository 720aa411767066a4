"""``novel export``: the novel as a book file (txt, md, epub, docx)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from novel_desktop.cli.common import CliError
from novel_desktop.cli.project import open_store
from novel_desktop.storage.book_export import (
    FORMATS,
    SUFFIX_FORMATS,
    ChapterRangeError,
    ExportError,
    export_book,
    format_for,
    parse_chapter_range,
)

EXIT_BAD_RANGE = 1
EXIT_IO = 2


def register(subparsers: Any) -> None:
    """Register ``novel export``."""
    p = subparsers.add_parser(
        "export",
        help="导出为 txt / md / epub / docx 成书文件 / export the novel as a book file",
        description=(
            "把小说（或其中几章）导出为一个文件：\n"
            "  txt   纯文本，适合粘贴到起点、番茄、晋江的章节编辑器（章节标题独占一行，段首空两格）\n"
            "  md    Markdown（书名、卷名、章节标题为各级标题）\n"
            "  epub  电子书，带目录 (EPUB with a table of contents)\n"
            "  docx  Word 文档，首行缩进 2 字符，每章另起一页\n"
            "已存在的输出文件只有加 --force 才会被替换，而且要等新文件完整写好；"
            "只读文件和小说文件本身从不覆盖。\n"
            "Export the novel (or some chapters) as one file. An existing OUT is replaced only with --force, "
            "and only after the new file is complete; a read-only OUT or the novel itself never."
        ),
        epilog=(
            "例 / examples:\n"
            "  novel export 我的小说.novel 我的小说.epub\n"
            "  novel export 我的小说.novel --format txt --chapters 11-20 第11-20章.txt\n"
            "  novel export 我的小说.novel --chapters 30- 新章节.docx\n"
            "  novel export 我的小说.novel --force 我的小说.epub   # 替换上次的导出 replace last export\n"
            "退出码 / exit codes: 0 成功 ok, 1 章节范围有误或未选中章节 bad range or no chapters, "
            "2 无法读取小说、输出已存在（未加 --force）或无法写入 unreadable novel, OUT exists "
            "(no --force) or unwritable output"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("out", metavar="OUT", help="输出文件 / output file")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="导出格式；省略时按 OUT 的扩展名判断 / format (default: from OUT's suffix)",
    )
    p.add_argument(
        "--chapters",
        metavar="A-B",
        default=None,
        help="只导出这些章：5、3-10 或 20-（到最后） / only these chapters: A, A-B or A- (default: all)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="替换已存在的输出文件（只读文件和小说文件本身除外） / replace an existing OUT "
        "(never a read-only one or the novel itself)",
    )
    p.set_defaults(handler=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    """Export the novel and report what was written."""
    fmt = args.format or format_for(args.out)
    if fmt is None:
        suffixes = "、".join(SUFFIX_FORMATS)
        raise CliError(
            f"无法从文件名判断导出格式：{args.out}，请加 --format 或使用扩展名 {suffixes} "
            "(cannot tell the format from OUT; pass --format)",
            EXIT_IO,
        )
    chapters = None
    if args.chapters is not None:
        try:
            chapters = parse_chapter_range(args.chapters)
        except ChapterRangeError as exc:
            raise CliError(str(exc), EXIT_BAD_RANGE) from None
    with open_store(args.novel, write=False) as store:
        try:
            result = export_book(store, Path(args.out), fmt, chapters, force=args.force)
        except ChapterRangeError as exc:
            raise CliError(str(exc), EXIT_BAD_RANGE) from None
        except ExportError as exc:
            raise CliError(str(exc), EXIT_IO) from None
    print(f"已导出 {result.chapters} 章（{result.chars:,} 字）到 {result.path} (exported)")
    for problem in result.problems:
        print(
            f"警告 warning: {problem.message}",
            file=sys.stderr,
        )
    return 0
