"""The layering of ARCHITECTURE.md: the core never imports Qt."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import novel_desktop

CORE = ("domain", "storage", "llm", "agents", "analysis", "pipeline")


def _core_modules() -> list[str]:
    root = Path(novel_desktop.__file__).parent
    names = []
    for package in CORE:
        names.append(f"novel_desktop.{package}")
        for info in pkgutil.walk_packages([str(root / package)], prefix=f"novel_desktop.{package}."):
            names.append(info.name)
    return names


def test_core_imports_without_qt() -> None:
    modules = _core_modules()
    assert "novel_desktop.storage.store" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_cli_starts_without_qt() -> None:
    code = (
        "import sys\n"
        "from novel_desktop.cli import build_parser\n"
        "build_parser()\n"
        "print(any(m.startswith('PySide6') for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
