"""The English catalogues as a whole: one meaning per key, counts that read right, ASCII punctuation.

The catalogues (resources/i18n/en/*.json, one per module) are merged at run time, so a key translated two
ways in two files would silently take the later file's English; a context (``key#context``) or one agreed
translation keeps each key unambiguous. Plurals: a value that counts one slot ("{n} chapters") has a
``key#one`` entry for n == 1; a value counting several reads "Chapters: {k}" instead.
"""

from __future__ import annotations

import json
import re
import string
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from novel_desktop import i18n
from novel_desktop.paths import resource

ROOT = Path(__file__).resolve().parents[2]
#: Full-width punctuation (and the ideographic space) that has no place in English text.
FULL_WIDTH = set("，。：；！？（）「」『』【】、　")
#: Nouns an English count is followed by; "{n} chapters" needs its singular for n == 1.
NOUNS = (
    "chapters|characters|chars|volumes|questions|calls|phrases|times|hits|occurrences|prompts|places|"
    "paragraphs|suggestions|issues|storylines|convergences|documents|attempts|minutes|days|items|entries|"
    "files|threads|words|rows|samples|agents|problems|proposals|settings|rules|objectives|versions"
)
COUNTED = re.compile(r"\{(\w+)(?:[:!][^}]*)?\}\)?\s+(?:[a-z-]+\s+)?(" + NOUNS + r")\b")


def _files() -> list[Path]:
    return sorted(resource("i18n", "en").glob("*.json"))


def _merged() -> dict[str, str]:
    merged: dict[str, str] = {}
    for path in _files():
        merged.update(json.loads(path.read_text(encoding="utf-8")))
    return merged


def _slots(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.fixture
def english() -> Iterator[None]:
    i18n.set_language("en")
    yield
    i18n.set_language("zh")


def test_no_key_is_translated_two_ways() -> None:
    seen: dict[str, dict[str, str]] = defaultdict(dict)
    for path in _files():
        for key, value in json.loads(path.read_text(encoding="utf-8")).items():
            seen[key][path.name] = value
    conflicts = {key: files for key, files in seen.items() if len(set(files.values())) > 1}
    assert conflicts == {}


def test_every_english_value_is_a_string_in_ascii_punctuation() -> None:
    bad = {
        key: value
        for key, value in _merged().items()
        if not isinstance(value, str) or any(ch in FULL_WIDTH for ch in value)
    }
    assert bad == {}


def test_a_context_entry_has_its_plain_entry_and_the_same_slots() -> None:
    merged = _merged()
    contexts = [key for key in merged if i18n.CONTEXT_MARK in key and key.rsplit("#", 1)[0] in merged]
    assert any(key.endswith("#one") for key in contexts)
    for key, value in merged.items():
        base, mark, _context = key.rpartition(i18n.CONTEXT_MARK)
        if mark and base in merged:
            assert _slots(value) == _slots(merged[base]), key


def test_a_count_in_english_has_its_singular() -> None:
    """ "1 chapters" never: a value counting one slot has a #one form; one counting several is rephrased."""
    merged = _merged()
    wrong: list[str] = []
    for key, value in merged.items():
        if key.endswith("#one"):
            continue
        counted = {m.group(1) for m in COUNTED.finditer(value)}
        if len(counted) > 1:
            wrong.append(f"{key}: counts {sorted(counted)}; write 'Chapters: {{k}}'")
        elif counted and f"{key}#one" not in merged:
            wrong.append(f"{key}: no {key}#one")
    assert wrong == []


def test_counted_labels_at_one_and_two(english: None) -> None:
    merged = _merged()
    plural = sorted(key.removesuffix("#one") for key in merged if key.endswith("#one"))
    assert len(plural) >= 20
    for key in plural:
        for n in (1, 2):
            text = i18n.tr_n(key, n)
            slots = _slots(text)
            values = dict.fromkeys(slots, n)
            shown = text.format(**values) if all(s.isidentifier() for s in slots) else text
            if n == 1:
                assert not re.search(r"\b1\s+(?:[a-z-]+\s+)?(" + NOUNS + r")\b", shown), (key, shown)
            else:
                assert text == merged[key]


def test_chinese_has_one_form_for_every_count() -> None:
    assert i18n.tr_n("{n} 章待重建", 1) == "{n} 章待重建"
    assert i18n.tr_n("{n} 章待重建", 2) == "{n} 章待重建"
    assert i18n.join_list(["第1章", "第2章"]) == "第1章、第2章"


def test_plural_and_context_in_english(english: None) -> None:
    assert i18n.tr_n("{n} 章待重建", 1).format(n=1) == "1 chapter to rebuild"
    assert i18n.tr_n("{n} 章待重建", 2).format(n=2) == "2 chapters to rebuild"
    assert i18n.tr("角色") == "Characters"
    assert i18n.tr("角色", i18n.ONE) == "Character"
    assert i18n.tr("摘要") == "Summary"
    assert i18n.join_list(["chapter 1", "chapter 2"]) == "chapter 1, chapter 2"


def test_every_counted_call_in_the_code_has_a_singular() -> None:
    """tr_n("…", n) in the code names a key whose English has both forms."""
    merged = _merged()
    missing: list[str] = []
    calls = 0
    for path in (ROOT / "novel_desktop").rglob("*.py"):
        for m in re.finditer(r'tr_n\(\s*"((?:[^"\\]|\\.)*)"', path.read_text("utf-8")):
            calls += 1
            key = m.group(1)
            if key not in merged or f"{key}#one" not in merged:
                missing.append(f"{path.name}: {key}")
    assert calls >= 20
    assert missing == []


def test_no_chinese_punctuation_is_joined_around_translated_text() -> None:
    """Separators built in ui/ and controllers/ come from tr() (i18n.join_list, paren, labelled, tr("：")...),
    so English text never carries a full-width 、，；：（） between translated parts."""
    joins = re.compile(
        r"""["'][、，；：　]["']\s*\.join|\+\s*["'][、，；：　]["']|["'][、，；：　]["']\s*\+"""
    )
    formatted = re.compile(
        r"""\bf"[^"]*[（）：，；、「」【】　][^"]*"|\bf'[^']*[（）：，；、「」【】　][^']*'"""
    )
    #: The search hit marked inside the novel's own (Chinese) text, not UI text.
    allowed = {"find_replace.py": "【{m.group(0)}】"}
    found: list[str] = []
    for folder in ("ui", "controllers"):
        for path in (ROOT / "novel_desktop" / folder).rglob("*.py"):
            for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
                if line.lstrip().startswith("#") or allowed.get(path.name, "\0") in line:
                    continue
                if joins.search(line) or formatted.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_brackets_and_labels_in_english(english: None) -> None:
    assert i18n.paren("main_arc") == " (main_arc)"
    assert i18n.labelled("F-001", "the jade") == "F-001: the jade"


def test_brackets_and_labels_in_chinese() -> None:
    assert i18n.paren("main_arc") == "（main_arc）"
    assert i18n.labelled("F-001", "残玉") == "F-001：残玉"
