"""``novel-desktop --version`` and ``novel --version`` name the installed version, and the window's command
answers without loading Qt."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import pytest

from novel_desktop import __version__
from novel_desktop.cli import main as cli_main

EXPECTED = f"novel-desktop {version('novel-desktop')}"


def test_the_version_is_the_packages() -> None:
    assert EXPECTED == f"novel-desktop {__version__}" == "novel-desktop 0.1.0"


def test_novel_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli_main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == EXPECTED


def test_novel_desktop_version_answers_without_importing_qt() -> None:
    probe = (
        "import sys\n"
        "from novel_desktop.app import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code\n"
        "print('qt' if any(m.startswith('PySide6') for m in sys.modules) else 'no qt')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert out == [EXPECTED, "no qt"]
