"""`novel ask` commands: check NOVEL_ASK question and answer files (seed 000)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from novel_desktop.cli.common import print_json, read_json_file
from novel_desktop.domain.novel_ask import QuestionSpecInvalid, ValidationProblem, parse_question_spec
from novel_desktop.domain.novel_ask_answers import validate_answer_path, validate_answer_spec

EXIT_OK = 0
EXIT_INVALID = 1

_VALIDATE_DESCRIPTION = (
    "校验 NOVEL_ASK 问题规格（QuestionSpec），以及可选的答案（AnswerSpec）和 answer_path。\n"
    "Validate a NOVEL_ASK QuestionSpec, and optionally an AnswerSpec against it and an answer_path.\n\n"
    "退出码 / exit codes: 0 有效 / valid；1 无效 / invalid（每个问题一行输出到 stderr）；\n"
    "2 无法读取 / unreadable input（文件不存在、不是 UTF-8 或不是 JSON）。"
)

_VALIDATE_EPILOG = (
    "示例 / example:\n"
    "  novel ask validate --questions q.json \\\n"
    "      --answers staging/novel-ask/chapter-048-draft.answers.json \\\n"
    "      --answer-path staging/novel-ask/chapter-048-draft.answers.json --json\n\n"
    "--answer-path 以当前目录为项目根目录校验 / is checked with the current directory as the project root."
)


def register(subparsers: Any) -> None:
    """Register ``novel ask`` and its sub-commands."""
    ask = subparsers.add_parser(
        "ask",
        help="NOVEL_ASK 问答门控 / NOVEL_ASK question gate",
        description="NOVEL_ASK 问答门控相关命令 / NOVEL_ASK question gate commands.",
    )
    ask_sub = ask.add_subparsers(dest="ask_command", metavar="子命令/subcommand")
    # `novel ask` alone prints its help instead of failing silently.
    ask.set_defaults(handler=lambda _args: _print_help(ask))

    validate = ask_sub.add_parser(
        "validate",
        help="校验问题规格与答案 / validate a QuestionSpec and its AnswerSpec",
        description=_VALIDATE_DESCRIPTION,
        epilog=_VALIDATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    validate.add_argument(
        "--questions",
        required=True,
        metavar="Q.json",
        help="问题规格 JSON 文件 / QuestionSpec JSON file",
    )
    validate.add_argument(
        "--answers",
        metavar="A.json",
        help="答案 JSON 文件，按问题规格校验 / AnswerSpec JSON file, checked against the QuestionSpec",
    )
    validate.add_argument(
        "--answer-path",
        metavar="P",
        help="要校验的 answer_path（项目相对路径）/ answer_path to check (project-relative)",
    )
    validate.add_argument(
        "--json",
        action="store_true",
        help='以 JSON 输出结果到 stdout / print {"valid": ..., "errors": [...]} to stdout',
    )
    validate.set_defaults(handler=run_validate)


def _print_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def run_validate(args: argparse.Namespace) -> int:
    """``novel ask validate``: 0 when everything given is valid, 1 when not; unreadable input exits 2."""
    # Read every file first, so an unreadable file exits 2 even when another one is invalid.
    questions_data = read_json_file(args.questions, bad_json_exit=2)
    answers_data = read_json_file(args.answers, bad_json_exit=2) if args.answers is not None else None

    problems: list[ValidationProblem] = []
    try:
        spec = parse_question_spec(questions_data)
    except QuestionSpecInvalid as exc:
        # Answers cannot be judged against a broken QuestionSpec; its own problems come first.
        problems.extend(exc.problems)
    else:
        if args.answers is not None:
            problems.extend(validate_answer_spec(spec, answers_data))
    if args.answer_path is not None:
        problems.extend(validate_answer_path(args.answer_path, root=Path.cwd()))

    errors = [str(problem) for problem in problems]
    if args.json:
        print_json({"valid": not errors, "errors": errors})
    elif errors:
        for line in errors:
            print(line, file=sys.stderr)
    else:
        print("有效 / valid")
    return EXIT_INVALID if errors else EXIT_OK
