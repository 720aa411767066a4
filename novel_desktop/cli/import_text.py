"""``novel import-text``: split an existing manuscript into chapters and import it as a new novel.

The same functions serve the GUI's import: :func:`~novel_desktop.analysis.manuscript.read_manuscript`,
:func:`~novel_desktop.analysis.manuscript.split_manuscript` and
:func:`~novel_desktop.storage.manuscript_import.import_manuscript`.

Exit codes: 0 written, dry run, or declined by the author (declining is not an error); 1 nothing to import
(no chapter headings found) or nothing written because there was no terminal to confirm on and no ``--yes``;
2 unreadable input, an existing target file (never overwritten) or another error writing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novel_desktop.analysis.manuscript import ManuscriptError, read_manuscript, split_for_import
from novel_desktop.cli.common import CliError, print_json
from novel_desktop.domain.manuscript import Manuscript, SplitResult
from novel_desktop.domain.text import count_chars, is_han
from novel_desktop.storage.store import PLATFORMS, StoreError

if TYPE_CHECKING:
    from novel_desktop.storage.manuscript_import import ImportSummary

EXIT_NOTHING_WRITTEN = 1
YES_ANSWERS = ("y", "yes", "是", "是的", "好")


def register(subparsers: Any) -> None:
    """Register ``import-text``."""
    p = subparsers.add_parser(
        "import-text",
        help="把已有书稿（txt/md/docx/epub）按章节导入为新小说 / import a manuscript as a new novel",
        description=(
            "读取书稿，自动识别编码与章节标题（第X章/第X回/第X节、楔子、尾声、番外、第X卷），\n"
            "先列出识别到的章节和字数，确认后写入新的 .novel 文件。\n"
            "Read a manuscript, detect its encoding and chapter headings, show the chapters with their\n"
            "character counts, and write a new .novel file once confirmed."
        ),
        epilog=(
            "例 / examples:\n"
            "  novel import-text 书稿.txt 新书.novel --title 剑来\n"
            "  novel import-text 书稿.docx --dry-run --json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", help="书稿文件 .txt/.md/.docx/.epub / manuscript file")
    p.add_argument(
        "novel", nargs="?", help="新 .novel 文件（不会覆盖已有文件） / new novel file (never overwritten)"
    )
    p.add_argument("--title", default=None, help="书名（默认取书稿开头或文件名） / title")
    p.add_argument("--genre", default=None, help="题材 / genre")
    p.add_argument("--platform", choices=PLATFORMS, default="web", help="发布平台 / platform")
    p.add_argument("--yes", "-y", action="store_true", help="不询问，直接写入 / write without asking")
    p.add_argument(
        "--dry-run", action="store_true", help="只显示拆分结果，不写入 / show the split, write nothing"
    )
    p.add_argument("--json", action="store_true", help="以 JSON 输出 / print JSON")
    p.set_defaults(handler=cmd_import_text)


def guess_title(manuscript_path: Path, split: SplitResult) -> str:
    """A title for the new novel: a short Chinese first line of the front matter, else the file name."""
    for line in split.front_matter.splitlines():
        line = line.strip().strip("#《》 \u3000")
        if line:
            if len(line) <= 30 and any(is_han(c) for c in line):
                return line
            break
    return manuscript_path.stem


def cmd_import_text(args: argparse.Namespace) -> int:
    """Read, split, show, confirm, write."""
    source = Path(args.file)
    if not args.dry_run:
        if not args.novel:
            raise CliError("请给出新 .novel 文件的路径，或使用 --dry-run (give the new novel file)", 2)
        if Path(args.novel).exists():
            raise CliError(f"文件已存在，不会覆盖：{args.novel} (file exists, not overwritten)", 2)
    try:
        manuscript = read_manuscript(source)
    except ManuscriptError as exc:
        raise CliError(str(exc), 2) from None
    split = split_for_import(manuscript)

    if args.json and args.dry_run:
        print_json(split.to_json(manuscript.encoding))
        return 0 if split.chapters else EXIT_NOTHING_WRITTEN
    if args.json:
        # Machine mode has no prompt: it writes only with --yes.
        if not split.chapters:
            print_json(split.to_json(manuscript.encoding))
            return EXIT_NOTHING_WRITTEN
        if not args.yes:
            raise CliError("--json 写入需要 --yes（或用 --dry-run 只看结果）(--json needs --yes to write)", 1)
        data = split.to_json(manuscript.encoding)
        data["novel"] = str(_write(args, source, manuscript, split).novel)
        print_json(data)
        return 0

    _print_split(source, manuscript, split)
    if not split.chapters:
        print("没有识别到章节，未写入 (no chapters found; nothing written)", file=sys.stderr)
        return EXIT_NOTHING_WRITTEN
    if args.dry_run:
        print("试运行，未写入 (dry run; nothing written)")
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            print(
                "未写入：没有终端可以确认，确认无误请加 --yes "
                "(nothing written; no terminal to confirm, use --yes)",
                file=sys.stderr,
            )
            return EXIT_NOTHING_WRITTEN
        try:
            answer = input("写入？[y/N] ").strip().lower()
        except EOFError:
            answer = ""
        if answer not in YES_ANSWERS:
            print("已取消，未写入 (declined; nothing written)")
            return 0
    summary = _write(args, source, manuscript, split)
    print(
        f"已导入《{summary.title}》：{summary.chapters} 章，{summary.total_chars:,} 字 "
        f"→ {summary.novel} (imported)"
    )
    for rel in summary.kept_files:
        print(f"  另存 kept: {rel}")
    return 0


def _write(
    args: argparse.Namespace, source: Path, manuscript: Manuscript, split: SplitResult
) -> ImportSummary:
    from novel_desktop.analysis.blacklist import initial_documents
    from novel_desktop.storage.manuscript_import import import_manuscript

    title = args.title or guess_title(source, split)
    try:
        return import_manuscript(
            split,
            args.novel,
            title=title,
            genre=args.genre,
            platform=args.platform,
            source_name=source.name,
            encoding=manuscript.encoding,
            documents=initial_documents(),
        )
    except StoreError as exc:
        raise CliError(str(exc), 2) from None
    except OSError as exc:
        raise CliError(f"无法写入 / cannot write {args.novel}: {exc.strerror or exc}", 2) from None


def _preview(text: str, limit: int = 40) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def _print_split(source: Path, manuscript: Manuscript, split: SplitResult) -> None:
    total = sum(c.chars for c in split.chapters)
    print(
        f"书稿 file: {source.name}（格式 {manuscript.source_format}，编码 encoding: {manuscript.encoding}）"
    )
    print(f"识别到 {len(split.chapters)} 章 chapters，{len(split.volumes)} 卷 volumes，共 {total:,} 字")
    volume_titles = {v.number: v for v in split.volumes}
    shown_volume: int | None = None
    width = max((len(str(c.number)) for c in split.chapters), default=1)
    for chapter in split.chapters:
        if split.volumes and chapter.volume != shown_volume:
            shown_volume = chapter.volume
            v = volume_titles.get(chapter.volume)
            print(f"【第 {chapter.volume} 卷】{v.title if v else ''}")
        # "!" marks a chapter the split was unsure of; the warnings below say why.
        mark = "!" if split.notes_for(chapter.number) else " "
        print(f" {mark}{chapter.number:>{width}}  {chapter.title}  {chapter.chars:,} 字")
    for label, part in (("前置内容 front matter", split.front_matter), ("结尾附加 trailing", split.trailing)):
        if part.strip():
            print(f"{label}: {count_chars(part):,} 字，单独保存、不并入章节 (kept aside): {_preview(part)}")
        else:
            print(f"{label}: 无 (none)")
    if split.warnings:
        print("请检查 warnings:")
        for warning in split.warnings:
            print(f"  ! {warning}")
