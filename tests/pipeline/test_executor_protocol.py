"""The executor protocol runs the built-in pipeline's steps (issue 16 point 8), checked case by case against
what the seed implementation's own tests expect: the gate's blocking contract checks, the 3.5-3.9 polish,
the second judge on key chapters, the volume review, the quick start, validated imports, and a checkpoint that
names no chapter, no text or an unknown stage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.domain.novel_ask_answers import build_answer_spec
from novel_desktop.pipeline.executor import CheckpointError, StepInvalid, StepRefused
from novel_desktop.pipeline.executor_packets import instructions
from novel_desktop.pipeline.executor_steps import next_step
from novel_desktop.pipeline.step_results import advance, validate
from novel_desktop.storage.folder import export_folder
from novel_desktop.storage.store import NovelStore
from tests.pipeline.test_executor import CHAPTER_TEXT, _delta, _evaluation, _run_to_judged, _write

SECONDARY = "staging/evaluations/chapter-003-eval-secondary.json"


@pytest.fixture
def store(seed_store: NovelStore) -> NovelStore:
    """The shared 《青石问道》 (chapters 1-2 committed, a 5-chapter outline), open."""
    return seed_store


@pytest.fixture
def folder(store: NovelStore, tmp_path: Path) -> Path:
    out = tmp_path / "exported"
    export_folder(store, out)
    return out


def _answer(store: NovelStore, folder: Path, step: str, answers: dict[str, object]) -> None:
    packet = instructions(store, step)
    assert packet.novel_ask is not None and packet.answer_path is not None
    spec = build_answer_spec(packet.novel_ask, answers, answered_by="claude_code")
    _write(folder, packet.answer_path, spec.model_dump_json())


def _to_refined(store: NovelStore, folder: Path) -> None:
    _write(folder, "staging/chapters/chapter-003.md", CHAPTER_TEXT)
    advance(store, "chapter:003:draft", folder)
    _write(folder, "staging/summaries/chapter-003-summary.md", "林枫持残玉上山，获准参加考核。\n")
    _write(folder, "staging/state/chapter-003-delta.json", _delta(3, store.state_version()))
    advance(store, "chapter:003:summarize", folder)
    _write(folder, "staging/chapters/chapter-003.md", CHAPTER_TEXT.replace("嘴角勾起一抹冷笑", "哼了一声"))
    advance(store, "chapter:003:refine", folder)


def _make_key_chapter(store: NovelStore) -> None:
    """Chapter 3 inside a storyline convergence event: a key chapter, judged twice."""
    schedule = {"volume": 1, "convergence_events": [{"event": "山门汇合", "chapter_range": [3, 3]}]}
    store.put_document("volumes/vol-01/storyline-schedule.json", json.dumps(schedule, ensure_ascii=False))


# ---------------------------------------------------------------------------- 1. contract_verification
def test_a_high_confidence_contract_check_violation_at_4_5_is_revised(
    store: NovelStore, folder: Path
) -> None:
    _to_refined(store, folder)
    data = json.loads(_evaluation(3, 4.5))
    data["violations"] = []
    data["contract_verification"] = {
        "l1_checks": [{"id": "W-001", "status": "pass", "confidence": "high"}],
        "l3_checks": [
            {"id": "C-003-1", "status": "violation", "confidence": "high", "detail": "林枫没有拿到考核资格"}
        ],
        "has_violations": True,
    }
    _write(folder, "staging/evaluations/chapter-003-eval.json", json.dumps(data, ensure_ascii=False))
    advance(store, "chapter:003:judge", folder)

    assert next_step(store) == "chapter:003:revise"
    with pytest.raises(StepRefused):
        advance(store, "chapter:003:commit", folder)
    revise = instructions(store, "chapter:003:revise").manifest.inline
    assert any("C-003-1" in line for line in revise["violations"])
    assert store.chapter_text(3) is None


# ---------------------------------------------------------------------------- 2. the 3.5-3.9 polish
def test_a_3_7_chapter_is_polished_once_then_committed(store: NovelStore, folder: Path) -> None:
    _run_to_judged(store, folder, 3.7)
    assert next_step(store) == "chapter:003:refine"
    packet = instructions(store, "chapter:003:refine")
    assert packet.manifest.inline["mode"] == "polish"
    assert packet.manifest.inline["focus"]  # the judge's style issues
    assert packet.manifest.inline["max_changed_chars"] > 0

    # Rewriting the chapter is not a polish: past the 15% budget it does not validate.
    _write(folder, "staging/chapters/chapter-003.md", "# 第3章 开山\n\n" + "全新的一章。" * 400)
    problems = validate(store, "chapter:003:refine", folder)
    assert problems and "15%" in problems[0].message
    with pytest.raises(StepInvalid):
        advance(store, "chapter:003:refine", folder)

    polished = CHAPTER_TEXT.replace("嘴角勾起一抹冷笑", "哼了一声").replace("然而", "可")
    _write(folder, "staging/chapters/chapter-003.md", polished)
    result = advance(store, "chapter:003:refine", folder)
    assert "二次润色" in result.message
    assert result.next_step == "chapter:003:commit"  # once: no second polish, no new judging
    done = advance(store, "chapter:003:commit", folder)
    assert done.commit is not None
    assert store.chapter_text(3) == polished
    assert (store.pipeline_log(3) or {})["gate_decision"] == "polish"


# ---------------------------------------------------------------------------- 3. the second judge
def test_a_key_chapter_needs_both_judges_and_the_lower_counts(store: NovelStore, folder: Path) -> None:
    _make_key_chapter(store)
    _to_refined(store, folder)
    packet = instructions(store, "chapter:003:judge")
    assert packet.manifest.inline["key_chapter"] is True
    assert [o.path for o in packet.expected_outputs] == [
        "staging/evaluations/chapter-003-eval.json",
        SECONDARY,
    ]

    _write(folder, "staging/evaluations/chapter-003-eval.json", _evaluation(3, 4.3))
    assert [p.field for p in validate(store, "chapter:003:judge", folder)] == [SECONDARY]
    with pytest.raises(StepInvalid):
        advance(store, "chapter:003:judge", folder)

    _write(folder, SECONDARY, _evaluation(3, 2.6))
    advance(store, "chapter:003:judge", folder)
    # 2.6 counts: the author is asked (2.0-2.9), nothing is committed at the first judge's 4.3.
    assert next_step(store) == "chapter:003:commit"
    commit = instructions(store, "chapter:003:commit")
    assert commit.has_gate and commit.manifest.inline["gate_decision"] == "ask_user"


# ---------------------------------------------------------------------------- 4. the volume review
def test_after_the_volumes_last_chapter_the_review_then_the_next_plan(
    store: NovelStore, folder: Path
) -> None:
    info = {"volume": 1, "chapter_start": 1, "chapter_end": 3}
    store.put_document("volumes/vol-01/volume.json", json.dumps(info))
    _to_refined(store, folder)  # chapter 3 ends the volume: a key chapter, two judges
    _write(folder, "staging/evaluations/chapter-003-eval.json", _evaluation(3, 4.3))
    _write(folder, SECONDARY, _evaluation(3, 4.1))
    advance(store, "chapter:003:judge", folder)
    result = advance(store, "chapter:003:commit", folder)
    assert "卷末回顾" in result.message
    assert store.checkpoint()["orchestrator_state"] == "VOL_REVIEW"
    assert result.next_step == "volume:01:review"

    packet = instructions(store, "volume:01:review")
    assert packet.agent.name == "consistency-auditor"
    assert packet.manifest.inline["chapter_end"] == 3
    assert "volumes/vol-01/review.md" in [o.path for o in packet.expected_outputs]
    with pytest.raises(StepRefused, match="volume:01:review"):
        advance(store, "volume:02:plan", folder)

    _write(folder, "volumes/vol-01/review.md", "# 第 1 卷回顾\n\n均分 4.2\n")
    _answer(store, folder, "volume:01:review", {"review_action": "确认", "direction": "宗门大比"})
    result = advance(store, "volume:01:review", folder)
    assert store.document("volumes/vol-01/review.md") is not None
    assert store.document("state/history/vol-01-final-state.json") is not None
    cp = store.checkpoint()
    assert cp["current_volume"] == 2 and cp["orchestrator_state"] == "VOL_PLANNING"
    assert result.next_step == "volume:02:plan"
    assert instructions(store, "volume:02:plan").manifest.inline["direction"] == "宗门大比"


# ---------------------------------------------------------------------------- 5. the quick start
_RULES = {
    "rules": [{"id": "W-001", "category": "magic_system", "rule": "凡人不能飞", "constraint_type": "hard"}]
}
_LINES = {
    "storylines": [
        {"id": "main_arc", "name": "主线", "type": "main_arc", "scope": "novel", "status": "active"}
    ]
}
_HERO = {
    "id": "lin-feng",
    "name": "林枫",
    "role": "protagonist",
    "contracts": [
        {"id": "C-LF-001", "type": "capability", "rule": "林枫不会御剑", "valid_from_chapter": 1},
    ],
}


def _init(store: NovelStore, folder: Path, hero: object) -> None:
    _write(folder, "world/rules.json", json.dumps(_RULES, ensure_ascii=False))
    _write(folder, "storylines/storylines.json", json.dumps(_LINES, ensure_ascii=False))
    _write(folder, "characters/active/lin-feng.json", json.dumps(hero, ensure_ascii=False))
    _answer(store, folder, "novel:init", {"platform": "qidian"})


def test_init_then_style_then_trial_chapters_then_the_trial_review(tmp_path: Path) -> None:
    with NovelStore.create(tmp_path / "新书.novel", title="新书") as store:
        folder = tmp_path / "exported"
        export_folder(store, folder)
        _init(store, folder, _HERO)
        result = advance(store, "novel:init", folder)
        assert store.checkpoint()["orchestrator_state"] == "QUICK_START"
        assert store.document("storylines/storyline-spec.json") is not None
        assert result.next_step == "novel:style"

        style = instructions(store, "novel:style")
        assert style.agent.name == "style-analyzer" and style.novel_ask is not None
        template = next(iter(style.manifest.inline["templates"]))
        _answer(store, folder, "novel:style", {"style_source": "风格模板", "template": template})
        result = advance(store, "novel:style", folder)
        assert store.document("style-profile.json") is not None
        assert store.document("volumes/vol-01/chapter-contracts/chapter-001.json") is not None
        assert result.next_step == "chapter:001:draft"  # the first trial chapter, on the trial outline

        # The three trial chapters are in: the author's verdict on them, then volume 1's planning.
        store.update_checkpoint(last_completed_chapter=3, orchestrator_state="QUICK_START")
        assert next_step(store) == "novel:trial"
        trial = instructions(store, "novel:trial")
        assert trial.novel_ask is not None and trial.novel_ask.questions[0].id == "trial_action"
        _answer(store, folder, "novel:trial", {"trial_action": "继续"})
        result = advance(store, "novel:trial", folder)
        assert store.checkpoint()["orchestrator_state"] == "VOL_PLANNING"
        assert result.next_step == "volume:01:plan"
        assert instructions(store, "volume:01:plan").manifest.inline["chapter_start"] == 4


def test_style_from_samples_needs_the_profile(tmp_path: Path) -> None:
    with NovelStore.create(tmp_path / "新书.novel", title="新书") as store:
        folder = tmp_path / "exported"
        export_folder(store, folder)
        _init(store, folder, _HERO)
        advance(store, "novel:init", folder)
        _answer(store, folder, "novel:style", {"style_source": "参考作者", "reference_author": "猫腻"})
        assert [p.field for p in validate(store, "novel:style", folder)] == ["style-profile.json"]


# ---------------------------------------------------------------------------- 6. invalid character files
def test_an_invalid_character_contract_file_is_named_and_nothing_is_imported(tmp_path: Path) -> None:
    with NovelStore.create(tmp_path / "新书.novel", title="新书") as store:
        folder = tmp_path / "exported"
        export_folder(store, folder)
        bad = {**_HERO, "contracts": [{"id": "C-LF-001", "type": "超能力"}]}
        _init(store, folder, bad)
        problems = validate(store, "novel:init", folder)
        assert problems and {p.field for p in problems} == {"characters/active/lin-feng.json"}
        with pytest.raises(StepInvalid, match=r"lin-feng\.json"):
            advance(store, "novel:init", folder)
        assert store.document("world/rules.json") is None
        assert store.document("characters/active/lin-feng.json") is None
        assert next_step(store) == "novel:init"


# ---------------------------------------------------------------------------- 7-9. odd checkpoints
def test_a_judged_chapter_without_its_text_is_redrafted(store: NovelStore, folder: Path) -> None:
    _run_to_judged(store, folder, 4.2)
    store.delete_staging("chapters/chapter-003.md")
    assert next_step(store) == "chapter:003:draft"
    with pytest.raises(StepRefused, match="chapter:003:draft"):
        advance(store, "chapter:003:commit")
    _write(folder, "staging/chapters/chapter-003.md", CHAPTER_TEXT)
    assert advance(store, "chapter:003:draft", folder).next_step == "chapter:003:summarize"


def test_inflight_chapter_0_is_no_chapter_in_flight(store: NovelStore) -> None:
    store.update_checkpoint(inflight_chapter=0, pipeline_stage="judged")
    assert next_step(store) == "chapter:003:draft"


def test_an_unknown_stage_is_reported_not_judged(
    store: NovelStore, seed_novel: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store.update_checkpoint(inflight_chapter=3, pipeline_stage="polishing")
    with pytest.raises(CheckpointError, match="polishing"):
        next_step(store)
    store.close()
    assert main(["next", str(seed_novel)]) == 2
    err = capsys.readouterr().err
    assert "pipeline_stage='polishing'" in err and ".checkpoint.json" in err
