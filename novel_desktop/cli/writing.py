"""``novel continue``: the chapter pipeline on the command line (``novel rebuild``: ``cli/rebuild``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novel_desktop.cli.common import CliError
from novel_desktop.cli.project import open_session, warn_settings
from novel_desktop.pipeline.events import (
    ChapterStarted,
    DraftAhead,
    DraftDiscarded,
    GateDecided,
    PipelineEvent,
    PipelineWarning,
    StageStarted,
    TextDelta,
    TextReset,
)
from novel_desktop.storage import layout
from novel_desktop.storage.store import StoreError

if TYPE_CHECKING:
    from novel_desktop.pipeline.interaction import Responder
    from novel_desktop.session import NovelSession
    from novel_desktop.storage.store import NovelStore

EXIT_STOPPED = 1


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "continue",
        help="续写下一章（或 N 章） / write the next chapter(s)",
        description=(
            "按本卷大纲续写：写作 → 摘要/润色 → 评审 → 门控 → 提交。中断后再次运行会从中断处继续。\n"
            "Write the next chapters through the whole pipeline; an interrupted run resumes.\n"
            "退出码 exit codes: 0 完成 done, 1 暂停（需要作者处理或服务出错） stopped,\n"
            "2 无法读取 unreadable, 3 被占用 locked"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="例 / example: novel continue 我的小说.novel -n 3",
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("-n", type=int, default=1, help="续写章数（默认 1） / number of chapters (default 1)")
    p.add_argument("--answers-file", default=None, help="预先填好的问题答案 JSON / answers to gate questions")
    p.add_argument(
        "--non-interactive",
        action="store_true",
        help="不在终端提问，遇到未回答的问题就停下并列出 / never prompt; stop and list unanswered questions",
    )
    p.add_argument("--stream", action="store_true", help="边写边显示正文 / show the draft as it streams")
    p.set_defaults(handler=cmd_continue)


def _answers(path: str | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise CliError(f"找不到答案文件 / answers file not found: {path}", 2) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CliError(f"答案文件无法读取 / cannot read answers file {path}: {exc}", 2) from None
    if not isinstance(data, dict):
        raise CliError(
            "答案文件必须是 JSON 对象（answer_path 或 topic → 答案） (answers file must be an object)", 2
        )
    return data


class _Printer:
    """Prints pipeline progress to stderr (and the streamed draft with --stream)."""

    def __init__(self, stream: bool) -> None:
        self.stream = stream
        self._chapter: int | None = None

    def __call__(self, event: PipelineEvent) -> None:
        err = sys.stderr
        if isinstance(event, ChapterStarted):
            self._chapter = event.chapter
            from novel_desktop.pipeline.orchestrator import STAGE_DONE

            done = STAGE_DONE.get(event.resumed_from or "", event.resumed_from)  # 评审完成, not "judged"
            resumed = f"（从“{done}”处恢复）" if event.resumed_from else ""
            err.write(f"第{event.chapter}章 开始{resumed}\n")
        elif isinstance(event, DraftAhead):  # a queued run drafts the next chapter while this one is judged
            err.write(f"第{event.chapter}章 提前开始写作（第{event.chapter - 1}章评审期间）\n")
        elif isinstance(event, DraftDiscarded):
            err.write(f"  ! {event.reason}\n")
        elif isinstance(event, StageStarted):
            other = f"第{event.chapter}章 " if event.chapter != self._chapter else ""
            err.write(f"  · {other}{event.stage.label}\n")
        elif isinstance(event, TextDelta) and self.stream and event.chapter == self._chapter:
            sys.stdout.write(event.text)
            sys.stdout.flush()
        elif isinstance(event, TextReset) and self.stream:
            sys.stdout.write("\n[连接中断，重新生成]\n")
        elif isinstance(event, GateDecided):
            err.write(f"  · 门控：{event.reason}\n")
            for issue in event.issues:
                err.write(f"    - {issue}\n")
        elif isinstance(event, PipelineWarning):
            err.write(f"  ! {event.message}\n")
        err.flush()


def responder_for(non_interactive: bool, answers: dict[str, Any] | None) -> Responder:
    """Who answers the pipeline's questions: the answers file first, then the terminal (or nobody)."""
    from novel_desktop.cli.prompter import TerminalResponder
    from novel_desktop.pipeline.interaction import AnswersFileResponder, refuse_non_interactive

    fallback: Responder = refuse_non_interactive if non_interactive else TerminalResponder()
    return AnswersFileResponder(answers, fallback=fallback) if answers is not None else fallback


