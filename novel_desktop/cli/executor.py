"""``novel next``, ``instructions``, ``validate`` and ``advance``: seed 000 steps for an external executor.

An author who also works in Claude Code or Codex exports the novel (``novel export-folder --skeleton``),
lets the executor write a step's outputs into that folder, then validates and advances the step here; the
outputs are imported into the novel's staging and the checkpoint moves on, so both tools share one novel.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from novel_desktop.cli.common import CliError, print_json
from novel_desktop.cli.project import open_store
from novel_desktop.pipeline.executor import StepError, StepInvalid, StepRefused
from novel_desktop.pipeline.executor_packets import instructions
from novel_desktop.pipeline.executor_steps import next_step
from novel_desktop.pipeline.stale import StaleChaptersError
from novel_desktop.pipeline.step_results import advance, validate

EXIT_INVALID = 1
EXIT_UNREADABLE = 2

_STEP_HELP = (
    "步骤 / step: chapter:048:draft|summarize|refine|judge|revise|commit, volume:02:plan|review, "
    "novel:init|style|trial"
)
_FOLDER_HELP = (
    "执行器写入输出的导出文件夹（novel export-folder --skeleton） / "
    "the exported folder the executor wrote into"
)


def register(subparsers: Any) -> None:
    """Register ``next``, ``instructions``, ``validate`` and ``advance``."""
    p = subparsers.add_parser(
        "next",
        help="下一步该执行的步骤 / the next step to execute",
        description="根据检查点给出下一步的步骤 id。Print the id of the step the checkpoint calls for next.",
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument(
        "--json", action="store_true", help="以 JSON 输出（含指令包） / print JSON with the packet"
    )
    p.set_defaults(handler=cmd_next)

    p = subparsers.add_parser(
        "instructions",
        help="输出步骤的指令包（InstructionPacket JSON） / print a step's InstructionPacket",
        description=(
            "输出种子 000 格式的指令包：agent、输入文件、NOVEL_ASK 门控、预期输出和后续命令。\n"
            "Print the step's seed-000 InstructionPacket for an external executor."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="例 / example: novel instructions 我的小说.novel chapter:048:draft",
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("step", help=_STEP_HELP)
    p.add_argument("--folder", default=None, help=_FOLDER_HELP)
    p.set_defaults(handler=cmd_instructions)

    p = subparsers.add_parser(
        "validate",
        help="校验步骤的输出与门控答案 / check a step's outputs and gate answer",
        description=(
            "检查预期输出是否存在且符合格式、门控 AnswerSpec 是否有效。\n"
            "Check that the step's outputs exist and parse, and that its gate's AnswerSpec is valid.\n"
            "退出码 exit codes: 0 有效 valid, 1 无效 invalid, 2 无法读取 unreadable"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("step", help=_STEP_HELP)
    p.add_argument("--folder", default=None, help=_FOLDER_HELP)
    p.add_argument("--json", action="store_true", help="以 JSON 输出问题列表 / print the problems as JSON")
    p.set_defaults(handler=cmd_validate)

    p = subparsers.add_parser(
        "advance",
        help="导入步骤输出并推进检查点 / import a step's outputs and move the checkpoint on",
        description=(
            "校验通过后导入输出到暂存区并推进检查点；commit 步骤在一个事务里提交章节。\n"
            "After a successful validate, import the outputs and advance; commit commits the chapter.\n"
            "退出码 exit codes: 0 完成 done, 1 无效或被拒 invalid or refused, 2 无法读取 unreadable"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("step", help=_STEP_HELP)
    p.add_argument("--folder", default=None, help=_FOLDER_HELP)
    p.set_defaults(handler=cmd_advance)


def _folder(value: str | None) -> Path | None:
    if value is None:
        return None
    folder = Path(value)
    if not folder.is_dir():
        raise CliError(f"找不到文件夹 / no such folder: {folder}", EXIT_UNREADABLE)
    return folder


def cmd_next(args: argparse.Namespace) -> int:
    with open_store(args.novel, write=False) as store:
        try:
            step = next_step(store)
        except StaleChaptersError as exc:
            raise CliError(exc.message(args.novel), EXIT_INVALID) from None
        except StepError as exc:  # a checkpoint no step follows from
            raise CliError(str(exc), EXIT_UNREADABLE) from None
        if args.json:
            print_json({"step": step, "packet": instructions(store, step).to_json_dict()})
        else:
            print(step)
    return 0


def cmd_instructions(args: argparse.Namespace) -> int:
    _folder(args.folder)
    with open_store(args.novel, write=False) as store:
        try:
            packet = instructions(store, args.step)
        except StepError as exc:
            raise CliError(str(exc), EXIT_UNREADABLE) from None
        print_json(packet.to_json_dict())
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    folder = _folder(args.folder)
    with open_store(args.novel, write=False) as store:
        try:
            problems = validate(store, args.step, folder)
        except StepError as exc:
            raise CliError(str(exc), EXIT_UNREADABLE) from None
    if args.json:
        print_json({"step": args.step, "valid": not problems, "problems": [p.__dict__ for p in problems]})
    elif problems:
        print(f"步骤 {args.step} 未通过校验 (not valid)：", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
    else:
        print(f"步骤 {args.step} 校验通过 (valid)")
    return EXIT_INVALID if problems else 0


def cmd_advance(args: argparse.Namespace) -> int:
    folder = _folder(args.folder)
    with open_store(args.novel, write=True) as store:
        try:
            result = advance(store, args.step, folder)
        except StepError as exc:
            raise CliError(str(exc), EXIT_UNREADABLE) from None
        except (StepInvalid, StepRefused) as exc:
            print(str(exc), file=sys.stderr)
            return EXIT_INVALID
        except StaleChaptersError as exc:
            raise CliError(exc.message(args.novel), EXIT_INVALID) from None
    print(result.message)
    for path in result.imported:
        print(f"  已导入 imported: {path}")
    print(f"下一步 next: {result.next_step}")
    return 0
