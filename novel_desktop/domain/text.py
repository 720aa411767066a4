"""Character counting as a Chinese writer counts (字数)."""

from __future__ import annotations

import re

_CJK_RANGES = (
    (0x3400, 0x4DBF),  # Extension A
    (0x4E00, 0x9FFF),  # Unified Ideographs
    (0xF900, 0xFAFF),  # Compatibility Ideographs
    (0x20000, 0x2FA1F),  # Extensions B-F and compatibility supplement
    (0x30000, 0x323AF),  # Extensions G-H
)


def is_han(ch: str) -> bool:
    """True for a Han ideograph (including the 〇 used in numerals)."""
    cp = ord(ch)
    if ch == "〇":
        return True
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


def is_fullwidth_punct(ch: str) -> bool:
    """True for CJK and full-width punctuation (，。！？、；：“”‘’《》【】（）…—·「」『』 and the like)."""
    cp = ord(ch)
    if 0x3000 < cp <= 0x303F and ch != "〇":  # CJK symbols and punctuation (not the ideographic space)
        return True
    if 0xFF01 <= cp <= 0xFF60 or 0xFFE0 <= cp <= 0xFFE6:  # full-width forms
        return not ch.isalnum()
    if ch in "“”‘’…—·":
        return True
    return 0xFE30 <= cp <= 0xFE4F  # CJK compatibility forms (vertical punctuation)


# One unit of 字数: a Han character or a full-width punctuation mark, else a run of letters or digits
# (``[^\W_]`` is exactly ``str.isalnum``). The classes are those of is_han and is_fullwidth_punct.
_HAN_CLASS = "〇\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f\U00030000-\U000323af"
_PUNCT_CLASS = (
    "\u3001-\u3006\u3008-\u303f"  # CJK symbols and punctuation (not the space, not 〇)
    "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff60\uffe0-\uffe6"  # full-width, not letters/digits
    "“”‘’…—·\ufe30-\ufe4f"
)
_UNIT = re.compile(f"[{_HAN_CLASS}{_PUNCT_CLASS}]|[^\\W_{_HAN_CLASS}{_PUNCT_CLASS}]+")


def count_chars(text: str) -> int:
    """字数 as Chinese platforms count it.

    Han characters and full-width punctuation count one each; each run of Latin letters or digits counts as
    one (a word or a number is one unit, as a writer reads it); spaces, line breaks and markup do not count.
    (One regular expression: the editor recounts the whole chapter on every keystroke; ``findall`` is about
    twice as fast as counting ``finditer``'s match objects.)
    """
    return len(_UNIT.findall(text))
