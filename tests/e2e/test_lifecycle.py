"""The whole lifecycle on the command line, end to end against the fake server: from an empty file through
the quick start, a 10-chapter volume plan, all 10 chapters with the quality briefs, drift checks and the
audit, the volume review, and the first chapter of volume 2 — every question answered from a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore
from tests.e2e.lifecycle_replies import STYLE_SAMPLE, answers, plan_json, script_planning
from tests.fakes.anthropic_server import FakeAnthropicServer


@pytest.fixture
def lifecycle(fake: FakeAnthropicServer, tmp_path: Path) -> tuple[Path, list[str]]:
    script_planning(fake)
    fake.script("plot_architect", plan_json(1, 4, 10), plan_json(2, 11, 20))
    sample = tmp_path / "样本.txt"
    sample.write_text(STYLE_SAMPLE, encoding="utf-8")
    answers_file = tmp_path / "answers.json"
    answers_file.write_text(json.dumps(answers(), ensure_ascii=False), encoding="utf-8")
    novel = tmp_path / "青石问道.novel"
    args = [
        "start",
        str(novel),
        "--answers-file",
        str(answers_file),
        "--non-interactive",
        "--samples",
        str(sample),
        "--chapters",
        "10",
        "-n",
        "8",
    ]
    return novel, args


def test_empty_file_to_volume_two(
    lifecycle: tuple[Path, list[str]], fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    novel, args = lifecycle
    assert main(args) == 0
    out = capsys.readouterr().out

    with NovelStore.open(novel, write=False) as store:
        cp = store.checkpoint()
        # Trial chapters 1-3 + chapters 4-10 of volume 1 + chapter 11, the first of volume 2.
        assert [c.number for c in store.list_chapters()] == list(range(1, 12))
        assert (cp["current_volume"], cp["last_completed_chapter"], cp["orchestrator_state"]) == (
            2,
            11,
            "WRITING",
        )
        assert [c.volume for c in store.list_chapters()] == [1] * 10 + [2]
        assert store.meta()["platform"] == "qidian"
        assert "仙侠" in store.document("brief.md")

        # Quick start: ≤3 L1 rules with hard/soft, protagonist + supporting character with contracts, main arc.
        rules = store.document_json("world/rules.json")["rules"]
        assert {r["constraint_type"] for r in rules} == {"hard", "soft"}
        assert store.document_json("characters/active/lin-feng.json")["contracts"]
        assert store.document_json("characters/active/chen-lao.json")["role"] == "mentor"
        assert [s["id"] for s in store.document_json("storylines/storylines.json")["storylines"]] == [
            "main_arc"
        ]
        assert store.document("storylines/storyline-spec.json") is not None
        # Style from the sample: the program's numbers, not the model's 99 and 0.9.
        profile = store.document_json("style-profile.json")
        assert profile["avg_sentence_length"] != 99 and profile["dialogue_ratio"] == 0.0
        assert "长句铺陈，景物里藏人物心事" in profile["writing_directives"]

        # Volume 1: the trial chapters' sections kept, the plan continues after them; contracts chained.
        outline = store.document("volumes/vol-01/outline.md")
        assert "## 第 1 章 开篇" in outline and "## 第 4 章 问心4" in outline
        c5 = store.document_json(layout.contract_path(1, 5))
        c4 = store.document_json(layout.contract_path(1, 4))
        assert (
            c5["preconditions"]["character_states"]["林枫"]["关卡"]
            == c4["postconditions"]["state_changes"]["林枫"]["关卡"]
        )
        assert store.document_json("volumes/vol-01/storyline-schedule.json")["volume"] == 1
        assert store.document_json("volumes/vol-01/foreshadowing.json")["foreshadowing"]
        assert store.document_json("volumes/vol-01/volume.json")["chapter_end"] == 10
        global_fs = {i["id"] for i in store.document_json(layout.GLOBAL_FORESHADOWING)["foreshadowing"]}
        assert {"trial_secret_1", "jade_origin"} <= global_fs

        # Periodic checks: two quality briefs, drift written where the writer reads it, one audit.
        assert store.answer("staging/novel-ask/quality-brief-005.answers.json") is not None
        assert store.answer("staging/novel-ask/quality-brief-010.answers.json") is not None
        drift = store.document_json("style-drift.json")
        assert drift["checked_at_chapter"] == 10 and drift["corrections"]
        audit = json.loads(store.extra_file("audits/audit-001-010.json"))
        assert audit["findings"][0]["severity"] == "low"

        # Volume review and the archived final state; volume 2 planned from chapter 11.
        review = store.document("volumes/vol-01/review.md")
        assert "全卷一致性报告" in review and "伏笔完成度" in review and "下卷铺垫建议" in review
        assert store.document_json("state/history/vol-01-final-state.json")["state_version"] > 0
        assert store.document_json("volumes/vol-02/volume.json")["chapter_start"] == 11

    # The writer of chapter 6 read the drift corrections found after chapter 5.
    writer_prompts = [json.dumps(r.body, ensure_ascii=False) for r in fake.requests_for("chapter_writer")]
    assert len(writer_prompts) == 11
    assert not any("corrections" in p for p in writer_prompts[:5])
    assert all("corrections" in p for p in writer_prompts[5:])
    assert len(fake.requests_for("plot_architect")) == 2
    # Audits: chapters 1-10 every 10 chapters, and the full volume at its review.
    assert len(fake.requests_for("consistency_auditor")) == 2
    assert "第 1-5 章质量简报" in out and "第 6-10 章质量简报" in out
    assert "合计 total: $" in out


def test_answers_are_resumable_and_a_rerun_writes_on(
    lifecycle: tuple[Path, list[str]], fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    novel, args = lifecycle
    stop_after_plan = [*args[:-1], "0"]
    assert main(stop_after_plan) == 0
    with NovelStore.open(novel, write=False) as store:
        cp = store.checkpoint()
        assert (cp["orchestrator_state"], cp["last_completed_chapter"]) == ("WRITING", 3)
    capsys.readouterr()
    # A second run recommends writing and, with -n 2, writes chapters 4 and 5 without asking anything again.
    assert main([*args[:-1], "2"]) == 0
    out = capsys.readouterr().out
    assert "推荐下一步 recommended: 继续写作" in out
    with NovelStore.open(novel, write=False) as store:
        assert store.checkpoint()["last_completed_chapter"] == 5
    assert len(fake.requests_for("world_builder")) == 1
    assert len(fake.requests_for("plot_architect")) == 1


def test_non_interactive_without_answers_lists_the_setup_questions(
    fake: FakeAnthropicServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    novel = tmp_path / "新书.novel"
    assert main(["start", str(novel), "--non-interactive"]) == 1
    err = capsys.readouterr().err
    assert "genre" in err and "platform" in err and "--answers-file" in err
    with NovelStore.open(novel, write=False) as store:
        assert store.checkpoint()["orchestrator_state"] == "INIT"
    assert not fake.requests
