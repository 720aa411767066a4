"""Seed 000 InstructionPackets for an external executor working on an exported project folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.domain.novel_ask import InstructionPacket
from novel_desktop.domain.novel_ask_answers import build_answer_spec
from novel_desktop.pipeline.executor import StepError, StepInvalid, StepRefused, parse_step
from novel_desktop.pipeline.executor_packets import instructions
from novel_desktop.pipeline.executor_steps import next_step
from novel_desktop.pipeline.step_results import advance, validate
from novel_desktop.storage.folder import export_folder
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import PARAGRAPHS, judge_json

CHAPTER_TEXT = "# 第3章 开山\n\n" + "\n\n".join(PARAGRAPHS * 3) + "\n"


@pytest.fixture
def store(seed_store: NovelStore) -> NovelStore:
    """The shared 《青石问道》 (chapters 1-2 committed, a 5-chapter outline), open."""
    return seed_store


def _write(folder: Path, rel: str, text: str) -> None:
    target = folder / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def _evaluation(chapter: int, score: float) -> str:
    data = json.loads(judge_json(score))
    data["chapter"] = chapter
    return json.dumps(data, ensure_ascii=False)


def _delta(chapter: int, base: int) -> str:
    ops = [{"op": "set", "path": "characters.lin-feng.location", "value": "苍梧宗山门"}]
    return json.dumps(
        {"chapter": chapter, "base_state_version": base, "storyline_id": "main_arc", "ops": ops}
    )


def _run_to_judged(store: NovelStore, folder: Path, score: float) -> None:
    """Play the executor through draft, summarize, refine and judge of chapter 3."""
    _write(folder, "staging/chapters/chapter-003.md", CHAPTER_TEXT)
    advance(store, "chapter:003:draft", folder)
    _write(folder, "staging/summaries/chapter-003-summary.md", "林枫持残玉上山，获准参加考核。\n")
    _write(folder, "staging/state/chapter-003-delta.json", _delta(3, store.state_version()))
    advance(store, "chapter:003:summarize", folder)
    _write(folder, "staging/chapters/chapter-003.md", CHAPTER_TEXT.replace("嘴角勾起一抹冷笑", "哼了一声"))
    advance(store, "chapter:003:refine", folder)
    _write(folder, "staging/evaluations/chapter-003-eval.json", _evaluation(3, score))
    advance(store, "chapter:003:judge", folder)


def test_step_ids_parse_and_bad_ones_are_named() -> None:
    assert parse_step("chapter:048:draft").number == 48
    assert parse_step("volume:02:plan").id == "volume:02:plan"
    assert parse_step("novel:init").id == "novel:init"
    with pytest.raises(StepError, match="无法识别"):
        parse_step("chapter:48:write")


def test_fresh_chapter_packet_round_trips_and_its_paths_exist_in_the_export(
    store: NovelStore, tmp_path: Path
) -> None:
    step = next_step(store)
    assert step == "chapter:003:draft"
    packet = instructions(store, step)
    again = InstructionPacket.model_validate(json.loads(packet.model_dump_json()))
    assert again == packet
    assert packet.agent.kind == "subagent" and packet.agent.name == "chapter-writer"
    assert [o.path for o in packet.expected_outputs] == ["staging/chapters/chapter-003.md"]
    assert [a.command for a in packet.next_actions] == [
        "novel validate chapter:003:draft",
        "novel advance chapter:003:draft",
    ]
    assert packet.manifest.mode == "paths"
    assert packet.manifest.inline["chapter"] == 3
    assert "开山" in packet.manifest.inline["chapter_outline"]
    assert not packet.has_gate

    folder = tmp_path / "exported"
    export_folder(store, folder, skeleton=True)  # folders for the executor
    paths = packet.manifest.paths
    assert paths["volume_outline"] == "volumes/vol-01/outline.md"
    assert paths["recent_summaries"] == [
        "summaries/chapter-001-summary.md",
        "summaries/chapter-002-summary.md",
    ]
    for value in paths.values():
        for rel in value if isinstance(value, list) else [value]:
            assert (folder / rel).is_file(), rel
    for output in packet.expected_outputs:
        assert (folder / output.path).parent.is_dir()


def test_external_executor_writes_a_chapter_that_is_committed(store: NovelStore, tmp_path: Path) -> None:
    folder = tmp_path / "exported"
    export_folder(store, folder)
    problems = validate(store, "chapter:003:draft", folder)
    assert [p.field for p in problems] == ["staging/chapters/chapter-003.md"]

    _run_to_judged(store, folder, 4.2)
    assert next_step(store) == "chapter:003:commit"
    assert not instructions(store, "chapter:003:commit").has_gate
    assert validate(store, "chapter:003:commit", folder) == []
    result = advance(store, "chapter:003:commit", folder)

    assert result.commit is not None
    assert store.chapter_text(3) is not None and "哼了一声" in (store.chapter_text(3) or "")
    assert "嘴角勾起" in (store.revision_text(store.revisions(3)[0].id) or "")  # the draft is kept
    assert store.summary(3) is not None
    assert store.current_state()["characters"]["lin-feng"]["location"] == "苍梧宗山门"
    assert store.checkpoint()["last_completed_chapter"] == 3
    assert result.next_step == "chapter:004:draft"
    # The folder shows the same novel: committed files written back, the chapter's staging cleared.
    assert (folder / "chapters/chapter-003.md").is_file()
    assert (folder / "evaluations/chapter-003-eval.json").is_file()
    assert not (folder / "staging/chapters/chapter-003.md").exists()
    assert json.loads((folder / ".checkpoint.json").read_text())["last_completed_chapter"] == 3


def test_outputs_that_do_not_parse_are_reported(store: NovelStore, tmp_path: Path) -> None:
    folder = tmp_path / "exported"
    export_folder(store, folder)
    _write(folder, "staging/chapters/chapter-003.md", CHAPTER_TEXT)
    advance(store, "chapter:003:draft", folder)
    _write(folder, "staging/summaries/chapter-003-summary.md", "摘要\n")
    _write(folder, "staging/state/chapter-003-delta.json", '{"chapter": 3, "ops": [')
    problems = validate(store, "chapter:003:summarize", folder)
    assert len(problems) == 1 and "不是合法的 JSON" in problems[0].message
    with pytest.raises(StepInvalid, match=r"chapter-003-delta\.json"):
        advance(store, "chapter:003:summarize", folder)
    assert next_step(store) == "chapter:003:summarize"


def test_steps_advance_only_in_order(store: NovelStore) -> None:
    with pytest.raises(StepRefused, match="chapter:003:draft"):
        advance(store, "chapter:003:judge")


def test_low_score_gate_needs_a_valid_answer_before_commit(store: NovelStore, tmp_path: Path) -> None:
    folder = tmp_path / "exported"
    export_folder(store, folder)
    _run_to_judged(store, folder, 2.5)
    packet = instructions(store, "chapter:003:commit")
    assert packet.has_gate and packet.novel_ask is not None and packet.answer_path is not None
    assert packet.expected_outputs[0].path == packet.answer_path
    assert packet.answer_path.startswith("staging/novel-ask/chapter-003-commit")

    # No AnswerSpec yet: validate names the missing answer.
    problems = validate(store, "chapter:003:commit", folder)
    assert len(problems) == 1 and problems[0].field == packet.answer_path
    assert "缺少 AnswerSpec" in problems[0].message

    # An invalid AnswerSpec blocks the step with the reason.
    bad = {"version": 1, "topic": packet.novel_ask.topic, "answers": {"low_score_action": "删掉重写"}}
    bad |= {"answered_at": "2026-03-01T10:00:00Z", "answered_by": "claude_code"}
    _write(folder, packet.answer_path, json.dumps(bad, ensure_ascii=False))
    problems = validate(store, "chapter:003:commit", folder)
    assert problems and all("已阻塞" in p.message for p in problems)
    assert any("删掉重写" in p.message for p in problems)
    with pytest.raises(StepInvalid):
        advance(store, "chapter:003:commit", folder)
    assert store.chapter_text(3) is None

    # 接受: committed with a quality flag.
    good = build_answer_spec(packet.novel_ask, {"low_score_action": "接受"}, answered_by="claude_code")
    _write(folder, packet.answer_path, good.model_dump_json())
    assert validate(store, "chapter:003:commit", folder) == []
    result = advance(store, "chapter:003:commit", folder)
    assert result.commit is not None and "已标记" in result.message
    assert (store.pipeline_log(3) or {})["gate_decision"] == "force_pass"
    assert store.answer(packet.answer_path) is not None


def test_low_score_answer_auto_revise_leads_to_revision(store: NovelStore, tmp_path: Path) -> None:
    folder = tmp_path / "exported"
    export_folder(store, folder)
    _run_to_judged(store, folder, 2.5)
    packet = instructions(store, "chapter:003:commit")
    assert packet.novel_ask is not None and packet.answer_path is not None
    answer = build_answer_spec(packet.novel_ask, {"low_score_action": "自动修订"}, answered_by="codex")
    _write(folder, packet.answer_path, answer.model_dump_json())
    with pytest.raises(StepRefused, match="revise"):
        advance(store, "chapter:003:commit", folder)
    assert next_step(store) == "chapter:003:revise"
    revise = instructions(store, "chapter:003:revise")
    assert revise.manifest.inline["required_fixes"]
    assert revise.manifest.paths["evaluation"] == "staging/evaluations/chapter-003-eval.json"


def test_volume_plan_is_gated_by_outline_confirmation(tmp_path: Path) -> None:
    with NovelStore.create(tmp_path / "新书.novel", title="新书") as store:
        store.put_document("world/rules.json", json.dumps({"rules": []}))
        store.update_checkpoint(orchestrator_state="VOL_PLANNING")
        assert next_step(store) == "volume:01:plan"
        packet = instructions(store, "volume:01:plan")
        assert packet.agent.name == "plot-architect"
        assert packet.answer_path == "staging/novel-ask/volume-01-plan.answers.json"
        folder = tmp_path / "exported"
        export_folder(store, folder)
        _write(folder, "volumes/vol-01/outline.md", "# 第一卷\n\n## 第 1 章 起\n- 冲突：开端\n")
        assert [p.field for p in validate(store, "volume:01:plan", folder)] == [packet.answer_path]
        assert packet.novel_ask is not None
        answer = build_answer_spec(packet.novel_ask, {"outline_action": "确认"}, answered_by="claude_code")
        _write(folder, packet.answer_path, answer.model_dump_json())
        result = advance(store, "volume:01:plan", folder)
        assert store.document("volumes/vol-01/outline.md") is not None
        assert store.checkpoint()["orchestrator_state"] == "WRITING"
        assert result.next_step == "chapter:001:draft"


def test_new_novel_starts_with_init_and_platform_gate(tmp_path: Path) -> None:
    with NovelStore.create(tmp_path / "新书.novel", title="新书") as store:
        assert next_step(store) == "novel:init"
        packet = instructions(store, "novel:init")
        assert packet.answer_path == "staging/novel-ask/novel-init.answers.json"
        assert packet.novel_ask is not None and packet.novel_ask.questions[0].id == "platform"
        folder = tmp_path / "exported"
        export_folder(store, folder)
        rules = {
            "rules": [
                {"id": "W-001", "category": "magic_system", "rule": "凡人不能飞", "constraint_type": "hard"}
            ]
        }
        lines = {
            "storylines": [
                {"id": "main_arc", "name": "主线", "type": "main_arc", "scope": "novel", "status": "active"}
            ]
        }
        _write(folder, "world/rules.json", json.dumps(rules, ensure_ascii=False))
        _write(folder, "storylines/storylines.json", json.dumps(lines, ensure_ascii=False))
        answer = build_answer_spec(packet.novel_ask, {"platform": "jjwxc"}, answered_by="claude_code")
        _write(folder, packet.answer_path, answer.model_dump_json())
        result = advance(store, "novel:init", folder)
        assert store.meta()["platform"] == "jjwxc"
        assert store.document("world/rules.json") is not None
        assert result.next_step == "novel:style"  # the quick start goes on: style, then the trial
