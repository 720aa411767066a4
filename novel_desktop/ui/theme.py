"""The window's look: a calm light palette, a CJK UI font, and the writing font of the chapter editor.

The style sheet only targets our own widgets by object name (and a few neutral basics), so the views other
modules build keep their own look inside the window.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QStyleFactory

#: Chinese UI fonts in order of preference; Qt falls back along the list per glyph.
CJK_FAMILIES = [
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "Microsoft YaHei",
    "Microsoft YaHei UI",
    "PingFang SC",
    "Hiragino Sans GB",
    "DejaVu Sans",
]
#: The editor prefers a Song/Ming face for long reading where one exists, then the sans faces.
WRITING_FAMILIES = ["Noto Serif CJK SC", "Source Han Serif SC", "Songti SC", "SimSun", *CJK_FAMILIES]

UI_POINT_SIZE = 10.0
WRITING_POINT_SIZE = 14.0

ACCENT = "#3f6f8f"
PAPER = "#fbfaf7"
INK = "#2b2b2b"
MUTED = "#6b6b6b"
OK = "#2e7d4f"
WARN = "#b7791f"
BAD = "#b23b3b"
INFLIGHT = "#3b6fb2"


def ui_font() -> QFont:
    font = QFont()
    font.setFamilies(CJK_FAMILIES)
    font.setPointSizeF(UI_POINT_SIZE)
    return font


def heading_label(text: str = "") -> QLabel:
    """A view's bold heading, a fifth larger than the UI font; plain text, since it may show the novel's
    names."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 1.2)
    font.setBold(True)
    label.setFont(font)
    return label


def writing_font(point_size: float = WRITING_POINT_SIZE) -> QFont:
    font = QFont()
    font.setFamilies(WRITING_FAMILIES)
    font.setPointSizeF(point_size)
    # Full hinting makes CJK strokes blurry at body sizes; vertical-only hinting keeps them crisp and even.
    font.setHintingPreference(QFont.HintingPreference.PreferVerticalHinting)
    return font


STYLE_SHEET = f"""
QMainWindow::separator {{ width: 4px; height: 4px; background: #e4e1da; }}
QDockWidget {{ titlebar-close-icon: none; }}
QDockWidget::title {{ padding: 4px 8px; background: #efece6; color: {MUTED}; }}
QTabWidget#EditorTabs::pane {{ border: none; border-top: 1px solid #dedad2; }}
QTabWidget#EditorTabs QTabBar::tab {{
    padding: 6px 14px; margin-right: 1px; background: #ece9e2; color: {MUTED};
    border-top-left-radius: 4px; border-top-right-radius: 4px;
}}
QTabWidget#EditorTabs QTabBar::tab:selected {{ background: {PAPER}; color: {INK}; }}
QTextEdit#ChapterEditor {{
    background: {PAPER}; color: {INK}; border: none;
    selection-background-color: #cfe0ec; selection-color: {INK};
}}
QTreeView#ProjectTree {{ border: none; background: #f6f4ef; }}
QTreeView#ProjectTree::item {{ padding: 3px 2px; }}
QFrame#RebuildBar {{ background: #fff4d6; border-bottom: 1px solid #ecd9a0; }}
QWidget#StartPage {{ background: {PAPER}; }}
QLabel#StartTitle {{ font-size: 24pt; color: {INK}; }}
QLabel#StartSubtitle {{ color: {MUTED}; }}
QLabel#SectionTitle {{ font-weight: bold; color: {MUTED}; padding-top: 8px; }}
QPushButton#PrimaryAction {{
    background: {ACCENT}; color: white; border: none; border-radius: 6px; padding: 10px 22px;
    font-size: 12pt; text-align: left;
}}
QPushButton#PrimaryAction:hover {{ background: #355f7a; }}
QPushButton#SecondaryAction {{
    background: white; color: {INK}; border: 1px solid #d6d2c8; border-radius: 6px; padding: 8px 18px;
}}
QPushButton#SecondaryAction:hover {{ border-color: {ACCENT}; }}
QListWidget#RecentList {{ border: 1px solid #e2ded5; border-radius: 6px; background: white; }}
QListWidget#RecentList::item {{ padding: 8px 10px; border-bottom: 1px solid #f0ede6; }}
QListWidget#RecentList::item:hover {{ background: #f2f6f9; }}
QStatusBar QLabel {{ color: {MUTED}; padding: 0 8px; }}
"""


def calm_palette() -> QPalette:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Window, QColor("#f3f1ec"))
    palette.setColor(QPalette.ColorRole.WindowText, QColor(INK))
    palette.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    palette.setColor(QPalette.ColorRole.AlternateBase, QColor("#f7f5f0"))
    palette.setColor(QPalette.ColorRole.Text, QColor(INK))
    palette.setColor(QPalette.ColorRole.Button, QColor("#f1eee8"))
    palette.setColor(QPalette.ColorRole.ButtonText, QColor(INK))
    palette.setColor(QPalette.ColorRole.Highlight, QColor(ACCENT))
    palette.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    palette.setColor(QPalette.ColorRole.ToolTipBase, QColor("#fffdf5"))
    palette.setColor(QPalette.ColorRole.ToolTipText, QColor(INK))
    palette.setColor(QPalette.ColorRole.PlaceholderText, QColor("#9a9a9a"))
    palette.setColor(QPalette.ColorRole.Link, QColor(ACCENT))
    # Set without a group, the colours above hold for disabled widgets too, which then looked clickable.
    disabled = QColor("#a9a59c")
    for role in (QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText, QPalette.ColorRole.Text):
        palette.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return palette


def apply_theme(app: QApplication) -> None:
    """Fusion with a calm palette (the same on every OS), the CJK UI font and our style sheet."""
    fusion = QStyleFactory.create("Fusion")
    if fusion is not None:
        app.setStyle(fusion)
    app.setPalette(calm_palette())
    app.setFont(ui_font())
    app.setStyleSheet(STYLE_SHEET)
