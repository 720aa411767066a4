"""The ``novel`` command line.

Each sub-module registers its commands with ``register(subparsers)``; every handler returns the process exit
code. Errors are printed as one clear line each, never as a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from novel_desktop import __version__
from novel_desktop.cli import adopt as adopt_cmds
from novel_desktop.cli import ask as ask_cmds
from novel_desktop.cli import blacklist as blacklist_cmds
from novel_desktop.cli import context as context_cmds
from novel_desktop.cli import cost as cost_cmds
from novel_desktop.cli import demo as demo_cmds
from novel_desktop.cli import draft as draft_cmds
from novel_desktop.cli import edit as edit_cmds
from novel_desktop.cli import executor as executor_cmds
from novel_desktop.cli import export as export_cmds
from novel_desktop.cli import import_text as import_text_cmds
from novel_desktop.cli import lifecycle as lifecycle_cmds
from novel_desktop.cli import on_demand as on_demand_cmds
from novel_desktop.cli import outline as outline_cmds
from novel_desktop.cli import project as project_cmds
from novel_desktop.cli import rebuild as rebuild_cmds
from novel_desktop.cli import rollback as rollback_cmds
from novel_desktop.cli import state as state_cmds
from novel_desktop.cli import suggest as suggest_cmds
from novel_desktop.cli import writing as writing_cmds
from novel_desktop.cli.common import CliError

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_UNREADABLE = 2
EXIT_LOCKED = 3


def _version() -> str:
    """``novel-desktop 0.1.0``: the installed distribution's version, else the package's own."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"novel-desktop {version('novel-desktop')}"
    except PackageNotFoundError:
        return f"novel-desktop {__version__}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="novel",
        description=(
            "novel —— 网文长篇创作工具的命令行。一部小说就是一个 .novel 文件。\n"
            "novel — command line of the novel_desktop writing tool. One novel is one .novel file."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=_version())
    subparsers = parser.add_subparsers(dest="command", metavar="命令/command")
    project_cmds.register(subparsers)
    state_cmds.register(subparsers)
    ask_cmds.register(subparsers)
    import_text_cmds.register(subparsers)
    adopt_cmds.register(subparsers)
    export_cmds.register(subparsers)
    outline_cmds.register(subparsers)
    writing_cmds.register(subparsers)
    draft_cmds.register(subparsers)
    lifecycle_cmds.register(subparsers)
    executor_cmds.register(subparsers)
    on_demand_cmds.register(subparsers)
    demo_cmds.register(subparsers)
    blacklist_cmds.register(subparsers)
    suggest_cmds.register(subparsers)
    edit_cmds.register(subparsers)
    rollback_cmds.register(subparsers)
    rebuild_cmds.register(subparsers)
    cost_cmds.register(subparsers)
    context_cmds.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``novel``; returns (and, as a script, exits with) the exit code.

    The one place where failures become exit codes: a :class:`CliError` its own, a novel locked by another
    process 3, every error a user can cause (a corrupt, read-only or busy novel, a full disk, an unsafe
    path …: :class:`StoreError`) 2, each as one line naming the file. Only a bug is an internal error (70).
    A reader that went away (``novel … | head -1``) is not an error: the command still finishes its work.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_UNREADABLE
    stdout = sys.stdout
    sys.stdout = quiet = _QuietPipe(stdout)
    try:
        return _run(handler, args)
    finally:
        quiet.flush()
        sys.stdout = stdout


def _run(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    from novel_desktop.storage import errors
    from novel_desktop.storage.lock import ProjectLocked
    from novel_desktop.storage.migrations import SchemaError
    from novel_desktop.storage.store import StoreError

    try:
        code: int = handler(args)
    except CliError as exc:
        return _fail(str(exc), exc.exit_code)
    except ProjectLocked as exc:
        return _fail(str(exc), EXIT_LOCKED)
    except (StoreError, SchemaError) as exc:
        return _fail(str(exc), EXIT_UNREADABLE)
    except KeyboardInterrupt:
        print("已取消 / cancelled", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _stdout_to_devnull(sys.stdout)  # written past the wrapper; the work before it is done
        return EXIT_OK
    except Exception as exc:  # an author never sees a traceback; the details go to a log file
        novel = getattr(args, "novel", None)
        mapped = errors.translate(exc, novel) if isinstance(novel, str) else None
        if mapped is not None:
            return _fail(str(mapped), EXIT_UNREADABLE)
        from novel_desktop.crash import short_message, write_crash_log

        where = write_crash_log(exc) or "(无法写入日志 / log not writable)"
        name = f"{type(exc).__name__}: {short_message(exc)}"
        print(f"内部错误 / internal error: {name}（详情见 details in {where}）", file=sys.stderr)
        return 70
    return code


def _fail(message: str, code: int) -> int:
    print(f"错误 / error: {message}", file=sys.stderr)
    return code


class _QuietPipe:
    """``sys.stdout`` for a command: once the reader is gone (a broken pipe), output is dropped silently.

    The command goes on (a chapter is committed whether or not anyone reads the progress) and exits with its
    own code; the real stream is pointed at the null device so that the interpreter's last flush is quiet.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._lost()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._lost()

    def _lost(self) -> None:
        self._gone = True
        _stdout_to_devnull(self._stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _stdout_to_devnull(stream: Any) -> None:
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (a test's capture): nothing will be flushed to a pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
