"""``novel start``, ``novel plan``, ``novel review`` and ``novel check``: the novel's lifecycle on the command
line (seed 004 §2.2 ``/novel:start``, §6 Layers 1-3, §8.2), over :class:`~novel_desktop.pipeline.orchestrator.
Orchestrator`. Every review point is a NOVEL_ASK question: answered in the terminal, from ``--answers-file``,
or refused with the list of questions under ``--non-interactive``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novel_desktop.cli.common import CliError
from novel_desktop.cli.project import open_session, warn_settings
from novel_desktop.cli.writing import EXIT_STOPPED, _answers, _Printer, responder_for
from novel_desktop.storage.store import StoreError

if TYPE_CHECKING:  # the pipeline is imported only when a command runs, not at CLI start-up
    from novel_desktop.pipeline.orchestrator import Orchestrator
    from novel_desktop.session import NovelSession


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--answers-file", default=None, help="预先填好的问题答案 JSON / answers to the questions")
    p.add_argument(
        "--non-interactive",
        action="store_true",
        help="不在终端提问，遇到未回答的问题就停下并列出 / never prompt; stop and list unanswered questions",
    )


def register(subparsers: Any) -> None:
    """Register ``start``, ``plan``, ``review`` and ``check``."""
    p = subparsers.add_parser(
        "start",
        help="状态感知入口：新建或推进一部小说 / create or advance a novel (the recommended next step)",
        description=(
            "没有文件时新建并快速起步（题材、主角、冲突、平台 → 设定、角色、文风 → 试写 3 章 → 确认）；\n"
            "已有文件时先给出推荐的下一步，再按状态机推进：卷规划、写作、定期检查、卷末回顾。\n"
            "Create a novel and run the quick start, or advance it along the state machine.\n"
            "退出码 exit codes: 0 完成 done, 1 暂停（需要作者处理） stopped, 2 无法读取, 3 被占用"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="例 / example: novel start 我的小说.novel --template 热血少年 -n 5",
    )
    _common(p)
    p.add_argument("--title", default=None, help="新书书名（默认取文件名） / title of a new novel")
    p.add_argument("--samples", nargs="+", default=None, help="风格样本文件 / style sample files")
    p.add_argument("--reference-author", default=None, help="仿写的参考作者 / reference author to imitate")
    p.add_argument("--template", default=None, help="内置风格模板名，如 热血少年 / a bundled style template")
    p.add_argument("-n", type=int, default=0, help="本次最多续写的章数（默认 0：到写作前停下） / chapters")
    p.add_argument("--chapters", type=int, default=None, help="每卷章数（默认 30） / chapters per volume")
    p.set_defaults(handler=cmd_start)

    p = subparsers.add_parser(
        "plan",
        help="规划一卷：大纲、章节契约、故事线调度、伏笔 / plan a volume",
        description="PlotArchitect 规划一卷，作者确认（确认 / 修改 / 调整章数）后保存。Plan a volume.",
    )
    _common(p)
    p.add_argument("--volume", type=int, default=None, help="卷号（默认当前卷或下一卷） / volume number")
    p.add_argument("--chapters", type=int, default=None, help="本卷章数 / chapters in the volume")
    p.set_defaults(handler=cmd_plan)

    p = subparsers.add_parser(
        "review",
        help="卷末回顾：一致性报告、伏笔、铺垫、状态清理 / volume review",
        description="全卷一致性报告、伏笔完成度、下卷铺垫、状态清理与归档，然后确认进入下一卷规划。",
    )
    _common(p)
    p.set_defaults(handler=cmd_review)

    p = subparsers.add_parser(
        "check",
        help="立即运行到期的定期检查 / run the due periodic checks now",
        description=(
            "质量简报（每 5 章）、文风漂移（每 5 章）、一致性检查（每 10 章）；\n"
            "--rule-changed 列出某条世界规则变更影响的角色契约和待写章节契约，并询问是否更新。"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(p)
    p.add_argument("--rule-changed", nargs="+", default=None, metavar="W-001", help="变更的世界规则 id")
    p.set_defaults(handler=cmd_check)


class _LifecyclePrinter(_Printer):
    """Chapter progress as ``novel continue`` prints it, plus the lifecycle's steps and checks."""

    def __call__(self, event: Any) -> None:
        from novel_desktop.pipeline.orchestrator import (
            ChecksReported,
            StateChanged,
            StepFinished,
            StepRetrying,
        )

        err = sys.stderr
        if isinstance(event, StateChanged):
            err.write(f"== 状态 state: {event.old} → {event.new}\n")
        elif isinstance(event, StepFinished):
            cost = f"（${event.cost_usd:.4f}）" if event.cost_usd else ""
            if event.message:
                sys.stdout.write(f"{event.message}{cost}\n")
            for w in event.warnings:
                err.write(f"  ! {w}\n")
        elif isinstance(event, ChecksReported):
            sys.stdout.write(event.message + "\n")
        elif isinstance(event, StepRetrying):
            err.write(f"  ! 出错，重试一次：{event.error}\n")
        else:
            super().__call__(event)
        err.flush()


def _open(args: argparse.Namespace, path: str | None = None) -> AbstractContextManager[NovelSession]:
    """The novel as a session whose questions go to the answers file, then the terminal (or nobody)."""
    responder = responder_for(args.non_interactive, _answers(args.answers_file))
    return open_session(path or args.novel, write=True, responder=responder)


