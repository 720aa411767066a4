"""The UI's languages: Simplified Chinese is the source language; English comes from catalogues.

Source strings in the code are Chinese. ``tr("续写")`` returns the English text from
``resources/i18n/en/*.json`` (one catalogue per module, merged) when English is selected.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from novel_desktop.paths import resource

_language = "zh"
_catalog: dict[str, str] = {}


def set_language(language: str) -> None:
    """Select "zh" (default) or "en"; an unknown language falls back to Chinese."""
    global _language, _catalog
    _language = language if language in ("zh", "en") else "zh"
    _catalog = {}
    if _language == "en":
        folder = resource("i18n", "en")
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            _catalog.update(json.loads(path.read_text(encoding="utf-8")))


def language() -> str:
    return _language


def tr(text: str) -> str:
    """``text`` in the selected language (the Chinese source when no translation exists)."""
    if _language == "zh":
        return text
    return _catalog.get(text, text)


def tr_phrase(phrase: tuple[str, dict[str, Any]]) -> str:
    """A core phrase (a template and its values, e.g. ``("规划第 {volume} 卷", {"volume": 2})``) in the
    selected language; text values are translated too."""
    template, values = phrase
    return tr(template).format(**{k: tr(v) if isinstance(v, str) else v for k, v in values.items()})


def tr_phrases(phrases: Iterable[tuple[str, dict[str, Any]]]) -> str:
    """Several phrases, joined as the language joins clauses."""
    return tr("；").join(tr_phrase(p) for p in phrases)
