"""Length governance and the platform profile (issue 16 points 2 and 5), against the fake model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.domain.evaluation import DIMENSION_WEIGHTS, DIMENSIONS, Evaluation, weighted_overall
from novel_desktop.domain.platforms import PLATFORMS, body_chars, writer_max_tokens
from novel_desktop.domain.refine import RefineEdits
from novel_desktop.paths import prompts_dir
from novel_desktop.pipeline.chapter_checks import run_checks
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import ENDING, judge_json, writer_text
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

ADDED = "他把残玉贴在胸口，隔着衣裳也能觉出那一点凉意。" * 16


def _length_requests(fake: FakeAnthropicServer) -> list[str]:
    """The user turns of the length editor's requests (the refiner's model, its own prompt)."""
    out = []
    for request in fake.requests_for("style_refiner"):
        content = request.body["messages"][0]["content"]
        if "调整第" in content and "章的字数" in content:
            out.append(content)
    return out


def _edits(*pairs: tuple[str, str]) -> str:
    return json.dumps(
        {"edits": [{"original": o, "refined": r, "reason": "字数"} for o, r in pairs]}, ensure_ascii=False
    )


def test_an_over_short_draft_gets_one_expanding_pass(novel: Path, fake: FakeAnthropicServer) -> None:
    fake.script("chapter_writer", Reply(writer_text(4), chunk_size=60))  # 2,248 字 < 2,500
    fake.script("style_refiner", _edits(("林枫没动。", "林枫没动。" + ADDED)))
    assert main(["continue", str(novel), "--non-interactive"]) == 0

    (task,) = _length_requests(fake)
    assert "扩写" in task and "2,248 字" in task and "2,500-3,500 字" in task
    with NovelStore.open(novel, write=False) as store:
        text = store.chapter_text(3)
        log = store.pipeline_log(3)
    assert text.count(ADDED) == 1  # the committed text is the edited one
    assert 2500 <= body_chars(text) <= 3500
    assert "length" in [s["name"] for s in log["stages"]]
    assert not [i for i in log["gate_issues"] if i["rule"] == "LENGTH"]


def test_an_over_long_draft_gets_one_tightening_pass(novel: Path, fake: FakeAnthropicServer) -> None:
    draft = writer_text(10)  # 3,688 字 > 3,500
    fake.script("chapter_writer", Reply(draft, chunk_size=60))
    fake.script(
        "style_refiner",
        _edits(
            (ENDING[0], "天黑了，林枫在破庙里生了火，攥着残玉坐到半夜。"),
            (ENDING[2], "半夜起了风，他借着余火看木牌，纹路九折，和残玉一样。"),
            (ENDING[3], "鸡叫头遍，他上了山，山门前已经站了十几个人。"),
        ),
    )
    assert main(["continue", str(novel), "--non-interactive"]) == 0

    (task,) = _length_requests(fake)
    assert "精简" in task and "2,500-3,500 字" in task
    with NovelStore.open(novel, write=False) as store:
        text = store.chapter_text(3)
    assert text.count(ENDING[0]) == 1  # one of its two occurrences was tightened
    assert "攥着残玉坐到半夜" in text
    assert body_chars(text) <= 3500


def test_a_draft_still_outside_the_range_is_a_gate_issue_the_author_sees(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.script("chapter_writer", Reply(writer_text(4), chunk_size=60))
    fake.script("style_refiner", _edits())  # the pass changes nothing
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    assert len(_length_requests(fake)) == 1  # one pass, not more
    captured = capsys.readouterr()
    assert re.search(r"\[LENGTH\] 字数 2,2\d\d，低于平台要求 2,500-3,500 字", captured.err)
    with NovelStore.open(novel, write=False) as store:
        issues = store.pipeline_log(3)["gate_issues"]
    assert {"kind": "length", "rule": "LENGTH", "blocking": False}.items() <= issues[0].items()


def test_the_length_editor_example_is_a_valid_edit_list() -> None:
    text = (prompts_dir() / "length_editor.md").read_text(encoding="utf-8")
    block = text.split("```json\n", 1)[1].split("\n```", 1)[0]
    assert RefineEdits.model_validate_json(block).edits


# ---------------------------------------------------------------------------- point 5


def test_every_profile_has_weights_summing_to_one_and_a_derived_output_limit() -> None:
    assert PLATFORMS["web"].weights == DIMENSION_WEIGHTS  # the seed's default
    assert (PLATFORMS["web"].min_chars, PLATFORMS["web"].max_chars) == (2500, 3500)
    for profile in PLATFORMS.values():
        assert set(profile.weights) == set(DIMENSIONS), profile.id
        assert sum(profile.weights.values()) == pytest.approx(1.0), profile.id
        assert profile.min_chars < profile.max_chars
        assert writer_max_tokens(profile) > profile.max_chars  # room for the whole chapter and the hints


def _uneven_judge() -> str:
    data = json.loads(judge_json(4.0))
    for name, score in zip(DIMENSIONS, (5, 4, 4, 3, 3, 4, 5, 3), strict=True):
        data["scores"][name]["score"] = score
    return json.dumps(data, ensure_ascii=False)


def test_a_tomato_novel_tells_writer_and_judge_its_rules_and_weighs_by_them(
    novel: Path, fake: FakeAnthropicServer
) -> None:
    with NovelStore.open(novel, write=True) as store:
        store.set_meta("platform", "tomato")
    fake.script("quality_judge", _uneven_judge())
    assert main(["continue", str(novel), "--non-interactive"]) == 0

    tomato = PLATFORMS["tomato"]
    writer = fake.requests_for("chapter_writer")[0]
    system = "".join(b["text"] for b in writer.system_blocks)
    for phrase in ("番茄小说", "2,000-3,000 字", tomato.hook, tomato.pacing, "前 300 字内必须出现钩子"):
        assert phrase in system, phrase
    assert writer.body["max_tokens"] == writer_max_tokens(tomato)

    judge = fake.requests_for("quality_judge")[0]
    judged = "".join(b["text"] for b in judge.system_blocks)
    assert "番茄小说" in judged and "2,000-3,000 字" in judged and tomato.hook in judged
    assert "- pacing（节奏）：0.14" in judged and "- emotional_impact（情感冲击）：0.14" in judged
    user = judge.user_text
    assert "本章是开篇第 3 章" in user and "本章前 300 字" in user

    with NovelStore.open(novel, write=False) as store:
        overall = store.evaluation(3)["overall"]
        text = store.chapter_text(3)
    scores = json.loads(_uneven_judge())["scores"]
    flat = {k: v["score"] for k, v in scores.items()}
    assert overall == weighted_overall(flat, tomato.weights) != weighted_overall(flat)
    assert text.split("\n", 2)[2][:40] in user  # the opening is quoted


def test_chapter_1_without_its_protagonist_is_a_blocking_opening_issue(novel: Path) -> None:
    evaluation = Evaluation.model_validate_json(judge_json(4.5))
    evaluation = evaluation.model_copy(update={"risk_flags": ["opening_hook_missing:前 300 字都在写天气"]})
    stranger = "# 第1章 雨\n\n" + "雨下了一整夜，镇口的石桥被冲塌了一半，卖豆腐的老汉蹲在桥头叹气。" * 60
    with NovelStore.open(novel, write=False) as store:
        issues = run_checks(store, 1, stranger, evaluation)
        later = run_checks(store, 2, stranger, evaluation)
        named = run_checks(store, 1, stranger.replace("老汉", "林枫", 1), evaluation)
    protagonist = [i for i in issues if i.rule == "OPENING-PROTAGONIST"]
    assert protagonist and protagonist[0].blocking and "林枫" in protagonist[0].message
    hook = [i for i in issues if i.rule == "OPENING-HOOK"]
    assert hook and hook[0].evidence == "前 300 字都在写天气" and not hook[0].blocking
    # Chapter 2 without the protagonist is shown, not forced; a name in chapter 1 clears the issue.
    assert [i.blocking for i in later if i.rule == "OPENING-PROTAGONIST"] == [False]
    assert not [i for i in named if i.rule == "OPENING-PROTAGONIST"]
