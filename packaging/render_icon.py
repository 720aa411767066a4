"""Render ``icons/novel-desktop.svg`` to the 256 px PNG that desktops and AppStream want.

Run after changing the SVG: ``.venv/bin/python packaging/render_icon.py`` (works offscreen).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SVG = HERE / "icons" / "novel-desktop.svg"
PNG = HERE / "icons" / "novel-desktop.png"


def render(size: int = 256, svg: Path = SVG, png: Path = PNG) -> Path:
    """Draw ``svg`` into a transparent ``size``×``size`` PNG at ``png``."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    # A build tool, not the core: the Qt ban of the core does not apply here.
    from PySide6.QtCore import Qt  # noqa: TID251
    from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: TID251
    from PySide6.QtSvg import QSvgRenderer  # noqa: TID251

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"not a valid SVG: {svg}")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    if not image.save(str(png), "PNG"):
        raise SystemExit(f"could not write {png}")
    return png


if __name__ == "__main__":
    print(render())