async def _with_orchestrator(
    session: NovelSession,
    body: Callable[[Orchestrator], Awaitable[int]],
    novel: str = "",
    **options: Any,
) -> int:
    """Run ``body`` with an orchestrator over the session's agents; map errors to exits (``novel``: the
    path as the author gave it, for the rebuild command a refusal names)."""
    from novel_desktop.llm.errors import LLMError
    from novel_desktop.pipeline.chapter import PipelineError
    from novel_desktop.pipeline.interaction import AnswersNeeded, GateBlocked, InteractionCancelled
    from novel_desktop.pipeline.orchestrator import Orchestrator
    from novel_desktop.pipeline.stale import StaleChaptersError
    from novel_desktop.pipeline.steps import LifecycleError

    warn_settings(session)
    orchestrator = Orchestrator(
        session.store,
        session.agents.planning,
        session.agents.chapter,
        session.interaction,
        emit=_LifecyclePrinter(False),
        **options,
    )
    try:
        return await body(orchestrator)
    except StaleChaptersError as exc:
        print(f"错误 / error: {exc.message(novel)}", file=sys.stderr)
    except LLMError as exc:
        print(f"模型服务出错，已保存进度，下次运行会从中断处继续：{exc.message}", file=sys.stderr)
    except (AnswersNeeded, GateBlocked, PipelineError, LifecycleError, StoreError) as exc:
        print(str(exc), file=sys.stderr)
    except InteractionCancelled:
        print("已取消，进度已保存 (cancelled)", file=sys.stderr)
    return EXIT_STOPPED


def _finish(summary: Any) -> int:
    print(f"合计 total: ${summary.cost_usd:.2f}")
    return EXIT_STOPPED if summary.blocked else 0


def _style_choice(args: argparse.Namespace) -> Any:
    from novel_desktop.pipeline.quick_start import StyleChoice

    samples = []
    for name in args.samples or []:
        try:
            samples.append(Path(name).read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"无法读取样本 / cannot read sample {name}: {exc}", 2) from None
    if not (samples or args.reference_author or args.template):
        return None
    return StyleChoice(samples, args.reference_author, args.template)


def cmd_start(args: argparse.Namespace) -> int:
    """``novel start``: create the novel when missing; otherwise recommend, then advance."""
    from novel_desktop.pipeline.orchestrator import recommend
    from novel_desktop.session import NovelSession

    path = Path(args.novel)
    style = _style_choice(args)
    if not path.exists():
        try:
            NovelSession.create(path, title=args.title or path.stem).close()
        except StoreError as exc:
            raise CliError(str(exc), 2) from None
        print(f"已新建 {path}：开始快速起步 (created; quick start)")
    with _open(args, str(path)) as session:
        store = session.store
        rec = recommend(store)
        print(f"推荐下一步 recommended: {rec.label} —— {rec.reason}")
        if rec.action == "adopt":
            print(f"运行 run: novel adopt {args.novel}（或先 novel plan 跳过分析 / or plan without it）")
            return 0

        async def body(orch: Orchestrator) -> int:
            summary = await orch.run_until_blocked(max_chapters=max(0, args.n))
            after = recommend(store)
            print(f"下一步 next: {after.label} —— {after.reason}")
            return _finish(summary)

        return session.run(
            lambda s: _with_orchestrator(s, body, args.novel, style=style, volume_chapters=args.chapters)
        )


def cmd_plan(args: argparse.Namespace) -> int:
    """``novel plan``: (re)plan a volume and ask the author to confirm it."""
    from novel_desktop.pipeline import volume_plan
    from novel_desktop.pipeline.orchestrator import recommend

    with _open(args) as session:
        store = session.store
        volume_plan.begin_planning(store, args.volume, args.chapters)

        async def body(orch: Orchestrator) -> int:
            summary = await orch.run_until_blocked(stop_at=frozenset({"WRITING", "VOL_REVIEW", "INIT"}))
            print(f"下一步 next: {recommend(store).label}")
            return _finish(summary)

        return session.run(lambda s: _with_orchestrator(s, body, args.novel))


def cmd_review(args: argparse.Namespace) -> int:
    """``novel review``: the current volume's review, then the question leading to the next volume."""
    with _open(args) as session:
        store = session.store
        store.update_checkpoint(orchestrator_state="VOL_REVIEW")

        async def body(orch: Orchestrator) -> int:
            outcome = await orch.step()
            return EXIT_STOPPED if outcome.blocked else 0

        return session.run(lambda s: _with_orchestrator(s, body, args.novel))


def cmd_check(args: argparse.Namespace) -> int:
    """``novel check``: the due periodic checks now, or a world-rule change's propagation."""
    from novel_desktop.pipeline import checks, rule_change

    with _open(args) as session:
        store = session.store

        async def body(orch: Orchestrator) -> int:
            if args.rule_changed:
                impact = await rule_change.propagate_rule_change(
                    store, orch.planning, orch.interaction, list(args.rule_changed)
                )
                print(impact.message)
                return 0
            last, report = await checks.checks_now(store, agents=orch.planning, interaction=orch.interaction)
            if report is None:
                print(f"第 {last} 章没有到期的检查 (no checks due)")
                return 0
            print(report.message)
            return EXIT_STOPPED if report.pause else 0

        return session.run(lambda s: _with_orchestrator(s, body, args.novel))
