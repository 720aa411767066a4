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
    ChapterCommitted,
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
            "多章时与窗口的“续写”相同：上一章评审期间就开始写下一章；写到卷末即停（先卷末回顾）。\n"
            "Write the next chapters through the whole pipeline; an interrupted run resumes. With -n N the\n"
            "next chapter is drafted while the one before is judged; the run stops at the volume's end.\n"
            "退出码 exit codes: 0 完成 done, 1 暂停（需要作者处理、卷已写完或服务出错） stopped,\n"
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
        #: With --stream, the text of a chapter drafted early (while the one before is judged), shown once
        #: that chapter becomes the one in flight: two drafts never interleave on stdout.
        self._ahead: dict[int, list[str]] = {}

    def __call__(self, event: PipelineEvent) -> None:
        err = sys.stderr
        if isinstance(event, ChapterStarted):
            self._chapter = event.chapter
            from novel_desktop.pipeline.orchestrator import STAGE_DONE

            done = STAGE_DONE.get(event.resumed_from or "", event.resumed_from)  # 评审完成, not "judged"
            resumed = f"（从“{done}”处恢复）" if event.resumed_from else ""
            err.write(f"第{event.chapter}章 开始{resumed}\n")
            early = self._ahead.pop(event.chapter, None)
            if early and self.stream:
                sys.stdout.write("".join(early))
                sys.stdout.flush()
        elif isinstance(event, DraftAhead):  # a queued run drafts the next chapter while this one is judged
            self._ahead[event.chapter] = []
            err.write(f"第{event.chapter}章 提前开始写作（第{event.chapter - 1}章评审期间）\n")
        elif isinstance(event, DraftDiscarded):
            self._ahead.pop(event.chapter, None)
            err.write(f"  ! {event.reason}\n")
        elif isinstance(event, StageStarted):
            other = f"第{event.chapter}章 " if event.chapter != self._chapter else ""
            err.write(f"  · {other}{event.stage.label}\n")
        elif isinstance(event, TextDelta) and self.stream:
            if event.chapter == self._chapter:
                sys.stdout.write(event.text)
                sys.stdout.flush()
            elif event.chapter in self._ahead:
                self._ahead[event.chapter].append(event.text)
        elif isinstance(event, TextReset) and self.stream:
            if event.chapter in self._ahead:
                self._ahead[event.chapter] = []  # the early draft's stream restarted: only the new text
            else:
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


class _QueuePrinter(_Printer):
    """``novel continue``'s progress over the orchestrator's queued run: the chapter events as before, each
    chapter's one-line report on stdout once it is committed, and the periodic checks' findings."""

    def __call__(self, event: Any) -> None:
        from novel_desktop.pipeline.chapter import ChapterOutcome
        from novel_desktop.pipeline.orchestrator import ChecksReported, StepRetrying

        if isinstance(event, ChapterCommitted):
            done = ChapterOutcome(
                event.chapter, "committed", event.chars, list(event.scores), event.revisions, event.flagged
            )
            print(done.line(), flush=True)  # its warnings were printed as they happened (PipelineWarning)
        elif isinstance(event, ChecksReported):
            print(event.message, file=sys.stderr, flush=True)
        elif isinstance(event, StepRetrying):
            print(f"  ! 出错，重试一次：{event.error}", file=sys.stderr, flush=True)
        else:  # StateChanged / StepFinished are not this command's news: the base printer skips them
            super().__call__(event)


async def _run_continue(session: NovelSession, args: argparse.Namespace) -> int:
    """The window's 续写 N 章: the orchestrator's writing loop, queued (chapter N+1 is drafted while N is
    judged), stopping at the volume's end, a gate or a periodic check that needs the author."""
    from novel_desktop.domain.checkpoint import OrchestratorState as S
    from novel_desktop.llm.errors import LLMError
    from novel_desktop.pipeline.chapter import PipelineError
    from novel_desktop.pipeline.interaction import AnswersNeeded, GateBlocked, InteractionCancelled
    from novel_desktop.pipeline.orchestrator import Orchestrator
    from novel_desktop.pipeline.stale import StaleChaptersError
    from novel_desktop.pipeline.steps import LifecycleError

    warn_settings(session)
    store, count = session.store, max(1, args.n)
    agents = session.agents
    orchestrator = Orchestrator(
        store, agents.planning, agents.chapter, session.interaction, emit=_QueuePrinter(args.stream)
    )
    stops = frozenset({S.VOL_REVIEW, S.VOL_PLANNING, S.INIT, S.QUICK_START})
    try:
        summary = await orchestrator.run_until_blocked(max_chapters=count, stop_at=stops)
    except LLMError as exc:
        print(f"模型服务出错，本章未提交，下次运行会从中断处继续：{exc.message}", file=sys.stderr)
        return EXIT_STOPPED
    except StaleChaptersError as exc:
        raise CliError(exc.message(args.novel), EXIT_STOPPED) from None
    except (AnswersNeeded, GateBlocked, PipelineError, LifecycleError, StoreError) as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_STOPPED
    except InteractionCancelled:
        print("已取消，本章未提交 (cancelled; nothing committed)", file=sys.stderr)
        return EXIT_STOPPED
    last = summary.chapters[-1] if summary.chapters else None
    if last is not None and last.status != "committed":
        print(last.line())  # the chapter left for the author: ⏸ and why
    print(f"合计 total: ${summary.cost_usd:.2f}")
    if summary.blocked:
        return EXIT_STOPPED
    written = sum(1 for c in summary.chapters if c.status == "committed")
    if written < count and summary.state == S.VOL_REVIEW:
        volume = int(store.checkpoint().get("current_volume") or 1)
        print(
            f"第 {volume} 卷已写完（本次写了 {written}/{count} 章）：先运行 novel review {args.novel} "
            f"做卷末回顾，再规划下一卷 (volume {volume} is finished; review it first)",
            file=sys.stderr,
        )
        return EXIT_STOPPED
    return 0


def _ready_to_write(store: NovelStore, novel: str) -> None:
    """What stops ``novel continue`` before any model request (no outline, an open quick start), as the
    window's 续写 says it; else WRITING becomes the state the orchestrator runs (a hand-written outline, a
    review left unfinished: 续写 writes the volume's remaining chapters, as it always did)."""
    from novel_desktop.domain.checkpoint import OrchestratorState as S
    from novel_desktop.pipeline.orchestrator import effective_state

    cp = store.checkpoint()
    volume = int(cp.get("current_volume") or 1)
    if store.document(f"{layout.volume_dir(volume)}/outline.md") is None:
        raise CliError(
            f"第 {volume} 卷还没有大纲：先用 novel outline set {novel} --volume {volume} outline.md "
            f"(volume {volume} has no outline yet)",
            EXIT_STOPPED,
        )
    if effective_state(cp, store.meta()) == S.QUICK_START:
        raise CliError(
            f"快速起步还没有完成：先运行 novel start {novel}，试写确认后再续写 "
            "(finish the quick start first)",
            EXIT_STOPPED,
        )
    if cp.get("orchestrator_state") != S.WRITING:
        store.update_checkpoint(orchestrator_state=S.WRITING)


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
        _ready_to_write(store, args.novel)
        try:
            return session.run(lambda s: _run_continue(s, args))
        except KeyboardInterrupt:
            print("\n已停止；本章未提交，下次运行会从中断处继续 (stopped; resumable)", file=sys.stderr)
            return 130
