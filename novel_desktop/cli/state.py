"""``novel state apply`` and ``novel state show``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from novel_desktop.cli.common import CliError, print_json
from novel_desktop.cli.project import open_store
from novel_desktop.domain.state_patch import PatchRejected


def register(subparsers: Any) -> None:
    state = subparsers.add_parser(
        "state",
        help="查看或修改故事状态（角色、物品、伏笔） / show or patch the story state",
        description="故事状态 current-state.json 的查看与合并。Show or patch the story state.",
    )
    sub = state.add_subparsers(dest="state_command", metavar="子命令/subcommand")

    p = sub.add_parser(
        "apply",
        help="校验并合并一个状态补丁（ops） / validate and merge a state patch",
        description=(
            "校验并合并状态补丁（PRD §9.2 格式，含 base_state_version 与 ops）。\n"
            "不合规的 op 会被丢弃并说明原因；补丁整体不可用（JSON 错误、版本不符）时拒绝。\n"
            "退出码 exit codes: 0 已合并 applied, 1 拒绝 rejected, 2 无法读取 unreadable, 3 被占用 locked"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="例 / example: novel state apply 我的小说.novel --patch chapter-048-delta.json",
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--patch", required=True, help="补丁 JSON 文件 / patch JSON file")
    p.add_argument("--json", action="store_true", help="以 JSON 输出结果 / print the result as JSON")
    p.set_defaults(handler=cmd_apply)

    p = sub.add_parser(
        "show",
        help="打印状态 JSON / print the state JSON",
        description="打印当前（或指定版本的）状态 JSON。Print the current state, or the state at a version.",
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("--version", type=int, default=None, help="状态版本号 / state_version to show")
    p.set_defaults(handler=cmd_show)

    state.set_defaults(handler=lambda _args: (state.print_help(), 2)[1])


def cmd_apply(args: argparse.Namespace) -> int:
    patch_path = Path(args.patch)
    try:
        raw = patch_path.read_bytes()
    except OSError as exc:
        raise CliError(f"无法读取补丁 / cannot read patch {patch_path}: {exc.strerror or exc}", 2) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CliError(f"补丁不是 UTF-8 文本 / patch is not UTF-8: {patch_path}", 2) from None
    with open_store(args.novel, write=True) as store:
        try:
            result = store.apply_state_patch(text)
        except PatchRejected as exc:
            if args.json:
                print_json({"applied": False, "reason": exc.reason})
            print(f"补丁被拒绝 / patch rejected: {exc.reason}", file=sys.stderr)
            return 1
    applied_ops = [op.to_json_dict() for op in result.applied]
    if args.json:
        print_json(
            {
                "applied": True,
                "state_version": result.state["state_version"],
                "applied_ops": applied_ops,
                "dropped_ops": [{"index": d.index, "op": d.op, "reason": d.reason} for d in result.dropped],
            }
        )
        return 0
    applied = [
        f"{op['op']} {op['path']} = {json.dumps(op.get('value'), ensure_ascii=False)}" for op in applied_ops
    ]
    print(f"已合并 applied: {len(applied)} 个 op，状态版本 state_version → {result.state['state_version']}")
    for line in applied:
        print(f"  ✓ {line}")
    for d in result.dropped:
        print(f"  ✗ 第 {d.index + 1} 个 op 已丢弃 dropped op #{d.index + 1}: {d.reason}", file=sys.stderr)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with open_store(args.novel, write=False) as store:
        if args.version is None:
            state = store.current_state()
        else:
            found = store.state_at(args.version)
            if found is None:
                versions = store.state_versions()
                raise CliError(
                    f"没有状态版本 {args.version}；已有版本 (known versions): "
                    f"{', '.join(map(str, versions)) or '无'}",
                    1,
                )
            state = found
    print_json(state)
    return 0
