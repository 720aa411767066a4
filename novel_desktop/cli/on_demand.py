"""On-demand commands (seed 004 §4.2 工具式, §6 Layer 3): characters, world, storylines, research, judging.

``novel character add|retire``, ``novel world extend``, ``novel storyline add``, ``novel research import``,
``novel judge`` and ``novel reevaluate`` (``--batch``: the Message Batches API at half price).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from novel_desktop.cli.common import CliError, read_json_file
from novel_desktop.cli.project import open_session, open_store, warn_settings

if TYPE_CHECKING:
    from novel_desktop.pipeline.interaction import Responder
    from novel_desktop.session import NovelSession

T = TypeVar("T")
EXIT_FAILED = 1

_ANSWERS_HELP = "预先填好的问题答案 JSON / answers to questions"
_NONINTERACTIVE_HELP = "不在终端提问 / never prompt; stop and list unanswered questions"


def register(subparsers: Any) -> None:
    """Register the on-demand commands."""
    p = subparsers.add_parser("character", help="新增或退场角色 / add or retire a character")
    sub = p.add_subparsers(dest="action", metavar="add|retire", required=True)
    q = sub.add_parser("add", help="新增角色 / add a character")
    q.add_argument("novel", help=".novel 文件 / novel file")
    source = q.add_mutually_exclusive_group(required=True)
    source.add_argument("--profile", help="角色档案 JSON 文件 / a character profile JSON file")
    source.add_argument(
        "--description", help="角色描述，交给 CharacterWeaver / a description for CharacterWeaver"
    )
    q.add_argument("--answers-file", default=None, help=_ANSWERS_HELP)
    q.add_argument("--non-interactive", action="store_true", help=_NONINTERACTIVE_HELP)
    q.set_defaults(handler=cmd_character_add)
    q = sub.add_parser("retire", help="角色退场，移至 characters/retired/ / retire a character")
    q.add_argument("novel", help=".novel 文件 / novel file")
    q.add_argument("slug", help="角色 id，如 chen-lao / character id")
    q.add_argument("--reason", default="", help="退场原因 / reason")
    q.set_defaults(handler=cmd_character_retire)

    p = subparsers.add_parser("world", help="扩展世界观 / extend the world")
    sub = p.add_subparsers(dest="action", metavar="extend", required=True)
    q = sub.add_parser("extend", help="WorldBuilder 增量更新 / incremental WorldBuilder update")
    q.add_argument("novel", help=".novel 文件 / novel file")
    q.add_argument("request", help="新增需求，如“加一个敌对宗门” / what to add")
    q.add_argument("--answers-file", default=None, help=_ANSWERS_HELP)
    q.add_argument("--non-interactive", action="store_true", help=_NONINTERACTIVE_HELP)
    q.set_defaults(handler=cmd_world_extend)

    p = subparsers.add_parser("storyline", help="新增故事线 / add a storyline")
    sub = p.add_subparsers(dest="action", metavar="add", required=True)
    q = sub.add_parser("add", help="新增故事线 / add a storyline")
    q.add_argument("novel", help=".novel 文件 / novel file")
    q.add_argument("id", help="故事线 id（小写字母、数字、下划线） / storyline id")
    q.add_argument("--name", required=True, help="名称 / name")
    q.add_argument("--type", default="character_arc", help="类型 / type (main_arc, conspiracy, mystery …)")
    q.add_argument("--scope", default="multi_volume", choices=("novel", "multi_volume", "single_volume"))
    q.add_argument("--description", default="", help="简介 / description")
    q.set_defaults(handler=cmd_storyline_add)

    p = subparsers.add_parser("research", help="导入研究资料 / import research notes")
    sub = p.add_subparsers(dest="action", metavar="import", required=True)
    q = sub.add_parser("import", help="把文本文件导入 research/ / import text files into research/")
    q.add_argument("novel", help=".novel 文件 / novel file")
    q.add_argument("files", nargs="+", help="资料文件（.md/.txt） / note files")
    q.set_defaults(handler=cmd_research_import)

    p = subparsers.add_parser("judge", help="重新评审一章 / judge a chapter again")
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--chapter", type=int, required=True, help="章节号 / chapter number")
    p.set_defaults(handler=cmd_judge)

    p = subparsers.add_parser(
        "reevaluate",
        help="批量重新评审 / re-evaluate many chapters",
        description=(
            "重新评审一段章节；--batch 通过批处理接口（半价，通常一小时内完成）。\n"
            "Judge a range of chapters again; --batch uses the Message Batches API (half price)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--chapters", required=True, help="章节范围，如 1-20 / chapter range")
    p.add_argument(
        "--batch", action="store_true", help="用批处理接口（半价） / use Message Batches (half price)"
    )
    p.set_defaults(handler=cmd_reevaluate)


# ---------------------------------------------------------------------------- plumbing
def _responder(args: argparse.Namespace) -> Responder:
    from novel_desktop.cli.writing import responder_for

    answers = None
    if args.answers_file:
        answers = read_json_file(args.answers_file)
        if not isinstance(answers, dict):
            raise CliError("答案文件必须是 JSON 对象 (answers file must be an object)", 2)
    return responder_for(args.non_interactive, answers)


def _run(session: NovelSession, work: Callable[[NovelSession], Awaitable[T]], *, llm: bool = True) -> T:
    """Run ``work`` with the session; the errors an author can act on become one line and exit code 1."""
    from novel_desktop.agents.judge import BatchError
    from novel_desktop.llm.errors import LLMError
    from novel_desktop.pipeline.interaction import AnswersNeeded, GateBlocked, InteractionCancelled
    from novel_desktop.pipeline.on_demand import OnDemandError

    try:
        if llm:
            warn_settings(session)
        return session.run(work)
    except LLMError as exc:
        raise CliError(f"模型服务出错，未做改动：{exc.message} (provider error)", EXIT_FAILED) from None
    except (OnDemandError, AnswersNeeded, GateBlocked, BatchError) as exc:
        raise CliError(str(exc), EXIT_FAILED) from None
    except InteractionCancelled:
        raise CliError("已取消，未做改动 (cancelled)", EXIT_FAILED) from None


def _report(result: Any) -> int:
    print(result.message)
    for path in result.written:
        print(f"  写入 wrote: {path}")
    for warning in result.warnings:
        print(f"  ! {warning}", file=sys.stderr)
    if result.cost_usd:
        print(f"费用 cost: ${result.cost_usd:.4f}")
    return 0


def parse_range(text: str) -> list[int]:
    """``3``, ``1-20`` → chapter numbers; CliError for anything else."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    if not m:
        raise CliError(f"章节范围格式不对：{text!r}（如 1-20） (bad range)", 2)
    start, end = int(m.group(1)), int(m.group(2) or m.group(1))
    if start < 1 or end < start:
        raise CliError(f"章节范围无效：{text!r} (bad range)", 2)
    return list(range(start, end + 1))


