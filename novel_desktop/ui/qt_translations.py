"""Qt's own translations (the standard buttons of message boxes and dialog button boxes, the file chooser), so
a Chinese window does not say "Close" or "Cancel"; an English window keeps Qt's English."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QTranslator

#: Qt's catalogue name for each UI language whose strings Qt does not already speak.
_QT_LOCALES = {"zh": "zh_CN"}

_installed: list[QTranslator] = []


def install_qt_translations(language: str) -> bool:
    """Load Qt's ``qtbase`` catalogue for ``language`` into the running application (replacing one loaded
    before); False when the language needs none or Qt ships no catalogue for it."""
    app = QCoreApplication.instance()
    if app is None:
        return False
    for old in _installed:
        app.removeTranslator(old)
    _installed.clear()
    locale = _QT_LOCALES.get(language)
    if locale is None:
        return False
    translator = QTranslator(app)
    folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    if not translator.load(f"qtbase_{locale}", folder):
        return False
    app.installTranslator(translator)
    _installed.append(translator)
    return True
