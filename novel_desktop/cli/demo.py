"""``novel demo OUT.novel``: write the bundled demo novel to a new file."""

from __future__ import annotations

import argparse
from typing import Any

from novel_desktop.cli.common import CliError
from novel_desktop.cli.project import open_store
from novel_desktop.storage.store import StoreError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "demo",
        help="生成一部示例小说（6 章，可直接浏览） / write the bundled demo novel to a new file",
        description=(
            "把内置的示例小说《剑冢守灯人》写成一个新的 .novel 文件：两条故事线、十章大纲与契约、\n"
            "六章正文及其摘要、评分、状态历史，第 4-6 章因手动修改待重建。不需要 API key。\n"
            "Write the bundled demo novel to a new .novel file (an existing file is never overwritten)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="例 / example: novel demo 示例.novel",
    )
    p.add_argument("novel", metavar="OUT.novel", help="新文件的路径 / path of the new novel file")
    p.set_defaults(handler=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    from novel_desktop.demo import build_demo

    try:
        path = build_demo(args.novel)
    except StoreError as exc:
        raise CliError(str(exc), 2) from None
    with open_store(str(path), write=False) as store:
        report = store.status()
    stale = "、".join(str(n) for n in report.stale_chapters) or "无 none"
    print(
        f"已生成示例小说《{report.title}》：{path} (demo written)\n"
        f"{report.chapters} 章 chapters，{report.total_chars:,} 字，"
        f"未回收伏笔 open foreshadowing {report.open_foreshadowing}，待重建 needs rebuild: {stale}"
    )
    return 0
