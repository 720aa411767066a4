"""``novel init``, ``status``, ``export-folder``, ``import-folder`` and ``unlock``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novel_desktop.cli.common import CliError, print_json
from novel_desktop.cli.cost import cost_line
from novel_desktop.storage import lock
from novel_desktop.storage.store import PLATFORMS, NovelStore, clear_stale_lock

if TYPE_CHECKING:
    from novel_desktop.pipeline.interaction import Responder
    from novel_desktop.session import NovelSession

EXIT_LOCKED = 3

PLATFORM_HELP = "发布平台 / platform: qidian 起点, tomato 番茄, jjwxc 晋江, web 自建站"


@contextmanager
def open_session(path: str, *, write: bool, responder: Responder | None = None) -> Iterator[NovelSession]:
    """Open a novel as a session for a command: for writing (the writer lock) or read-only (``mode=ro``:
    nothing is written, no journal change, a read-only file can be read).

    Its errors (:class:`StoreError`, a lock held elsewhere) reach :func:`novel_desktop.cli.main`, which
    prints them. The client and agents are built when the command first uses them; a settings problem is
    printed then. A writable novel on a network file system says once that it does without WAL.
    """
    from novel_desktop.session import NovelSession

    session = NovelSession.open(path, write=write, responder=responder)
    try:
        say_journal(session.store)
        yield session
    finally:
        session.close()


def say_journal(store: NovelStore) -> None:
    """Say on stderr why the novel is not in WAL mode, when it is not (a network file system)."""
    journal = store.journal
    if journal is not None and journal.mode.upper() != "WAL":
        print(f"提示 note: {journal.reason}", file=sys.stderr)


@contextmanager
def open_store(path: str, *, write: bool) -> Iterator[NovelStore]:
    """Open a novel for a command that needs no model: the session's store."""
    with open_session(path, write=write) as session:
        yield session.store


