"""Screenshots a UI test can leave for a person to look at: saved only when ``NOVEL_SHOTS`` names a folder
(``NOVEL_SHOTS=/tmp/shots ./run.sh test tests/ui``), so a test run writes nothing outside its temporary
folders."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QWidget


def save_shot(widget: QWidget, name: str) -> None:
    folder = os.environ.get("NOVEL_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        widget.grab().save(str(Path(folder) / f"{name}.png"))
