"""Arbitrary text never loses characters through split_manuscript."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from novel_desktop.analysis.manuscript import split_manuscript

# Lines built from the pieces headings are made of, so that the splitter's every branch is exercised.
FRAGMENTS = st.sampled_from(
    [
        "第",
        "章",
        "回",
        "节",
        "卷",
        "一",
        "十",
        "八",
        "○",
        "两",
        "百",
        "1",
        "２",
        " ",
        "\u3000",
        "：",
        "楔子",
        "序章",
        "尾声",
        "番外",
        "全书完",
        "（全书完）",
        "《书》至此終。",
        "里",
        "，",
        "。",
        "#",
        "【",
        "】",
        "End of the Project Gutenberg",
        "\r",
        "\t",
        "正文",
        "他",
        "abc",
    ]
)
LINES = st.one_of(
    st.lists(FRAGMENTS, max_size=8).map("".join),
    st.sampled_from(["第1章 开始", "第一卷 上", "第2章 重逢", "楔子", "番外一 后来", "（全书完）", ""]),
    st.text(max_size=20),
)


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


@settings(max_examples=400, deadline=None)
@given(st.lists(LINES, max_size=30).map("\n".join))
def test_split_loses_no_characters(text: str) -> None:
    result = split_manuscript(text)
    assert squeeze("".join(result.pieces())) == squeeze(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(LINES, max_size=30).map("\n".join))
def test_chapter_numbers_are_unique_and_rising(text: str) -> None:
    numbers = [c.number for c in split_manuscript(text).chapters]
    assert numbers == sorted(set(numbers))
    assert all(n >= 0 for n in numbers)
