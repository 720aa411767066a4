"""crash.log: what went wrong where, for a bug report, never what the author wrote.

The window's uncaught errors and the CLI's unexpected ones both land here. The file keeps the last
:data:`CRASHES_KEPT` crashes, is the user's alone (mode 0600), is written whole (a temporary file
renamed), and holds tracebacks without local variables, each exception message on one line cut to 80
characters.
"""

from __future__ import annotations

import os
from datetime import UTC
from pathlib import Path

#: How many crashes crash.log keeps (the newest last), and how long a line of it may be.
CRASHES_KEPT = 5
_LINE_LIMIT = 200
_MESSAGE_LIMIT = 80
_CRASH_MARK = "===== crash "


def _scrub(line: str) -> str:
    """A traceback line without the author's text: long lines (an exception quoting a chapter) are cut."""
    line = line.rstrip("\n")
    if len(line) > _LINE_LIMIT:
        line = line[:_LINE_LIMIT] + f"…[{len(line) - _LINE_LIMIT} chars removed]"
    return line


def short_message(exc: BaseException) -> str:
    """The exception's message on one line, cut to :data:`_MESSAGE_LIMIT` characters (it may quote text)."""
    message = " ".join(str(exc).split())
    if len(message) > _MESSAGE_LIMIT:
        message = message[:_MESSAGE_LIMIT] + f"…[{len(message) - _MESSAGE_LIMIT} chars removed]"
    return message


def crash_report(exc: BaseException) -> str:
    """The traceback of ``exc`` (and of the exceptions it came from) with no local variables, each message on
    one line cut to :data:`_MESSAGE_LIMIT` characters: where it failed, not what the author wrote."""
    import traceback

    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    lines: list[str] = []
    for item in reversed(chain):
        lines.append("Traceback (most recent call last):")
        lines += [part for chunk in traceback.format_tb(item.__traceback__) for part in chunk.splitlines()]
        lines.append(f"{type(item).__module__}.{type(item).__qualname__}: {short_message(item)}")
    return "\n".join(_scrub(line) for line in lines)


def write_crash_log(exc: BaseException, folder: Path | None = None) -> Path | None:
    """Add ``exc`` to ``crash.log`` in the data folder, keeping the last :data:`CRASHES_KEPT` crashes; the
    file is the user's alone (mode 0600) and written whole (a temporary file renamed). None if unwritable."""
    from datetime import datetime

    from novel_desktop.paths import user_data_dir

    try:
        folder = folder or user_data_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "crash.log"
        old = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        crashes = [c for c in old.split(_CRASH_MARK) if c.strip()]
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        crashes.append(f"{stamp} =====\n{crash_report(exc)}\n")
        text = "".join(_CRASH_MARK + c for c in crashes[-CRASHES_KEPT:])
        tmp = folder / f".crash.log.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
        return path
    except OSError:
        return None