def warn_settings(session: NovelSession) -> None:
    """Print why the saved LLM settings could not be used, if they could not."""
    if session.settings_problem:
        print(f"警告 warning: {session.settings_problem}", file=sys.stderr)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "init",
        help="新建一部小说（一个 .novel 文件） / create a new novel file",
        description=(
            "新建一部小说：一个保存全部内容的 SQLite 文件。\n"
            "Create a new novel: one SQLite file that holds everything."
        ),
        epilog='例 / example: novel init 我的小说.novel --title "剑来" --genre 玄幻 --platform qidian',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("novel", help="新文件路径 / path of the new .novel file")
    p.add_argument("--title", required=True, help="书名 / title")
    p.add_argument("--genre", default=None, help="题材，如 玄幻、都市、悬疑 / genre")
    p.add_argument("--platform", choices=PLATFORMS, default="web", help=PLATFORM_HELP)
    p.set_defaults(handler=cmd_init)

    p = subparsers.add_parser(
        "status",
        help="查看进度：卷、章节、字数、均分、伏笔 / show progress",
        description="只读查看小说状态。Show the novel's progress (read-only).",
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--json", action="store_true", help="以 JSON 输出 / print JSON")
    p.set_defaults(handler=cmd_status)

    p = subparsers.add_parser(
        "export-folder",
        help="导出为种子项目文件夹 / export to a seed project folder",
        description="把小说导出为 PRD §9.1 的项目文件夹（可再导入，无损）。\n"
        "Write the novel as the seed project folder (§9.1); importing it back is lossless.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument(
        "folder",
        help="目标文件夹（须为空或不存在，否则加 --force） / target folder (new or empty, else --force)",
    )
    p.add_argument(
        "--skeleton",
        action="store_true",
        help="同时建好种子布局的全部空文件夹（供外部执行器写入） / also create every empty folder of the "
        "seed layout, for an external executor",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="替换已存在的非空文件夹（新文件夹完整写好后才替换） / replace a non-empty folder, only once "
        "the new one is complete",
    )
    p.set_defaults(handler=cmd_export_folder)

    p = subparsers.add_parser(
        "import-folder",
        help="从种子项目文件夹导入为新小说 / import a seed project folder",
        description="读取 PRD §9.1 的项目文件夹，生成新的 .novel 文件；未知文件原样保留并列出。\n"
        "Read a seed project folder into a new .novel file; unknown files are kept and listed.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("folder", help="项目文件夹 / project folder")
    p.add_argument("novel", help="新 .novel 文件 / new novel file")
    p.add_argument(
        "--title", default=None, help="书名（默认取 brief.md 标题） / title (default: from brief.md)"
    )
    p.add_argument("--genre", default=None, help="题材 / genre")
    p.add_argument("--platform", choices=PLATFORMS, default="web", help=PLATFORM_HELP)
    p.add_argument("--json", action="store_true", help="以 JSON 输出导入报告 / print the report as JSON")
    p.set_defaults(handler=cmd_import_folder)

    p = subparsers.add_parser(
        "unlock",
        help="清除僵尸写入锁 / clear a stale writer lock",
        description=(
            "持有写入锁的进程已不存在时，清除这把锁。\nClear the writer lock when its holder is gone."
        ),
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument(
        "--force", action="store_true", help="即使持有者似乎还在也清除（危险） / clear even a live lock"
    )
    p.set_defaults(handler=cmd_unlock)


def cmd_init(args: argparse.Namespace) -> int:
    from novel_desktop.session import NovelSession

    session = NovelSession.create(args.novel, title=args.title, genre=args.genre, platform=args.platform)
    say_journal(session.store)
    session.close()
    print(f"已创建《{args.title}》：{args.novel} (created)")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    with open_store(args.novel, write=False) as store:
        report = store.status()
    if args.json:
        print_json(report.to_json())
        return 0
    score = f"{report.mean_score:.2f}" if report.mean_score is not None else "—"
    from novel_desktop.pipeline.orchestrator import STAGE_DONE

    # The stage in words, its id after it as the English (评审完成 judged).
    raw = report.pipeline_stage
    stage = f"{STAGE_DONE.get(raw, '')} {raw}".strip() if raw else "空闲 idle"
    lines = [
        f"《{report.title}》",
        f"当前卷 volume: 第 {report.current_volume} 卷",
        f"已完成 last chapter: 第 {report.last_completed_chapter} 章（共 {report.chapters} 章）",
        f"总字数 characters: {report.total_chars:,}",
        f"均分 mean score: {score}",
        f"未回收伏笔 open foreshadowing: {report.open_foreshadowing}",
        f"状态 state: {report.orchestrator_state} / 流水线 pipeline: {stage}",
        f"状态版本 state version: {report.state_version}",
        cost_line(report.cost),
    ]
    if report.inflight_chapter is not None:
        lines.append(f"进行中 in flight: 第 {report.inflight_chapter} 章（下次续写会从中断处恢复）")
    if report.stale_chapters:
        from novel_desktop.pipeline.stale import StaleChaptersError

        stale = StaleChaptersError(report.stale_chapters)
        lines.append(f"需要重建 stale: {stale.message(args.novel)}")
    print("\n".join(lines))
    return 0


def cmd_export_folder(args: argparse.Namespace) -> int:
    from novel_desktop.storage.folder import export_folder

    with open_store(args.novel, write=False) as store:
        try:
            report = export_folder(store, args.folder, skeleton=args.skeleton, force=args.force)
        except OSError as exc:
            raise CliError(f"无法写入 / cannot write {args.folder}: {exc.strerror or exc}", 2) from None
    print(f"已导出 {report.files} 个文件（{report.chapters} 章）到 {report.folder} (exported)")
    for rel in report.skipped:
        print(f"已跳过 skipped: {rel}", file=sys.stderr)
    for warning in report.warnings:
        print(f"警告 warning: {warning}", file=sys.stderr)
    return 0


def cmd_import_folder(args: argparse.Namespace) -> int:
    from novel_desktop.storage.folder import import_folder

    try:
        report = import_folder(
            args.folder, args.novel, title=args.title, genre=args.genre, platform=args.platform
        )
    except OSError as exc:
        raise CliError(f"无法读取 / cannot read {args.folder}: {exc.strerror or exc}", 2) from None
    if args.json:
        print_json(
            {
                "novel": str(report.novel),
                "chapters": report.chapters,
                "counts": report.counts,
                "extra_files": report.extra_files,
                "skipped": report.skipped,
                "warnings": report.warnings,
            }
        )
        return 0
    print(f"已导入 {report.chapters} 章到 {report.novel} (imported)")
    if report.extra_files:
        print(f"以下 {len(report.extra_files)} 个文件不属于项目结构，已原样保留 (kept as extra files):")
        for rel in report.extra_files:
            print(f"  {rel}")
    for rel in report.skipped:
        print(f"已跳过 skipped: {rel}")
    for warning in report.warnings:
        print(f"警告 warning: {warning}", file=sys.stderr)
    return 0


def cmd_unlock(args: argparse.Namespace) -> int:
    path = Path(args.novel)
    if not path.is_file():
        raise CliError(f"找不到小说文件：{path} (no such novel file)", 2)
    try:
        removed = clear_stale_lock(path, force=args.force)
    except lock.ProjectLocked as exc:
        raise CliError(f"{exc}（如确认对方已退出，可加 --force）", EXIT_LOCKED) from None
    if removed is None:
        print("没有写入锁 (no lock)")
    else:
        print(f"已清除写入锁：{removed.describe()} (lock cleared)")
    return 0
