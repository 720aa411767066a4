"""The theme: a disabled control must look disabled."""

from __future__ import annotations

from PySide6.QtGui import QPalette

from novel_desktop.ui.theme import calm_palette


def test_disabled_text_is_greyed() -> None:
    palette = calm_palette()
    for role in (QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText, QPalette.ColorRole.Text):
        active = palette.color(QPalette.ColorGroup.Active, role)
        disabled = palette.color(QPalette.ColorGroup.Disabled, role)
        assert disabled != active
        assert disabled.lightness() > active.lightness() + 60  # visibly lighter than the ink
