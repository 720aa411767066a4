"""Helpers shared by the CLI command modules."""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path
from typing import Any


class CliError(Exception):
    """A failure to report as one line on stderr, with its exit code."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def read_json_file(path: str | Path, *, bad_json_exit: int = 2) -> Any:
    """Parse a JSON file, or raise CliError naming the file and the problem.

    A missing or unreadable file exits 2; text that is not JSON exits ``bad_json_exit``.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CliError(f"找不到文件 / file not found: {p}", 2) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"无法读取 / cannot read {p}: {exc}", 2) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"不是合法的 JSON / not valid JSON: {p}: 第 {exc.lineno} 行 (line {exc.lineno}): {exc.msg}",
            bad_json_exit,
        ) from None


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal (a CJK character takes two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` terminal columns."""
    return text + " " * max(0, width - display_width(text))


def print_json(data: Any) -> None:
    """Print JSON for machines: UTF-8, no ASCII escaping of Chinese."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
