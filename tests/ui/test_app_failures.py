"""``novel-desktop`` with a bad novel, headless: exit 2 and a message, never a dialog it waits on; and
crash.log: the last few crashes, the user's alone, no chapter text."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from novel_desktop.crash import CRASHES_KEPT, crash_report, write_crash_log
from tests.conftest import REPO


def _screenshot(novel: Path, out: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [sys.executable, "-m", "novel_desktop", "--screenshot", str(out), str(novel)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.mark.parametrize("content", [None, b"this is not a novel", b"SQLite format 3\x00" + b"\xff" * 500])
def test_a_screenshot_of_a_bad_novel_exits_2_with_a_message(tmp_path: Path, content: bytes | None) -> None:
    bad = tmp_path / "坏的.novel"
    if content is not None:
        bad.write_bytes(content)
    out = tmp_path / "bad.png"
    result = _screenshot(bad, out)  # the timeout fails the test if a dialog blocks
    assert result.returncode == 2, result.stderr
    assert str(bad) in result.stderr
    assert "Traceback" not in result.stderr and "sqlalchemy" not in result.stderr.lower()
    assert not out.exists()


def _crash(text: str) -> BaseException:
    chapter = text  # a local holding chapter text: never written

    try:
        try:
            raise ValueError(f"段落无法处理：{chapter}")
        except ValueError as inner:
            raise RuntimeError("保存时出错") from inner
    except RuntimeError as exc:
        return exc


def test_crash_log_keeps_the_last_crashes_privately_and_no_chapter_text(tmp_path: Path) -> None:
    chapter = "\n".join(f"　　第{i}段：林枫推开药铺的门，雨下了一夜，街上一个人也没有。" for i in range(300))
    for n in range(CRASHES_KEPT + 3):
        path = write_crash_log(_crash(f"{n}号" + chapter), tmp_path)
    assert path == tmp_path / "crash.log"
    text = path.read_text(encoding="utf-8")
    assert text.count("===== crash ") == CRASHES_KEPT
    assert "0号" not in text and f"{CRASHES_KEPT + 2}号" in text  # the newest kept, the oldest dropped
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "第3段" not in text and "第299段" not in text  # at most the start of a message, one line
    assert "RuntimeError" in text and "ValueError" in text and "test_app_failures.py" in text
    assert len(text) < 5000 * CRASHES_KEPT


def test_an_existing_world_readable_crash_log_becomes_private(tmp_path: Path) -> None:
    log = tmp_path / "crash.log"
    log.write_text("old\n", encoding="utf-8")
    log.chmod(0o644)
    write_crash_log(_crash("x"), tmp_path)
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_a_crash_report_has_no_locals() -> None:
    report = crash_report(_crash("秘密的正文" * 2))
    assert "chapter =" not in report and "秘密的正文秘密的正文" in report  # the message start, not locals
    assert all(len(line) <= 260 for line in report.splitlines())


def test_an_uncaught_error_in_the_window_is_logged_and_told_in_one_line(
    qapp: object, alerts: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from novel_desktop.app import _on_uncaught
    from novel_desktop.paths import user_data_dir

    exc = _crash("正文" * 500)
    _on_uncaught(type(exc), exc, exc.__traceback__)
    log = user_data_dir() / "crash.log"
    assert log.exists() and stat.S_IMODE(log.stat().st_mode) == 0o600
    err = capsys.readouterr().err
    assert "RuntimeError" in err and str(log) in err and "Traceback" not in err
    assert alerts.shown[-1][0] == "error"  # type: ignore[attr-defined]
