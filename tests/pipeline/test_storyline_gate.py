"""Storyline checks and rule violations at the gate, end to end: 《青石问道》 with a dormant second storyline,
chapter 3 written through the real SDK against the fake model (issue 16 points 3 and 4).

What the author notices: the gate line on the terminal, the pipeline log's gate_issues / gate_violations,
whether a revision was asked for and what the reviser was told.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.folder import import_folder
from novel_desktop.storage.store import NovelStore
from tests.conftest import FIXTURES
from tests.e2e.replies import ENDING, PARAGRAPHS, judge_json, summarizer_json
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

LEAK_SENTENCE = "山道尽头，许象乾披着蓑衣站在雨里，正望着海的方向。"
JINGHAI = {
    "id": "jinghai_plan",
    "name": "靖海计划",
    "type": "conspiracy",
    "scope": "multi_volume",
    "pov_characters": ["许象乾"],
    "affiliated_factions": ["景国"],
    "timeline": "present",
    "status": "dormant",
    "description": "跨国海权博弈暗线",
}


def _novel(tmp_path: Path, *, events: list[dict[str, Any]] = (), contract3: bool = False) -> Path:  # type: ignore[assignment]
    """《青石问道》 with the dormant line 靖海计划 and, optionally, convergence events and a chapter-3 contract."""
    folder = tmp_path / "project"
    shutil.copytree(FIXTURES / "seed_project", folder)
    path = folder / "storylines" / "storylines.json"
    lines = json.loads(path.read_text(encoding="utf-8"))
    lines["storylines"].append(JINGHAI)
    path.write_text(json.dumps(lines, ensure_ascii=False), encoding="utf-8")
    path = folder / "volumes" / "vol-01" / "storyline-schedule.json"
    schedule = json.loads(path.read_text(encoding="utf-8"))
    schedule["convergence_events"] = list(events)
    schedule["dormant_storylines"] = ["jinghai_plan"]
    path.write_text(json.dumps(schedule, ensure_ascii=False), encoding="utf-8")
    if contract3:
        contract = {
            "chapter": 3,
            "storyline_id": "main_arc",
            "objectives": [
                {
                    "id": "OBJ-003-1",
                    "type": "plot",
                    "required": True,
                    "description": "林枫登上问心阶并通过第一关",
                }
            ],
        }
        target = folder / "volumes" / "vol-01" / "chapter-contracts" / "chapter-003.json"
        target.write_text(json.dumps(contract, ensure_ascii=False), encoding="utf-8")
    novel = tmp_path / "青石问道.novel"
    import_folder(folder, novel)
    return novel


def _writer_text(extra: str = LEAK_SENTENCE) -> str:
    # Within the platform's length range, so that no length pass or LENGTH issue joins the leak findings.
    body = "\n\n".join([*PARAGRAPHS * 7, extra, *PARAGRAPHS, *ENDING])
    return body + '\n\n```json\n{"chapter": 3, "storyline_id": "main_arc", "hints": [], "notes": []}\n```\n'


def _summary(leak_risk: str, refs: list[Any]) -> str:
    data = json.loads(summarizer_json())
    data["cross_references"] = refs
    data["leak_risk"] = leak_risk
    return json.dumps(data, ensure_ascii=False)


def _judge(score: float, change: Callable[[dict[str, Any]], None] | None = None) -> str:
    data = json.loads(judge_json(score))
    if change:
        change(data)
    return json.dumps(data, ensure_ascii=False)


def _run(novel: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str]:
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    err = capsys.readouterr().err
    with NovelStore.open(novel, write=False) as store:
        assert store.status().chapters == 3
        return store.pipeline_log(3), err


def _reviser_user_text(fake: FakeAnthropicServer, index: int = 0) -> str:
    body = fake.requests_for("reviser")[index].body
    return json.dumps(body["messages"], ensure_ascii=False)


# ---------------------------------------------------------------------------- LS-005 leaks
def test_a_dormant_lines_entity_is_a_leak_issue_with_its_sentence(
    tmp_path: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    novel = _novel(tmp_path)
    fake.script("chapter_writer", Reply(_writer_text(), chunk_size=60))
    # The structured form the prompt asks for.
    fake.script("summarizer", _summary("medium", [{"storyline_id": "jinghai_plan", "entity": "许象乾"}]))
    fake.script("quality_judge", _judge(4.5))
    log, err = _run(novel, capsys)

    assert log["gate_decision"] == "pass" and not fake.requests_for("reviser")  # medium risk: reported only
    (issue,) = log["gate_issues"]
    assert (issue["kind"], issue["rule"], issue["blocking"]) == ("leak", "LS-005", False)
    assert "许象乾" in issue["message"] and "靖海计划" in issue["message"]
    assert issue["evidence"] == LEAK_SENTENCE
    assert "[LS-005] 跨线泄漏" in err and f"原文：「{LEAK_SENTENCE}」" in err
    # The judge and the summarizer were shown the whitelist the check used.
    judge_text = json.dumps(fake.requests_for("quality_judge")[0].body["messages"], ensure_ascii=False)
    assert "不在白名单（本章不得出场）：「靖海计划」（jinghai_plan，dormant）" in judge_text
    summarizer_text = json.dumps(fake.requests_for("summarizer")[0].body["messages"], ensure_ascii=False)
    assert "许象乾" in summarizer_text and "本章不是交汇事件章" in summarizer_text
    with NovelStore.open(novel, write=False) as store:
        summary = store.summary(3) or ""
    assert '"cross_references": ["jinghai_plan:许象乾"]' in summary


def test_high_leak_risk_outside_a_convergence_forces_a_revision_even_at_4_5(
    tmp_path: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    novel = _novel(tmp_path)
    fake.script("chapter_writer", Reply(_writer_text(), chunk_size=60))
    fake.script("reviser", Reply(_writer_text("山道尽头空无一人。"), chunk_size=60))
    # An old reply: a bare name the novel's files map to the dormant line.
    fake.script("summarizer", _summary("high", ["许象乾"]), _summary("low", []))
    fake.script("quality_judge", _judge(4.5), _judge(4.5))
    log, err = _run(novel, capsys)

    assert len(fake.requests_for("reviser")) == 1
    assert (log["gate_decision"], log["revisions"], log["scores"]) == ("pass", 1, [4.5, 4.5])
    sent = _reviser_user_text(fake)
    assert "[LS-005] 跨线泄漏" in sent and LEAK_SENTENCE in sent
    assert "第 1 轮修订" in sent
    assert "强制修订" in err
    assert log["gate_issues"] == []  # the revised text no longer leaks


def test_inside_a_convergence_chapter_a_planned_crossing_is_no_issue(
    tmp_path: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    event = {
        "chapter_range": [3, 4],
        "involved_storylines": ["main_arc", "jinghai_plan"],
        "trigger": "雨夜相遇",
    }
    novel = _novel(tmp_path, events=[event])
    fake.script("chapter_writer", Reply(_writer_text(), chunk_size=60))
    fake.script("summarizer", _summary("high", ["jinghai_plan:许象乾"]))
    log, _ = _run(novel, capsys)
    assert log["gate_decision"] == "pass" and not fake.requests_for("reviser")
    assert log["gate_issues"] == []


def test_a_convergence_whose_line_never_appeared_is_reported(
    tmp_path: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    event = {
        "chapter_range": [2, 3],
        "involved_storylines": ["main_arc", "jinghai_plan"],
        "trigger": "海域震动",
    }
    novel = _novel(tmp_path, events=[event])
    log, err = _run(novel, capsys)
    assert log["gate_decision"] == "pass"  # LS-003 is soft: reported, not blocking
    (issue,) = log["gate_issues"]
    assert (issue["kind"], issue["rule"], issue["blocking"]) == ("convergence", "LS-003", False)
    assert "「靖海计划」（jinghai_plan，dormant）" in issue["message"] and "第 2-3 章" in issue["message"]
    assert "[LS-003] 交汇事件第 2-3 章（海域震动）" in err


def test_a_convergence_whose_lines_all_appeared_is_quiet(
    tmp_path: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    event = {"chapter_range": [2, 3], "involved_storylines": ["main_arc", "jinghai_plan"]}
    novel = _novel(tmp_path, events=[event])
    fake.script("chapter_writer", Reply(_writer_text(), chunk_size=60))
    fake.script("summarizer", _summary("low", [{"storyline_id": "jinghai_plan", "entity": "许象乾"}]))
    log, _ = _run(novel, capsys)
    assert log["gate_issues"] == []


# ---------------------------------------------------------------------------- violations
def test_a_listed_contract_violation_at_4_5_is_revised_and_the_reviser_reads_the_rule(
    tmp_path: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    novel = _novel(tmp_path)
    violation = {
        "rule_id": "C-LINFENG-001",
        "confidence": "high",
        "description": "林枫用掌心雷击退守门弟子",
        "evidence": "林枫掌心一翻，雷光炸开",
    }

    def broken(data: dict[str, Any]) -> None:
        data["violations"] = [violation]
        data["contract_verification"]["C-LINFENG-001"] = "violation"

    fake.script("quality_judge", _judge(4.5, broken), _judge(4.5))
    log, err = _run(novel, capsys)

    line = "C-LINFENG-001（凡人，尚未引气入体，不能使用任何法术）：林枫用掌心雷击退守门弟子 原文：「林枫掌心一翻，雷光炸开」"
    assert len(fake.requests_for("reviser")) == 1
    assert f"- {line}" in _reviser_user_text(fake)
    assert f"    - {line}\n" in err  # the gate's lines on the terminal
    assert "有 1 处高置信度契约违规，强制修订" in err
    assert (log["gate_decision"], log["revisions"]) == ("pass", 1)


def test_a_violation_only_in_contract_verification_still_forces_a_revision(
    tmp_path: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    novel = _novel(tmp_path, contract3=True)

    def broken(data: dict[str, Any]) -> None:
        data["violations"] = []
        data["contract_verification"] = {
            "l1_checks": [{"id": "W-001", "status": "pass"}],
            "l3_checks": [
                {"id": "OBJ-003-1", "status": "violation", "confidence": "high", "detail": "问心阶一笔带过"}
            ],
            "has_violations": True,
        }

    fake.script("quality_judge", _judge(4.5, broken), _judge(4.5))
    _run(novel, capsys)
    assert len(fake.requests_for("reviser")) == 1
    assert "- OBJ-003-1（林枫登上问心阶并通过第一关）：问心阶一笔带过" in _reviser_user_text(fake)


def test_two_revisions_that_keep_the_violation_commit_with_a_flag(
    tmp_path: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    novel = _novel(tmp_path)

    def broken(data: dict[str, Any]) -> None:
        data["violations"] = [{"rule_id": "W-001", "confidence": "high", "description": "越级使用法术"}]

    fake.script("quality_judge", *[_judge(4.6, broken)] * 3)
    log, err = _run(novel, capsys)
    assert len(fake.requests_for("reviser")) == 2
    assert "第 2 轮修订" in _reviser_user_text(fake, 1)
    assert (log["gate_decision"], log["revisions"]) == ("force_pass", 2)
    assert any(v.startswith("W-001（") and "越级使用法术" in v for v in log["gate_violations"])
    assert "强制提交并标记" in err