# ---------------------------------------------------------------------------- handlers
def cmd_character_add(args: argparse.Namespace) -> int:
    from novel_desktop.pipeline.on_demand import add_character

    profile = read_json_file(args.profile) if args.profile else None
    if profile is not None and not isinstance(profile, dict):
        raise CliError("角色档案必须是 JSON 对象 (profile must be an object)", 2)
    if profile is not None:
        with open_session(args.novel, write=True) as session:
            return _report(_run(session, lambda s: add_character(s.store, profile=profile), llm=False))
    with open_session(args.novel, write=True, responder=_responder(args)) as session:
        result = _run(
            session,
            lambda s: add_character(
                s.store, description=args.description, agents=s.agents.planning, interaction=s.interaction
            ),
        )
        return _report(result)


def cmd_character_retire(args: argparse.Namespace) -> int:
    from novel_desktop.pipeline.on_demand import OnDemandError, retire_character

    with open_store(args.novel, write=True) as store:
        try:
            return _report(retire_character(store, args.slug, args.reason))
        except OnDemandError as exc:
            raise CliError(str(exc), EXIT_FAILED) from None


def cmd_world_extend(args: argparse.Namespace) -> int:
    from novel_desktop.pipeline.on_demand import extend_world
    from novel_desktop.pipeline.rule_change import propagate_rule_change

    with open_session(args.novel, write=True, responder=_responder(args)) as session:

        async def work(s: NovelSession) -> Any:
            planning, interaction = s.agents.planning, s.interaction
            result = await extend_world(s.store, planning, args.request, interaction)
            if result.rule_ids:
                # §6.5.5: list the contracts the new or changed rules touch and offer to update them.
                impact = await propagate_rule_change(s.store, planning, interaction, result.rule_ids)
                result.message = "\n".join([result.message, impact.message])
                result.warnings += impact.warnings
                result.cost_usd += impact.cost_usd
            return result

        return _report(_run(session, work))


