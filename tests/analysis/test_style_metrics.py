"""Sentences, style metrics, sentence-shape repetition, profiles from samples and drift."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from novel_desktop.analysis.sentences import fast_count_chars, prose_lines, split_paragraphs, split_sentences
from novel_desktop.analysis.style_metrics import (
    StyleMetrics,
    _parallelisms,
    compute_metrics,
    drift,
    profile_from_samples,
)
from novel_desktop.domain.style import StyleProfile
from novel_desktop.domain.text import count_chars
from tests.conftest import CORPUS

MONOTONE = "他走进房间。他看向窗外。他拿起了桌上的杯子。他喝了一口水。他放下了杯子。"
VARIED = (
    "门开着。屋里一股药味，桌上的碗还冒着热气。“谁在里面？”林枫喊了一声。"
    "没人应。窗外的竹子被风吹得哗哗响，他把柴刀换到左手。"
)


def test_sentences_end_at_chinese_marks_and_keep_their_closing_quotes() -> None:
    text = "# 第一章\n\n　　他走了过去。“你来了？我等你很久了。”她说。\n「好……」\n"
    sentences = split_sentences(text)
    assert [s.text for s in sentences] == [
        "他走了过去。",
        "“你来了？",
        "我等你很久了。”",
        "她说。",
        "「好……」",
    ]
    assert [s.dialogue for s in sentences] == [False, True, True, False, True]
    for s in sentences:
        assert text[s.start : s.end] == s.text
    assert "第一章" not in "".join(s.text for s in sentences)  # headings are not prose


def test_paragraphs_are_lines_of_prose() -> None:
    paragraphs = split_paragraphs("# 标题\n\n第一段。\n\n　　第二段，长一点。\n")
    assert [p.chars for p in paragraphs] == [4, 8]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("林枫说。，“”！a1Ｂ２〇 \n\t…—·𠀀﹐abc_")), max_size=60))
def test_the_fast_count_is_the_writers_count(text: str) -> None:
    assert fast_count_chars(text) == count_chars(text)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80))
def test_the_fast_count_agrees_on_any_text(text: str) -> None:
    assert fast_count_chars(text) == count_chars(text)


def test_metrics_a_reader_would_recognise() -> None:
    text = "“走！”他说。\n她像一只猫一样跳上墙。难道你不知道吗？\n" + "长" * 200 + "。\n"
    m = compute_metrics(text)
    assert m.sentence_count == 5
    assert m.dialogue_chars == 4  # “走！”
    assert 0 < m.dialogue_ratio < 0.05
    assert m.exclamations == 1 and m.questions == 1 and m.rhetorical_questions == 1
    assert m.similes == 1
    assert m.paragraph_count == 3 and m.long_paragraphs == 1
    assert m.long_paragraph_share == 1 / 3


def test_five_sentences_of_the_same_shape_are_reported_with_their_position() -> None:
    text = "林枫深吸一口气，推开了门。\n" + MONOTONE + "\n“你来了。”陈老说。\n"
    m = compute_metrics(text)
    assert len(m.repetitions) == 1
    finding = m.repetitions[0]
    assert text[finding.start : finding.end].startswith("他走进房间")
    assert "他喝了一口水。" in finding.examples
    assert "句式" in finding.describe()
    assert m.repetition_window_share > 0


def test_varied_prose_has_no_repeated_patterns() -> None:
    assert compute_metrics(VARIED).repetitions == ()


def test_a_classical_novel_has_few_repeated_windows() -> None:
    text = (CORPUS / "ershinian_pg24099_ch01-10.txt").read_text(encoding="utf-8")
    m = compute_metrics(text)
    assert m.repetition_window_share < 0.1
    assert 10 < m.avg_sentence_length < 40
    assert 0.2 < m.dialogue_ratio < 0.9  # the narrator retells long conversations in 「」


def test_metrics_survive_json_and_combine_as_one_text() -> None:
    a, b = compute_metrics(MONOTONE), compute_metrics(VARIED)
    assert StyleMetrics.from_json(a.to_json()) == a
    both = StyleMetrics.combine([a, b])
    assert both.sentence_count == a.sentence_count + b.sentence_count
    assert both.chars == a.chars + b.chars
    lo, hi = sorted([a.avg_sentence_length, b.avg_sentence_length])
    assert lo <= both.avg_sentence_length <= hi


def test_a_profile_from_samples_is_a_valid_seed_style_profile() -> None:
    sample = (CORPUS / "aq_zhengzhuan_pg25332_excerpt.txt").read_text(encoding="utf-8")
    half = len(sample) // 2
    profile = profile_from_samples([sample[:half], sample[half:]])
    assert profile.source_type == "original"
    assert profile.avg_sentence_length > 5
    assert 0 <= profile.dialogue_ratio <= 1
    assert profile.rhetoric_preferences and profile.writing_directives
    assert any("句长" in d for d in profile.writing_directives)
    assert profile.forbidden_words and all(w not in sample for w in profile.forbidden_words)
    again = StyleProfile.model_validate(profile.to_json_dict())
    assert again.to_json_dict() == profile.to_json_dict()


def test_forbidden_words_leave_out_phrases_the_author_uses() -> None:
    profile = profile_from_samples(["他嘴角微微上扬，不禁笑了。" * 5], max_forbidden=500)
    assert "嘴角微微上扬" not in profile.forbidden_words
    assert "不禁" not in profile.forbidden_words
    assert "五味杂陈" in profile.forbidden_words


def test_drift_reports_longer_sentences_and_nothing_for_the_same_style() -> None:
    short = compute_metrics(VARIED * 5)
    long_text = (
        "他沿着被雨水打湿的青石台阶一级一级地往上走，一直走到山门前那棵据说有三百年的老松树底下才停住脚步。"
        * 10
    )
    items = drift(short, compute_metrics(long_text))
    by_metric = {i.metric: i for i in items}
    assert by_metric["avg_sentence_length"].direction == "up"
    assert "句" in by_metric["avg_sentence_length"].message
    assert drift(short, compute_metrics(VARIED * 5)) == []


def test_drift_against_a_profile_uses_its_measured_metrics() -> None:
    profile = profile_from_samples([VARIED * 5])
    talkative = compute_metrics("“你好。”“你也好。”“吃了吗？”“吃了。”\n" * 20)
    metrics = {i.metric for i in drift(profile, talkative)}
    assert "dialogue_ratio" in metrics
    bare = StyleProfile(avg_sentence_length=10, dialogue_ratio=0.1)
    assert {i.metric for i in drift(bare, talkative)} <= {"avg_sentence_length", "dialogue_ratio"}


def test_similes_are_counted_where_像_compares() -> None:
    # 像 compares, but not in 图像/好像/像素 (the look-behind stands after 像, so a search skips to 像 in C).
    text = "像风一样。他好像没来。图像模糊，像素很低。她仿佛睡着了，宛如一幅画，像一只猫。"
    assert compute_metrics(text).similes == 4
    assert compute_metrics("像").similes == 1


def _parallelisms_one_by_one(text: str, paragraphs: list[tuple[int, int]]) -> int:
    """Runs of three clauses with the same first two characters, counted paragraph by paragraph."""
    count = 0
    for start, end in paragraphs:
        clauses = [c.strip(' \u3000“”「」"') for c in re.split(r"[，,；;。！？!?：:]", text[start:end])]
        run, prev = 1, ""
        for clause in clauses:
            head = clause[:2] if len(clause) >= 3 else ""
            if head and head == prev:
                run += 1
                count += run == 3
            else:
                run = 1
            prev = head
    return count


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from([*'。，；！？:," \u3000“”「\n\t#\u2028', "他说", "他走", "她", "ab", "## ", "\r\n"]),
        max_size=40,
    )
)
def test_parallelisms_found_by_one_scan_are_those_counted_paragraph_by_paragraph(pieces: list[str]) -> None:
    text = "".join(pieces)
    paragraphs = prose_lines(text)
    assert _parallelisms(text, paragraphs) == _parallelisms_one_by_one(text, paragraphs)
    assert (
        _parallelisms("他说了话，他说了谎，他说了算。\n他说了话，他说了谎，他说了算。", [(0, 15), (16, 31)])
        == 2
    )
