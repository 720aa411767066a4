"""``novel edit``: change the world, the characters, the storylines or a volume plan later in the novel.

The same payloads the agents' proposals use (``domain.proposals``): the command starts from what the novel
holds (``pipeline.approval.current_payload``), takes the author's edited JSON (``--file`` or ``$EDITOR``),
validates it, stores it in one transaction and records the change in the changelog with the chapter it takes
effect from.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from novel_desktop.cli.common import CliError, print_json
from novel_desktop.cli.project import open_store
from novel_desktop.cli.review import NoEditor, edit_until_valid
from novel_desktop.domain.proposals import ProposalInvalid, parse_payload_text

EXIT_INVALID = 1
#: What the command calls a kind → the payload kind.
KINDS = {"world": "world", "characters": "characters", "storylines": "storylines", "plan": "volume_plan"}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "edit",
        help="修改世界规则、角色与契约、故事线或卷大纲 / edit the world, characters, storylines or a plan",
        description=(
            "修改小说的设定：世界规则与设定文档（world）、角色与契约和关系（characters）、故事线（storylines）、\n"
            "卷大纲与章节契约（plan）。不给 --file 时用 $VISUAL / $EDITOR 打开当前内容的 JSON；保存前校验，\n"
            "改动写入对应的 changelog，注明自第几章起生效。删掉的角色会退场（移到 characters/retired/）。\n"
            "Edit the novel's settings as JSON (from --file, or in $VISUAL / $EDITOR); validated,\n"
            "stored in one transaction and recorded in the changelog with the chapter it takes effect from.\n"
            "退出码 exit codes: 0 已保存或无改动 saved or unchanged, 1 内容无效 invalid,\n"
            "2 无法读取 unreadable, 3 被占用 locked"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "例 / examples:\n"
            "  novel edit 我的小说.novel world --print > world.json\n"
            "  novel edit 我的小说.novel world --file world.json --from 12\n"
            "  novel edit 我的小说.novel plan --volume 2"
        ),
    )
    p.add_argument("novel", help=".novel 文件 / novel file")
    p.add_argument("what", choices=list(KINDS), help="要改什么 / what to edit")
    p.add_argument("--volume", type=int, default=None, help="卷号（plan；默认当前卷） / volume (plan)")
    p.add_argument(
        "--from",
        dest="from_chapter",
        type=int,
        default=None,
        help="自第几章起生效（默认下一章） / first chapter it binds (default: the next one)",
    )
    p.add_argument("--file", default=None, help="编辑好的 JSON 文件 / the edited JSON file")
    p.add_argument(
        "--print", action="store_true", help="只打印当前内容的 JSON / print the current JSON and exit"
    )
    p.add_argument("--json", action="store_true", help="以 JSON 输出结果 / print the result as JSON")
    p.set_defaults(handler=cmd_edit)


def _read_file(path: str) -> str:
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise CliError(f"找不到文件 / file not found: {p}", 2) from None
    except OSError as exc:
        raise CliError(f"无法读取 / cannot read {p}: {exc.strerror or exc}", 2) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CliError(f"文件不是 UTF-8 文本 / not UTF-8 text: {p}", EXIT_INVALID) from None
    if not text.strip():
        raise CliError(f"文件是空的 / the file is empty: {p}", EXIT_INVALID)
    return text


def _stdin_is_tty() -> bool:
    try:
        return bool(sys.stdin.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def _read(prompt: str) -> str:
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line.strip() if line else ""


def cmd_edit(args: argparse.Namespace) -> int:
    from novel_desktop.pipeline.approval import apply_payload, current_payload

    kind = KINDS[args.what]
    if args.from_chapter is not None and args.from_chapter < 1:
        raise CliError("--from 必须是正整数 / --from must be a positive chapter number", EXIT_INVALID)
    text = _read_file(args.file) if args.file else None
    with open_store(args.novel, write=not args.print) as store:
        current = current_payload(store, kind, volume=args.volume)
        if args.print:
            print_json(current)
            return 0
        original = json.dumps(current, ensure_ascii=False, indent=2) + "\n"
        if text is None:
            try:
                edited = edit_until_valid(kind, original, say=_say, read=_read, stdin_is_tty=_stdin_is_tty())
            except NoEditor as exc:
                raise CliError(str(exc), EXIT_INVALID) from None
            if edited is None:
                _say("已放弃编辑，未做任何改动 / edit abandoned, nothing changed")
                return EXIT_INVALID
            text = edited
        try:
            payload = parse_payload_text(kind, text).to_json_dict()
        except ProposalInvalid as exc:
            for problem in exc.problems[:20]:
                _say(f"  - {problem}")
            raise CliError(
                f"内容无效，未做任何改动 / invalid, nothing changed: {exc}", EXIT_INVALID
            ) from None
        start = args.from_chapter
        if start is None:
            start = int(store.checkpoint().get("last_completed_chapter") or 0) + 1
        try:
            written = apply_payload(
                store, kind, payload, effective_from=start, note="作者编辑", volume=args.volume
            )
        except ProposalInvalid as exc:
            raise CliError(
                f"内容无效，未做任何改动 / invalid, nothing changed: {exc}", EXIT_INVALID
            ) from None
    if args.json:
        print_json({"changed": bool(written), "written": written, "effective_from": start})
    elif written:
        print(f"已保存，自第 {start} 章起生效 / saved, effective from chapter {start}:")
        for path in written:
            print(f"  {path}")
    else:
        print("没有改动 / nothing changed")
    return 0
