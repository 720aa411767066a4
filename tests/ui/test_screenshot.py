"""``novel-desktop --screenshot``: renders each view offscreen at the asked size and exits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from novel_desktop.app import build_parser, render_screenshot
from tests.conftest import REPO


def _distinct_colours(image: QImage) -> int:
    """How many colours a coarse grid of samples has: a blank or failed render has one or two."""
    colours = set()
    for x in range(0, image.width(), max(1, image.width() // 40)):
        for y in range(0, image.height(), max(1, image.height() // 30)):
            colours.add(image.pixel(x, y))
    return len(colours)


@pytest.mark.parametrize(
    "view", ["start", "editor", "outline", "storylines", "quality", "analytics", "settings"]
)
def test_each_view_renders_at_the_given_size(
    qapp: QApplication, seed_novel: Path, tmp_path: Path, view: str
) -> None:
    out = render_screenshot(tmp_path / f"{view}.png", project=seed_novel, view=view, size=(1366, 768))
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1366, 768)
    assert _distinct_colours(image) > 8


def test_an_english_screenshot_shows_the_window_in_english(
    qapp: QApplication, seed_novel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--lang en`` (docs/make-screenshots.sh makes <view>.en.png this way): the window it drew spoke English."""
    from novel_desktop import i18n
    from novel_desktop.ui.main_window import MainWindow
    from novel_desktop.ui.qt_translations import install_qt_translations

    titles: list[str] = []
    original = MainWindow.open_view

    def open_view(window: MainWindow, name: str, volume: int = 0) -> object:
        view = original(window, name, volume)
        titles.append(window.tabs.tabText(window.tabs.currentIndex()))
        return view

    monkeypatch.setattr(MainWindow, "open_view", open_view)
    try:
        out = render_screenshot(
            tmp_path / "a.en.png", project=seed_novel, view="analytics", size=(1366, 768), language="en"
        )
    finally:
        i18n.set_language("zh")
        install_qt_translations("zh")
    assert _distinct_colours(QImage(str(out))) > 8
    assert titles == ["Analytics"]


def test_screenshot_leaves_the_novel_closed_and_unlisted(
    qapp: QApplication, seed_novel: Path, tmp_path: Path
) -> None:
    from novel_desktop.config import load_app_settings
    from novel_desktop.storage.store import NovelStore

    render_screenshot(tmp_path / "e.png", project=seed_novel, view="editor", size=(1000, 700))
    NovelStore.open(seed_novel, write=True).close()  # the lock was released
    assert load_app_settings().recent_novels == []


def test_size_is_parsed_and_checked() -> None:
    assert build_parser().parse_args(["--size", "1600x1000"]).size == (1600, 1000)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--size", "big"])


def test_screenshot_from_the_command_line(seed_novel: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, "-m", "novel_desktop", "--screenshot", str(out), "--project", str(seed_novel),
         "--view", "editor", "--size", "1280x800"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 800)
