"""The columnar measure gives the numbers the readable reference (sentence objects, then shapes, then
windows) gives: on any text, a classical novel's chapters and the edge cases of sentence splitting."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from novel_desktop.analysis import segment
from novel_desktop.analysis.sentences import (
    _UNIT_RE,
    _WORD_CHAR_RE,
    dialogue_spans,
    fast_count_chars,
    prose_lines,
    split_paragraphs,
    split_sentences,
)
from novel_desktop.analysis.style_metrics import (
    _RHETORICAL_RE,
    _SIMILE_RE,
    MAX_REPEATS,
    MIN_SHAPED_LENGTH,
    MOBILE_PARAGRAPH_LIMIT,
    SHORT_SENTENCE,
    WINDOW,
    StyleMetrics,
    _parallelisms,
    compute_metrics,
    find_repetitions,
    sentence_shapes,
)
from novel_desktop.analysis.text_measure import _NOT_UNIT_RE, _NOT_WORD_CHAR_RE, _count
from tests.conftest import CORPUS


def reference(text: str) -> StyleMetrics:
    """The metrics measured the readable way (what ``compute_metrics`` did before it measured in columns)."""
    tokens = segment.tokenize(text)
    dialogue = dialogue_spans(text)
    lines = prose_lines(text)
    sentences = split_sentences(text, dialogue, lines)
    paragraphs = split_paragraphs(text, lines)
    windows, repeated, findings = find_repetitions(sentences, sentence_shapes(sentences, tokens))
    return StyleMetrics(
        chars=fast_count_chars(text),
        sentence_count=len(sentences),
        sentence_chars=sum(s.length for s in sentences),
        short_sentences=sum(1 for s in sentences if s.length <= SHORT_SENTENCE),
        dialogue_chars=sum(fast_count_chars(text[a:b]) for a, b in dialogue),
        paragraph_count=len(paragraphs),
        paragraph_chars=sum(p.chars for p in paragraphs),
        long_paragraphs=sum(1 for p in paragraphs if p.chars > MOBILE_PARAGRAPH_LIMIT),
        max_paragraph_chars=max((p.chars for p in paragraphs), default=0),
        similes=len(_SIMILE_RE.findall(text)),
        parallelisms=_parallelisms(text, [(p.start, p.end) for p in paragraphs]),
        rhetorical_questions=sum(
            1 for s in sentences if s.ending == "？" and _RHETORICAL_RE.search(s.text) is not None
        ),
        exclamations=sum(1 for s in sentences if s.ending == "！"),
        questions=sum(1 for s in sentences if s.ending == "？"),
        windows=windows,
        repeated_windows=repeated,
        repetitions=tuple(findings),
    )


def measured(text: str) -> StyleMetrics:
    return compute_metrics(text, segment.tokenize(text))


EDGES = [
    "",
    "\n\n",
    "# 第一章 标题\n　　他走了。\n## 不是标题#\n#没有空格\n",
    "  。。  ！他说？」“好”  \n  \t你呢……」』 \n\u3000\u3000她笑了；是吗?!\r\nabc def。123！",
    "“走！”他说。“你来了？我等你很久了。”她说。\n「好……」\n他走进房间。他看向窗外。他拿起了杯子。他喝了水。他放下了杯子。",
    "他说：“未完的引号\n下一行。”又一句！﹗﹖﹔﹒\n" + "他走进房间。" * 8,
]


def test_edge_cases_measure_the_same() -> None:
    assert MIN_SHAPED_LENGTH and WINDOW and MAX_REPEATS >= 0
    for text in EDGES:
        assert measured(text) == reference(text), text


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "他",
                "走进",
                "房间",
                "。",
                "！",
                "？",
                "…",
                "；",
                "“",
                "”",
                "「",
                "」",
                "\n",
                " ",
                "\u3000",
                "#",
                "## ",
                "ab",
                "12",
                "像",
                "难道",
                "吗",
                "林枫",
                "说",
                "，",
                "：",
                "萧",
                "无尘",
                "?",
                "!",
                '"',
                "’",
            ]
        ),
        max_size=80,
    )
)
def test_any_text_measures_the_same(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert measured(text) == reference(text)


def test_a_classical_novels_chapters_measure_the_same() -> None:
    text = (CORPUS / "ershinian_pg24099_ch01-10.txt").read_text(encoding="utf-8")
    for chapter in text.split("第")[:12]:
        assert measured(chapter) == reference(chapter)


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            list("行者師父〇々〆ー。，“”！…ab_Z12０ａＡかナ한 \n\r\t\u3000\u2028\U00020000😀é-")
        ),
        max_size=40,
    ),
    st.integers(0, 40),
    st.integers(0, 40),
)
def test_counting_by_the_complement_counts_what_the_pattern_finds(text: str, a: int, b: int) -> None:
    # The measure counts 字 and a sentence's length from what the two patterns do not find (one string per
    # mark or run instead of one per 汉字); on any stretch of any text that is the same count.
    start, end = sorted((min(a, len(text)), min(b, len(text))))
    for pattern, complement in ((_UNIT_RE, _NOT_UNIT_RE), (_WORD_CHAR_RE, _NOT_WORD_CHAR_RE)):
        expected = len(pattern.findall(text, start, end))
        assert _count(complement.findall(text, start, end), end - start) == expected
