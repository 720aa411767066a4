"""The UI's languages: Simplified Chinese is the source language; English comes from catalogues.

Source strings in the code are Chinese. ``tr("续写")`` returns the English text from
``resources/i18n/en/*.json`` (one catalogue per module, merged) when English is selected.

A key means one thing in every catalogue (tests/ui/test_i18n_catalogue.py fails on a key translated two
ways). Where one Chinese word needs two English words by context, the catalogue holds ``"<text>#<context>"``
next to the plain key: ``tr("角色", "column")`` reads ``"角色#column"`` ("Character", one per row) and falls
back to ``"角色"`` ("Characters"). Plurals use the same mechanism: ``tr_n("{n} 章待重建", n)`` reads
``"{n} 章待重建#one"`` when ``n == 1`` and the plain key (the English "other" form) otherwise.
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


#: Separates a key from its context in the English catalogue ("角色#column").
CONTEXT_MARK = "#"
#: The context of the English singular form (n == 1) of a counted string.
ONE = "one"


def tr(text: str, context: str | None = None) -> str:
    """``text`` in the selected language (the Chinese source when no translation exists); ``context`` picks
    a catalogue entry ``text#context`` where the English differs by use, else the plain entry."""
    if _language == "zh":
        return text
    if context is not None:
        found = _catalog.get(f"{text}{CONTEXT_MARK}{context}")
        if found is not None:
            return found
    return _catalog.get(text, text)


def tr_n(text: str, n: int) -> str:
    """A template that counts ``n`` things, in the selected language and number: Chinese has one form; the
    English catalogue holds the "other" form under ``text`` and the singular under ``text#one``. The caller
    formats the template (``tr_n("{n} 章待重建", k).format(n=k)``)."""
    return tr(text, ONE if n == 1 else None)


def join_list(items: Iterable[str]) -> str:
    """Items of a list as the language lists them (第1章、第2章 / chapter 1, chapter 2)."""
    return tr("、").join(items)


def tr_phrase(phrase: tuple[str, dict[str, Any]]) -> str:
    """A core phrase (a template and its values, e.g. ``("规划第 {volume} 卷", {"volume": 2})``,
    domain/phrase.py) in the selected language; text values are translated too, and values that are phrases
    themselves."""
    template, values = phrase
    if not values:
        return tr(template)
    return tr(template).format(**{k: _tr_value(v) for k, v in values.items()})


def _tr_value(value: Any) -> Any:
    if isinstance(value, str):
        return tr(value)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict):  # a phrase itself
        return tr_phrase(value)
    return value


def tr_phrases(phrases: Iterable[tuple[str, dict[str, Any]]]) -> str:
    """Several phrases, joined as the language joins clauses."""
    return tr("；").join(tr_phrase(p) for p in phrases)


def paren(text: str) -> str:
    """``text`` in brackets as the language writes them after a word: 守灯（main_arc） / 守灯 (main_arc)."""
    return tr("（{x}）").format(x=text)


def labelled(label: str, text: str) -> str:
    """``label：text`` / ``label: text``."""
    return tr("{label}：{text}").format(label=label, text=text)
