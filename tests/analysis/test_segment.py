"""Segmentation line by line with a line cache: the same words as jieba on the whole text, and an edit of one
paragraph segments that paragraph only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jieba
import jieba.posseg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novel_desktop.analysis import segment

CHAPTER = (
    "第一回 靈根育孕源流出\n\n"
    "　　詩曰：混沌未分天地亂，茫茫渺渺無人見。\r\n"
    "　　行者道：“師父，你看那山。”三藏在馬上笑道：“悟空，你又來了。”\n"
    "\n"
    "　　Chapter 2 of 孫悟空: 72 變, 100% done.\n"
)


def _words(text: str) -> list[tuple[str, int, int]]:
    return [(t.word, t.start, t.end) for t in segment.tokenize(text)]


@pytest.fixture
def cut_log(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The texts jieba is asked to cut, with a cold line cache."""
    segment.clear_line_cache()
    seen: list[str] = []
    real = segment._jieba()

    class Spy:
        def cut(self, text: str, **kwargs: Any) -> Any:
            seen.append(text)
            return real.cut(text, **kwargs)

    monkeypatch.setattr(segment, "_jieba", lambda: Spy())
    yield seen
    segment.clear_line_cache()


def test_words_and_offsets_are_jiebas_on_the_whole_text() -> None:
    segment.clear_line_cache()
    assert _words(CHAPTER) == list(jieba.tokenize(CHAPTER, HMM=True))
    assert _words(CHAPTER) == list(jieba.tokenize(CHAPTER, HMM=True))  # from the cache this time
    tokens = segment.tokenize(CHAPTER)
    assert "".join(t.word for t in tokens) == CHAPTER
    # dictionary tags come along
    assert {t.word: t.tag for t in tokens}["三藏"] == jieba.posseg.dt.word_tag_tab["三藏"] != ""


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("行者師父道悟空三藏。，“”！ab12 \n\r\t\x0b\u2028　")), max_size=80)
)
def test_any_text_segments_as_jieba_does(text: str) -> None:
    assert _words(text) == list(jieba.tokenize(text, HMM=True))


def test_an_edit_of_one_paragraph_segments_that_paragraph_only(cut_log: list[str]) -> None:
    segment.tokenize(CHAPTER)
    assert cut_log == list(dict.fromkeys(CHAPTER.splitlines(keepends=True)))  # the blank line once
    cut_log.clear()
    edited = CHAPTER.replace("你看那山", "你看那座山")
    tokens = segment.tokenize(edited)
    assert cut_log == ["　　行者道：“師父，你看那座山。”三藏在馬上笑道：“悟空，你又來了。”\n"]
    assert [(t.word, t.start, t.end) for t in tokens] == list(jieba.tokenize(edited, HMM=True))


def test_the_line_cache_is_bounded(cut_log: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(segment, "LINE_CACHE_CHARS", 400)
    lines = [f"第{i}行，行者又翻了一個筋斗。\n" for i in range(40)]
    segment.tokenize("".join(lines))
    cut_log.clear()
    segment.tokenize(lines[-1])  # recent: remembered
    assert cut_log == []
    segment.tokenize(lines[0])  # long evicted: cut again
    assert cut_log == [lines[0]]
