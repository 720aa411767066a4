"""The AI-phrase list: what it flags, where, and how a novel adds and removes phrases."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novel_desktop.analysis.ai_phrases import (
    CUSTOM_CATEGORY,
    find_hits,
    hits_by_category,
    hits_per_1k,
    load_default_phrases,
    phrases_for_novel,
)
from novel_desktop.analysis.phrase_scan import PhrasePlan, required_clauses
from novel_desktop.domain.style import AiBlacklist
from tests.conftest import CORPUS, FIXTURES

AI_PARAGRAPH = (
    "林枫嘴角微微上扬，勾起一抹意味深长的笑。苏瑶眼中闪过一丝慌乱，不是因为害怕，而是因为期待。"
    "空气仿佛凝固了。他深吸一口气，心中涌起一股莫名的暖流。这一刻，他终于明白了。"
)


def test_the_shipped_list_has_150_entries_each_with_a_category_and_a_direction() -> None:
    phrases = load_default_phrases()
    assert len(phrases) >= 150
    assert len({p.pattern for p in phrases}) == len(phrases)
    for p in phrases:
        assert p.category.strip() and p.suggestion.strip(), p.pattern
    categories = {p.category for p in phrases}
    assert {"神态套话", "比喻滥用", "情绪直述", "转折句式", "总结升华", "程度副词"} <= categories
    assert any(p.regex for p in phrases) and any(not p.regex for p in phrases)


def test_typical_llm_phrases_are_found_with_offsets_an_editor_can_underline() -> None:
    hits = find_hits(AI_PARAGRAPH, load_default_phrases())
    matched = [h.matched for h in hits]
    assert "嘴角微微上扬" in matched
    assert any(m.startswith("眼中闪过一丝慌乱") for m in matched)
    assert any(m.startswith("不是因为害怕") and m.endswith("而是") for m in matched)
    assert any(m.startswith("空气仿佛凝固") for m in matched)
    assert any("深吸一口气" in m for m in matched)
    assert any(m.startswith("心中涌起一股") for m in matched)
    for hit in hits:
        assert AI_PARAGRAPH[hit.start : hit.end] == hit.matched
        assert hit.suggestion
    assert hits_per_1k(AI_PARAGRAPH, hits) > 3  # far over the seed's limit


def test_a_cliche_covered_by_a_literal_and_a_template_counts_once() -> None:
    text = "他嘴角微微上扬。"
    hits = find_hits(text, load_default_phrases())
    assert [h.matched for h in hits if "嘴角" in h.matched] == ["嘴角微微上扬"]


def test_human_prose_stays_under_the_seeds_limit() -> None:
    text = (CORPUS / "aq_zhengzhuan_pg25332_excerpt.txt").read_text(encoding="utf-8")
    hits = find_hits(text, load_default_phrases())
    assert hits_per_1k(text, hits) < 3


def test_hits_per_1k_counts_chars_as_a_writer_does() -> None:
    text = "不禁" + "好" * 998  # 1000 字, one hit
    assert hits_per_1k(text, find_hits(text, load_default_phrases())) == 1.0
    assert hits_per_1k("", []) == 0.0


def test_the_novels_own_additions_and_removals_apply() -> None:
    blacklist = {
        "words": ["不禁"],
        "categories": {"口癖": ["说白了"]},
        "custom_added": ["一股暖流", "re:冷冷地?(说|道)"],
        "custom_removed": ["嘴角微微上扬", "微微"],
    }
    phrases = phrases_for_novel(blacklist)
    text = "他嘴角微微上扬，冷冷道：“说白了，你不行。”"
    hits = find_hits(text, phrases)
    matched = {h.matched: h.category for h in hits}
    assert "嘴角微微上扬" not in matched and "微微" not in matched  # the author's own style now
    assert matched["说白了"] == "口癖"
    assert matched["冷冷道"] == CUSTOM_CATEGORY
    # The same text against the shipped list alone does flag the smile.
    assert any(h.matched == "嘴角微微上扬" for h in find_hits(text, load_default_phrases()))


def test_the_seed_project_blacklist_and_a_plain_list_are_read() -> None:
    data = json.loads((FIXTURES / "seed_project" / "ai-blacklist.json").read_text(encoding="utf-8"))
    phrases = phrases_for_novel(AiBlacklist.model_validate(data))
    patterns = {p.pattern for p in phrases}
    assert "深邃的眼眸" in patterns and "一股暖流" in patterns
    assert "仿佛" not in patterns  # custom_removed
    assert not find_hits("她仿佛睡着了。", [p for p in phrases if p.pattern == "仿佛"])
    assert "独门套话" in {p.pattern for p in phrases_for_novel(["独门套话"])}


def test_a_broken_regex_typed_by_the_author_is_taken_literally() -> None:
    phrases = phrases_for_novel({"custom_added": ["re:(坏了"]})
    assert find_hits("这下re:(坏了", phrases)[-1].matched == "re:(坏了"


def test_hits_by_category_counts_most_first() -> None:
    counts = hits_by_category(find_hits(AI_PARAGRAPH, load_default_phrases()))
    assert list(counts.values()) == sorted(counts.values(), reverse=True)
    assert sum(counts.values()) == len(find_hits(AI_PARAGRAPH, load_default_phrases()))


_PIECES = st.sampled_from(
    ["嘴角微微上扬", "不是", "而是", "仿佛", "一般", "，", "。", "他", "眼中闪过一丝", "\n", "微微"]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_hits_are_in_order_do_not_overlap_and_slice_the_text(text: str) -> None:
    hits = find_hits(text, load_default_phrases())
    last = 0
    for hit in hits:
        assert hit.start >= last
        assert text[hit.start : hit.end] == hit.matched
        last = hit.end
    for p in load_default_phrases():
        if p.regex:
            re.compile(p.pattern)


def test_skipping_phrases_whose_required_text_is_absent_finds_the_same_hits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from novel_desktop.analysis import ai_phrases

    text = (
        "几乎是一瞬间，他愣住了。令人没想到的是，她并没有回答，只是深深地吸了一口气。"
        "眼中闪过一丝狡黠。一切都仿佛回到了原点。他终于明白了。既是师父也是父亲。"
        "一瞬间。没想到的是。他深吸一口气，如同一把利刃。\n"
    ) * 3
    phrases = phrases_for_novel(
        {
            "custom_added": [
                "re:(?i)AB+c",
                "re:好|坏",
                "一瞬",
                "re:(?i:x)(难以置信|不可思议)地",
                "re:(断了?线|破布)的",
            ]
        }
    )
    fast = find_hits(text + "abbC好X不可思议地断线的", phrases)
    assert required_clauses("(几乎是)?一瞬间", True) == (("一瞬间",),)
    assert required_clauses("好|坏", True) == ()  # an alternative at the top: nothing is required
    # A group of alternatives requires one of them (an alternative's longest plain run stands for it).
    assert required_clauses("(难以置信|不可思议)地", True) == (("难以置信", "不可思议"), ("地",))
    assert required_clauses("(断了?线的风筝|破布娃娃)", True) == (("线的风筝", "破布娃娃"),)
    assert required_clauses("(?i:ab)c", True) == (("c",),)  # a group with flags of its own: unknown
    assert required_clauses("(a|b.*)c", True) == (("a", "b"), ("c",))
    assert required_clauses("(a|.*)c", True) == (("c",),)  # an alternative without plain text: unknown

    class Everything:
        def candidates(self, _text: str) -> range:
            return range(len(phrases))

    monkeypatch.setattr(ai_phrases, "plan_for", lambda _key: Everything())
    assert find_hits(text + "abbC好X不可思议地断线的", phrases) == fast
    assert {"abbC", "X不可思议地", "断线的"} <= {h.matched for h in fast}
    assert len(fast) > 10


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet="ab]^-\\[一瞬间.", min_size=1, max_size=4), min_size=1, max_size=12),
    st.text(alphabet="ab]^-\\[一瞬间.x", max_size=40),
)
def test_the_plan_finds_the_strings_a_text_contains(strings: list[str], text: str) -> None:
    # The one-pass scan (a look-ahead on two character sets, then a trie) finds exactly the required
    # strings one `in` test per string finds, also with characters that mean something in a character set.
    plan = PhrasePlan([(s, False) for s in strings])
    assert plan.present(text) == {s for s in strings if s in text}