async def _run_continue(session: NovelSession, args: argparse.Namespace) -> int:
    from novel_desktop.llm.errors import LLMError
    from novel_desktop.pipeline.chapter import ChapterPipeline, PipelineError
    from novel_desktop.pipeline.checks import after_chapter
    from novel_desktop.pipeline.interaction import AnswersNeeded, GateBlocked, InteractionCancelled
    from novel_desktop.pipeline.stale import StaleChaptersError

    warn_settings(session)
    store = session.store
    total = 0.0
    pipeline = ChapterPipeline(store, session.agents.chapter, session.interaction, emit=_Printer(args.stream))
    for _ in range(max(1, args.n)):
        try:
            outcome = await pipeline.run_chapter()
        except LLMError as exc:
            print(f"模型服务出错，本章未提交，下次运行会从中断处继续：{exc.message}", file=sys.stderr)
            return EXIT_STOPPED
        except StaleChaptersError as exc:
            raise CliError(exc.message(args.novel), EXIT_STOPPED) from None
        except (AnswersNeeded, GateBlocked, PipelineError, StoreError) as exc:
            print(str(exc), file=sys.stderr)
            return EXIT_STOPPED
        except InteractionCancelled:
            print("已取消，本章未提交 (cancelled; nothing committed)", file=sys.stderr)
            return EXIT_STOPPED
        total += outcome.cost_usd
        print(outcome.line())  # its warnings were printed as they happened (PipelineWarning), not again
        if outcome.status != "committed":
            print(f"合计 total: ${total:.2f}")
            return EXIT_STOPPED
        # The periodic checks (quality brief, style drift, audit) run inside the loop and may pause it.
        try:
            checked = await after_chapter(
                store, outcome.chapter, agents=session.agents.planning, interaction=session.interaction
            )
        except (AnswersNeeded, GateBlocked, StoreError, LLMError) as exc:
            print(str(exc), file=sys.stderr)
            return EXIT_STOPPED
        if checked.message:
            print(checked.message, file=sys.stderr)
        if checked.pause:
            print(f"合计 total: ${total + checked.cost_usd:.2f}")
            return EXIT_STOPPED
        total += checked.cost_usd
    print(f"合计 total: ${total:.2f}")
    return 0


def refuse_stale_chapters(store: NovelStore, novel: str) -> None:
    """Exit 1, naming the stale chapters and the exact rebuild command, before anything is written."""
    from novel_desktop.pipeline.stale import StaleChaptersError

    stale = store.stale_chapters()
    if stale:
        raise CliError(StaleChaptersError(stale).message(novel), EXIT_STOPPED)


def cmd_continue(args: argparse.Namespace) -> int:
    answers = _answers(args.answers_file)
    responder = responder_for(args.non_interactive, answers)
    with open_session(args.novel, write=True, responder=responder) as session:
        store = session.store
        refuse_stale_chapters(store, args.novel)
        cp = store.checkpoint()
        volume = int(cp.get("current_volume") or 1)
        if store.document(f"{layout.volume_dir(volume)}/outline.md") is None:
            raise CliError(
                f"第 {volume} 卷还没有大纲：先用 novel outline set {args.novel} --volume {volume} outline.md "
                f"(volume {volume} has no outline yet)",
                EXIT_STOPPED,
            )
        try:
            return session.run(lambda s: _run_continue(s, args))
        except KeyboardInterrupt:
            print("\n已停止；本章未提交，下次运行会从中断处继续 (stopped; resumable)", file=sys.stderr)
            return 130
