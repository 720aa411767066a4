"""``novel blacklist``: the novel's AI-phrase list (seed 004 §7 黑名单维护).

List it with each phrase's source and hits, add and remove phrases, accept or reject what the judge
proposed, turn automatic adding on or off."""

from __future__ import annotations

import argparse
from typing import Any

from novel_desktop.cli.common import CliError, print_json
from novel_desktop.cli.project import open_store

_SOURCES_EN = {"内置": "built-in", "作者": "author", "评审": "judge"}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "blacklist",
        help="查看或编辑 AI 套话黑名单 / show or edit the AI-phrase list",
        description=(
            "列出本书 AI 套话黑名单的每条短语、来源（内置/作者/评审）和在已提交章节中的命中次数，\n"
            "以及评审发现、等待确认的新短语。带选项时先修改再列出；所有修改一次写入。\n"
            "List the novel's AI phrases with source and hits, and the judge's proposals;\n"
            "options change the list first (in one write).\n"
            "以 re: 开头的短语是正则表达式 / a phrase starting with re: is a pattern.\n"
            "退出码 exit codes: 0 成功 ok, 1 输入无效 invalid, 2 无法读取 unreadable, 3 被占用 locked"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="例 / example: novel blacklist 我的小说.novel --add 眸光微闪 --accept-all --auto on",
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--add", nargs="+", default=[], metavar="P", help="添加短语 / add phrases")
    p.add_argument("--remove", nargs="+", default=[], metavar="P", help="移除短语 / remove phrases")
    accept = p.add_mutually_exclusive_group()
    accept.add_argument(
        "--accept", nargs="+", default=[], metavar="P", help="接受评审提议 / accept proposals"
    )
    accept.add_argument("--accept-all", action="store_true", help="接受全部提议 / accept every proposal")
    p.add_argument("--reject", nargs="+", default=[], metavar="P", help="拒绝评审提议 / reject proposals")
    p.add_argument(
        "--auto",
        choices=("on", "off"),
        default=None,
        help="评审发现的新短语直接加入（on）或等待确认（off） / add the judge's phrases at once",
    )
    p.add_argument("--json", action="store_true", help="以 JSON 输出 / print JSON")
    p.set_defaults(handler=cmd_blacklist)


def cmd_blacklist(args: argparse.Namespace) -> int:
    from novel_desktop.analysis.blacklist import blacklist_report, edit_blacklist
    from novel_desktop.analysis.cache import AnalysisCache
    from novel_desktop.domain.style import BlacklistEdit

    edit = BlacklistEdit(
        add=list(args.add),
        remove=list(args.remove),
        accept=list(args.accept),
        accept_all=bool(args.accept_all),
        reject=list(args.reject),
        auto_add=None if args.auto is None else args.auto == "on",
    )
    with open_store(args.novel, write=not edit.is_empty()) as store:
        if not edit.is_empty():
            try:
                edit_blacklist(store, edit)
            except ValueError as exc:
                raise CliError(str(exc), 1) from None
        cache = AnalysisCache.default()
        try:
            report = blacklist_report(store, cache)
        except ValueError as exc:
            raise CliError(str(exc), 2) from None
        finally:
            cache.close()
    if args.json:
        print_json(report.to_json())
        return 0
    auto = "开 on" if report.auto_add else "关 off"
    print(
        f"AI 套话黑名单 AI phrases: {len(report.rows)} 条，已提交 {report.chapters} 章；"
        f"自动加入 auto-add: {auto}"
    )
    for row in sorted(report.rows, key=lambda r: -r.hits):
        print(f"{row.hits:>5}  {row.source}/{_SOURCES_EN.get(row.source, row.source):<8}  {row.phrase}")
    if report.proposed:
        print(f"待确认 proposed ({len(report.proposed)}):")
        for proposal in report.proposed:
            where = f"第 {proposal.chapter} 章" if proposal.chapter else ""
            print(f"  {proposal.phrase}  {where}")
    if report.removed:
        print(f"已移除 removed: {'、'.join(report.removed)}")
    return 0
