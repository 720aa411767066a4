"""``novel adopt``: 接续已有书稿 — an imported manuscript read by the agents (issue 19 point 1).

Prints the estimate (chapters, tokens, cost) before any model call and asks (``--yes`` skips), prints each
chapter as it is read, then asks the approvals (world, characters, storylines, foreshadowing and state, style)
in the terminal or from ``--answers-file``. Stopped or failed, it keeps every chapter read; the next run
resumes with the next one. Exit codes: 0 done, 1 stopped (model error, unanswered question, not confirmed),
2 unreadable, 3 locked.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from novel_desktop.cli.common import CliError
from novel_desktop.cli.project import open_session, warn_settings
from novel_desktop.cli.writing import _answers, responder_for

EXIT_STOPPED = 1


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "adopt",
        help="接续已有书稿：分析导入的书稿 / analyse an imported manuscript to continue it",
        description=(
            "逐章分析导入的书稿（可随时停止，下次从下一章继续），归纳出角色与契约、世界规则、故事线、\n"
            "未回收的伏笔、最后一章的故事状态和本书自己的文风，逐项确认后保存；之后即可规划和续写。\n"
            "Read an imported manuscript chapter by chapter (resumable), then offer its characters with\n"
            "contracts, world rules, storylines, open foreshadowing, story state and style for approval.\n"
            "退出码 exit codes: 0 完成 done, 1 中止（已分析的章节已保存）stopped, 2 无法读取 unreadable,\n"
            "3 被占用 locked"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--yes", "-y", action="store_true", help="不询问费用，直接开始 / start without asking")
    p.add_argument("--answers-file", default=None, help="预先填好的确认答案 JSON / answers to the approvals")
    p.add_argument(
        "--non-interactive", action="store_true", help="没有答案时不在终端提问 / never ask in the terminal"
    )
    p.set_defaults(handler=cmd_adopt)


def _confirm() -> bool:
    try:
        tty = bool(sys.stdin.isatty())
    except (AttributeError, ValueError, OSError):
        tty = False
    if not tty:
        raise CliError(
            "需要确认费用才能开始：请在终端中运行，或加 --yes "
            "(confirmation needed: run it in a terminal or pass --yes)",
            EXIT_STOPPED,
        )
    sys.stderr.write("开始分析？[y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes", "是")


def cmd_adopt(args: argparse.Namespace) -> int:
    from novel_desktop.llm.errors import LLMError
    from novel_desktop.pipeline.adopt import AdoptError, adopt, estimate, is_imported
    from novel_desktop.pipeline.approval import ApprovalError
    from novel_desktop.pipeline.interaction import AnswersNeeded, GateBlocked, InteractionCancelled

    responder = responder_for(args.non_interactive, _answers(args.answers_file))
    with open_session(args.novel, write=True, responder=responder) as session:
        store = session.store
        if not is_imported(store):
            raise CliError("这部小说不是导入的书稿，无需接续分析 (not an imported manuscript)", EXIT_STOPPED)
        warn_settings(session)
        est = estimate(store, session.settings)
        print("接续已有书稿 (adopt) 预估 estimate:")
        for line in est.lines():
            print(f"  {line}")
        sys.stdout.flush()
        if not args.yes and not _confirm():
            print("未开始 (not started)", file=sys.stderr)
            return EXIT_STOPPED

        def progress(done: int, total: int, message: str) -> None:
            print(f"  [{done}/{total}] {message}", flush=True)

        try:
            report = session.run(
                lambda s: adopt(
                    s.store, s.agents.adopt, s.agents.planning, s.interaction, on_progress=progress
                )
            )
        except AdoptError as exc:
            print(f"错误 / error: {exc.message}", file=sys.stderr)
            return EXIT_STOPPED
        except LLMError as exc:
            print(f"错误 / error: 模型服务出错：{exc}；已分析的章节已保存，再次运行会继续", file=sys.stderr)
            return EXIT_STOPPED
        except (AnswersNeeded, GateBlocked, ApprovalError) as exc:
            print(f"错误 / error: {exc}；已分析的章节已保存", file=sys.stderr)
            return EXIT_STOPPED
        except InteractionCancelled:
            print("已取消，已分析的章节已保存 (cancelled)", file=sys.stderr)
            return EXIT_STOPPED
        for message in report.messages:
            print(message)
        for warning in report.warnings:
            print(f"  ! {warning}", file=sys.stderr)
        print(f"接续分析完成：读了 {len(report.read)} 章；下一步：novel plan 或 novel continue (adopted)")
        print(f"费用 cost: ${report.cost_usd:.4f}")
    return 0


__all__ = ["cmd_adopt", "register"]