def cmd_storyline_add(args: argparse.Namespace) -> int:
    from novel_desktop.pipeline.on_demand import OnDemandError, add_storyline

    with open_store(args.novel, write=True) as store:
        try:
            result = add_storyline(
                store,
                storyline_id=args.id,
                name=args.name,
                type=args.type,
                scope=args.scope,
                description=args.description,
            )
        except OnDemandError as exc:
            raise CliError(str(exc), EXIT_FAILED) from None
        return _report(result)


def cmd_research_import(args: argparse.Namespace) -> int:
    from novel_desktop.pipeline.on_demand import OnDemandError, import_research_notes

    with open_store(args.novel, write=True) as store:
        try:
            return _report(import_research_notes(store, args.files))
        except OnDemandError as exc:
            raise CliError(str(exc), EXIT_FAILED) from None


def _score(value: float | None) -> str:
    return f"{value:.2f}" if value is not None else "—"


def cmd_judge(args: argparse.Namespace) -> int:
    from novel_desktop.pipeline.on_demand import rejudge

    with open_session(args.novel, write=True) as session:
        result = _run(session, lambda s: rejudge(s.store, s.agents.judge, args.chapter))
    print(
        f"第{result.chapter}章 重新评审：{_score(result.old_overall)} → {_score(result.new_overall)}"
        "（原评审保留在日志中）"
    )
    for warning in result.warnings:
        print(f"  ! {warning}", file=sys.stderr)
    print(f"费用 cost: ${result.cost_usd:.4f}")
    return 0


def cmd_reevaluate(args: argparse.Namespace) -> int:
    from novel_desktop.pipeline.on_demand import batch_reevaluate

    chapters = parse_range(args.chapters)
    with open_session(args.novel, write=True) as session:
        known = {c.number for c in session.store.list_chapters()}
        missing = [n for n in chapters if n not in known]
        if missing:
            raise CliError(f"这些章节不存在：{', '.join(map(str, missing))} (no such chapters)", 2)
        report = _run(
            session,
            lambda s: batch_reevaluate(
                s.store,
                s.agents.judge,
                chapters,
                prefer_batch=args.batch,
                on_progress=lambda line: print(f"  · {line}", file=sys.stderr),
            ),
        )
    print(report.batch.note)
    for n, result in sorted(report.chapters.items()):
        print(f"第{n}章 {_score(result.old_overall)} → {_score(result.new_overall)}")
    for n, reason in sorted(report.failed.items()):
        print(f"第{n}章 失败，原评审保留 (failed): {reason}", file=sys.stderr)
    line = f"费用 cost: ${report.cost_usd:.4f}"
    if report.batch.mode == "batch":
        line += f"（原价 full price ${report.full_price_usd:.4f}，半价 half price）"
    print(line)
    return EXIT_FAILED if report.failed else 0
