"""Segmentation with rjieba: the words, offsets and dictionary tags pure-Python jieba gave, and what the
analysis derives from them (names found, AI-phrase hits, style metrics) unchanged by the switch.

The expected values below were produced by the jieba-based segmenter (jieba 0.42.1, ``jieba.cut`` with HMM
and ``posseg.dt.word_tag_tab`` tags) on the same text, when the analysis moved to rjieba.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novel_desktop.analysis import segment
from novel_desktop.analysis.ai_phrases import find_hits, phrases_for_novel
from novel_desktop.analysis.entities import EntityRecords, proper_noun_candidates
from novel_desktop.analysis.novel_analysis import NovelAnalyzer
from novel_desktop.analysis.style_metrics import compute_metrics
from novel_desktop.domain.characters import Character

FIXTURE = (
    "第一章 青云山下\n\n"
    "萧无尘站在青云山脚下，抬头望着云雾缭绕的山门。\n"
    "“师兄，天剑宗的人来了。”林枫快步走来，压低了声音。\n"
    "萧无尘嘴角微微上扬，眼中闪过一丝狡黠：“来得正好。”\n"
    "陈老从殿内走出，冷笑道：“区区天剑宗，也敢来青云山撒野？”\n"
    "苏瑶没有说话。她握紧了剑，指节发白。\n"
    "林枫深吸一口气，心中五味杂陈。萧无尘拍了拍他的肩膀。\n"
    "远处的洛阳城灯火通明，仿佛一切都与这里无关。\n"
)

#: jieba's words of FIXTURE, joined with "|".
JIEBA_CUT = (
    "第一章| |青云山|下|\n|\n|萧|无尘|站|在|青云|山脚下|，|抬头|望|着|云雾|缭绕|的|山门|。|\n|“|师兄|，|天|剑宗|"
    "的|人来|了|。|”|林枫|快步|走来|，|压低|了|声音|。|\n|萧|无尘|嘴角|微微|上扬|，|眼中|闪过|一丝|狡黠|：|“|来得|"
    "正好|。|”|\n|陈老|从|殿内|走出|，|冷笑|道|：|“|区区|天|剑宗|，|也|敢|来|青云山|撒野|？|”|\n|苏瑶|没有|说话|。|"
    "她|握紧|了|剑|，|指节|发白|。|\n|林枫|深吸|一口气|，|心中|五味杂陈|。|萧|无尘|拍了拍|他|的|肩膀|。|\n|远处|的|"
    "洛阳城|灯火通明|，|仿佛|一切|都|与|这里|无关|。|\n"
)
#: jieba's dictionary tags of those words ("-": not in the dictionary).
JIEBA_TAGS = (
    "m - ns f - - nr n v p ns s - v v uz n v uj ns - - - nr - q nz uj - ul - - - d v - v ul n - - nr n n d v - s "
    "v m a - - v a - - - - p s v - nr q - - n q nz - d v v ns nrt - - - - v v - r v ul n - n v - - - - i - s l - "
    "nr n v r uj n - - s uj ns n - d r d p r v - -"
)


def test_words_offsets_and_tags_are_jiebas() -> None:
    tokens = segment.tokenize(FIXTURE)
    assert "|".join(tokens.words) == JIEBA_CUT
    assert " ".join(tag or "-" for tag in tokens.tags) == JIEBA_TAGS
    assert [(t.word, t.start, t.end) for t in tokens] == [
        (w, s, e) for w, s, e in zip(tokens.words, tokens.starts, tokens.starts[1:], strict=False)
    ]
    assert all(FIXTURE[t.start : t.end] == t.word for t in tokens)
    assert tokens[-1] == segment.Token("\n", len(FIXTURE) - 1, len(FIXTURE), "")
    assert tokens[6:8] == [segment.Token("萧", 10, 11, "nr"), segment.Token("无尘", 11, 13, "n")]
    with pytest.raises(IndexError):
        tokens[len(tokens)]


#: Traditional script, a CRLF, full-width spaces and ASCII words and numbers.
TRADITIONAL = (
    "第一回 靈根育孕源流出\n\n"
    "　　詩曰：混沌未分天地亂，茫茫渺渺無人見。\r\n"
    "　　行者道：“師父，你看那山。”三藏在馬上笑道：“悟空，你又來了。”\n"
    "\n"
    "　　Chapter 2 of 孫悟空: 72 變, 100% done.\n"
)
TRADITIONAL_CUT = (
    "第一回| |靈根育孕|源流|出|\n|\n|　|　|詩曰|：|混沌|未|分|天地|亂|，|茫茫|渺渺|無人見|。|\r\n|　|　|行者|道|：|“|"
    "師父|，|你|看|那山|。|”|三藏|在|馬|上|笑|道|：|“|悟空|，|你|又|來|了|。|”|\n|\n|　|　|Chapter| |2| |of| |孫|悟空|"
    ":| |72| |變|,| |100%| |done|.|\n"
)
TRADITIONAL_TAGS = (
    "m - - n v - - - - - - a d v n zg - z a - - - - - n q - - - - r v - - - ns p - f v q - - n - r d zg ul - - - - - "
    "- - - - - - - zg n - - - - zg - - - - - - -"
)


def test_traditional_script_crlf_and_ascii_segment_as_with_jieba() -> None:
    tokens = segment.tokenize(TRADITIONAL)
    assert "|".join(tokens.words) == TRADITIONAL_CUT
    assert " ".join(tag or "-" for tag in tokens.tags) == TRADITIONAL_TAGS


def test_names_and_ai_phrases_found_are_those_jieba_found() -> None:
    nouns = proper_noun_candidates(segment.tokenize(FIXTURE))
    assert nouns == {
        "青云山": ("ns", 2, 4),
        "萧无尘": ("nr", 3, 10),  # 萧 + 无尘 joined back: a surname and a dictionary word
        "青云": ("ns", 1, 15),
        "山门": ("ns", 1, 30),
        "师兄": ("nr", 1, 35),
        "剑宗": ("nz", 2, 39),
        "林枫": ("nr", 2, 47),  # not in the dictionary: a surname makes it a person
        "陈老": ("nr", 1, 88),
        "冷笑": ("nr", 1, 96),
        "撒野": ("nr", 1, 113),
        "苏瑶": ("nr", 1, 118),
        "洛阳城": ("ns", 1, 167),
    }
    hits = find_hits(FIXTURE, phrases_for_novel(None))
    assert [h.matched for h in hits] == [
        "嘴角微微上扬",
        "眼中闪过一丝狡黠：",
        "指节发白",
        "深吸一口气",
        "五味杂陈",
    ]
    metrics = compute_metrics(FIXTURE)
    assert (metrics.chars, metrics.sentence_count, metrics.short_sentences, metrics.windows) == (
        177,
        11,
        2,
        7,
    )
    assert (metrics.dialogue_chars, metrics.similes, metrics.questions, metrics.repeated_windows) == (
        37,
        1,
        1,
        0,
    )


def test_the_records_names_stay_whole_where_the_segmenter_cuts_them() -> None:
    # The segmenter cuts 天剑宗 into 天 + 剑宗 and does not know 萧无尘; the records know both, so the index
    # counts them as the records' entities and lists none of their pieces as a new name.
    records = EntityRecords.build(
        characters=[Character(id="xiao", name="萧无尘"), Character(id="lin", name="林枫")],
        state={"factions": {"tian-jian": {"name": "天剑宗"}}},
    )
    chapters = [(1, FIXTURE), (2, FIXTURE), (3, FIXTURE)]
    index = NovelAnalyzer(records=records).analyze(chapters).entities
    assert index.by_chapter[1]["xiao"] == 3
    assert index.by_chapter[1]["lin"] == 2
    detected = {a.name for a in index.appearances.values() if a.source == "jieba"}
    assert not detected & {"剑宗", "无尘", "萧无尘", "林枫"}
    assert "苏瑶" in detected  # a name the records lack is still found
    without_records = NovelAnalyzer().analyze(chapters).entities
    assert "剑宗" in {a.name for a in without_records.appearances.values() if a.source == "jieba"}


@settings(max_examples=150, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("行者師父道悟空三藏林枫。，“”！ab12 \n\r\t\x0b\u2028　\U00020000😀")),
        max_size=80,
    )
)
def test_any_text_segments_into_words_that_join_back_to_it(text: str) -> None:
    tokens = segment.tokenize(text)
    assert "".join(tokens.words) == text
    assert all(tokens.words)
    assert tokens.starts[0] == 0 and tokens.starts[-1] == len(text)
    assert len(tokens.tags) == len(tokens) == len(tokens.starts) - 1
    assert list(tokens) == [tokens[i] for i in range(len(tokens))]
    assert all(text[t.start : t.end] == t.word for t in tokens)


def test_ready_once() -> None:
    segment.ensure_ready()
    segment.ensure_ready()
    segment.warm_tagger()  # the warm-up's second step: the HMM tagger's tables
    segment.warm_tagger()
    assert segment.tokenize("").words == []


def test_each_words_tag_is_the_one_tagging_the_text_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    # Words are cut once and each distinct word's tag is looked up once a process; it must be the tag the
    # segmenter gives the word where it stands, also for a word it cuts apart when alone (走到 → 走 + 到).
    import rjieba

    monkeypatch.setattr(segment, "_TAGS", {})
    text = FIXTURE + "他走到门口，封好了信，看得清楚。太上老君寄到一封信。\n" + "abc 123\n萧无尘走到"
    assert len(rjieba.tag("走到", False)) == 2
    for _ in range(2):  # new words, then the table
        tokens = segment.tokenize(text)
        expected = [(w, t if rjieba.has_word(w) else "") for w, t in rjieba.tag(text, True)]
        assert list(zip(tokens.words, tokens.tags, strict=True)) == expected
        assert tokens.tag_of == dict(expected)
    monkeypatch.setattr(segment, "_MAX_TAGS", 3)  # a full table starts a new one with this text's words
    assert segment.tokenize(text).tags == tokens.tags


def test_a_word_its_window_cuts_otherwise_is_tagged_from_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # A word the segmenter cuts apart when alone is tagged where the text has it: first from a few words
    # around it; when those are cut otherwise (rare: it never happens in 西游记), from its whole line, which
    # jieba cuts as in the text. Here the window is made to fail.
    import rjieba

    real = segment._tag_at
    windows: list[str] = []

    def window_fails(rj: Any, table: dict[str, str], word: str, piece: str, at: int) -> bool:
        if not windows:
            windows.append(piece)
            return False
        return real(rj, table, word, piece, at)

    monkeypatch.setattr(segment, "_TAGS", {})
    monkeypatch.setattr(segment, "_tag_at", window_fails)
    text = "第一行没有它。\n他慢慢地走到门口，封好了信。\n最后一行"
    assert len(rjieba.cut("封好", False)) == 2  # cut apart alone
    tokens = segment.tokenize(text)
    assert windows and "\n" not in windows[0]
    expected = [(w, t if rjieba.has_word(w) else "") for w, t in rjieba.tag(text, True)]
    assert list(zip(tokens.words, tokens.tags, strict=True)) == expected
    assert tokens.tag_of["封好"] == dict(rjieba.tag(text, True))["封好"] != ""
