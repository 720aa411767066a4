"""``novel rebuild`` and ``novel cascade``: the historical rebuild after a hand edit, and the chapters it
found contradicting the new state (advisory; re-judged in one batch with ``--rejudge``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from novel_desktop.cli.common import CliError, print_json
from novel_desktop.cli.project import open_session
from novel_desktop.domain.records import RebuildReport
from novel_desktop.storage.store import StoreError

if TYPE_CHECKING:
    from novel_desktop.session import NovelSession

EXIT_INVALID = 1


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "rebuild",
        help="手改章节后重建故事状态 / rebuild the story state after a manual edit",
        description=(
            "从第 N 章重建：用第 N-1 章之后的状态，按每章写作时的记忆、大纲和契约\n"
            "重新摘要第 N 章及其后所有正文已改动的章节，其余章节重放原来的状态变更；\n"
            "列出每章状态的变化，以及摘要与新状态矛盾的后续章节。\n"
            "Rebuild from chapter N with the history of each chapter's time; list per chapter\n"
            "what changed and the later chapters that contradict the new state.\n"
            "退出码 exit codes: 0 完成 done, 1 无效输入或摘要失败（小说未改动）\n"
            "invalid input or summarizer failure (nothing changed), 2 无法读取 unreadable,\n"
            "3 被占用 locked"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--from-chapter", type=int, required=True, help="被修改的章节号 / the edited chapter")
    p.add_argument("--json", action="store_true", help="以 JSON 输出报告 / print the report as JSON")
    p.set_defaults(handler=cmd_rebuild)

    p = subparsers.add_parser(
        "cascade",
        help="上次重建后与新状态矛盾的章节 / chapters the last rebuild found contradicting the state",
        description=(
            "列出上次重建后摘要或状态变更与新状态矛盾的章节及原因；--rejudge 把它们一次性重新评审。\n"
            "List the chapters the last rebuild found contradicting the new state, with why;\n"
            "--rejudge judges them again in one batch (each leaves the list once re-judged)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--json", action="store_true", help="以 JSON 输出 / print as JSON")
    p.add_argument(
        "--rejudge", action="store_true", help="一次性重新评审这些章节 / re-judge them in one batch"
    )
    p.add_argument(
        "--batch",
        action="store_true",
        help="用批处理 API（半价，通常一小时内） / Message Batches API, half price",
    )
    p.set_defaults(handler=cmd_cascade)


def print_report(report: RebuildReport) -> None:
    """The rebuild report, per chapter, for a person."""
    for note in report.notes:
        print(f"注意 note: {note}")
    again = "、".join(str(n) for n in report.resummarized)
    print(
        f"已从第 {report.chapter} 章重建（重新摘要第 {again} 章）：状态版本 {report.base_version} → "
        f"{report.state_version} (rebuilt)"
    )
    for chapter, changes in sorted(report.changes.items()):
        if changes:
            print(f"第{chapter}章 状态变化 (changes):")
            for line in changes:
                print(f"  - {line}")
    if not any(report.changes.values()):
        print("各章之后的状态与重建前相同 (no state changed)")
    for reason in report.dropped_ops:
        print(f"  ! 丢弃的 op (dropped): {reason}", file=sys.stderr)
    print_cascade(report.disagreeing)
    print(f"费用 cost: ${report.cost_usd:.4f}")


def print_cascade(cascade: dict[int, list[str]]) -> None:
    if not cascade:
        print("后续章节与新状态一致 (later chapters agree)")
        return
    shown = ",".join(str(n) for n in sorted(cascade))
    print(f"以下后续章节的摘要与新状态矛盾，建议检查或重新评审（novel cascade … --rejudge）：章节 {shown}")
    for chapter, reasons in sorted(cascade.items()):
        print(f"  第{chapter}章：{'；'.join(reasons)}")


def _known(session: NovelSession, chapter: int) -> None:
    chapters = [c.number for c in session.store.list_chapters()]
    if not chapters:
        raise CliError("这部小说还没有已提交的章节，无法重建 (no committed chapters)", EXIT_INVALID)
    if chapter not in chapters:
        raise CliError(
            f"第 {chapter} 章不存在：可重建的章节为第 {chapters[0]}-{chapters[-1]} 章，小说未改动 "
            f"(chapter {chapter} does not exist; nothing changed)",
            EXIT_INVALID,
        )


def cmd_rebuild(args: argparse.Namespace) -> int:
    from novel_desktop.llm.errors import LLMError
    from novel_desktop.pipeline.rebuild import rebuild_from

    with open_session(args.novel, write=True) as session:
        _known(session, args.from_chapter)
        progress = (lambda line: print(f"  · {line}", file=sys.stderr)) if not args.json else None
        try:
            report = session.run(
                lambda s: rebuild_from(s.store, s.agents.chapter, args.from_chapter, on_progress=progress)
            )
        except LLMError as exc:
            raise CliError(
                f"模型服务出错，小说未改动：{exc.message} (provider error; nothing changed)", 1
            ) from None
        except StoreError as exc:
            raise CliError(str(exc), EXIT_INVALID) from None
    if args.json:
        print_json(report.to_json())
    else:
        print_report(report)
    return 0


def cmd_cascade(args: argparse.Namespace) -> int:
    from novel_desktop.cli.on_demand import _run
    from novel_desktop.pipeline.on_demand import batch_reevaluate

    with open_session(args.novel, write=args.rejudge) as session:
        cascade = session.store.cascade()
        if not args.rejudge or not cascade:
            if args.json:
                print_json({"chapters": {str(k): v for k, v in sorted(cascade.items())}})
            else:
                print_cascade(cascade)
            return 0
        report = _run(
            session,
            lambda s: batch_reevaluate(
                s.store,
                s.agents.judge,
                sorted(cascade),
                prefer_batch=args.batch,
                on_progress=lambda line: print(f"  · {line}", file=sys.stderr),
            ),
        )
        left = session.store.cascade()
    if args.json:
        print_json(
            {
                "rejudged": sorted(report.chapters),
                "failed": {str(k): v for k, v in report.failed.items()},
                "chapters": {str(k): v for k, v in sorted(left.items())},
                "cost_usd": report.cost_usd,
            }
        )
        return 1 if report.failed else 0
    print(report.batch.note)
    for n, result in sorted(report.chapters.items()):
        print(f"第{n}章 已重新评审 (re-judged): {result.new_overall}")
    for n, reason in sorted(report.failed.items()):
        print(f"第{n}章 失败，原评审保留 (failed): {reason}", file=sys.stderr)
    print(f"费用 cost: ${report.cost_usd:.4f}")
    return 1 if report.failed else 0
