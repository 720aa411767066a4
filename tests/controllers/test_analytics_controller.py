"""The analytics figures equal what the novel holds: pass rate from the pipeline logs' gate decisions, the
judge issues grouped by rule, tokens and cost from the ledger, words per day from the committed versions."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from novel_desktop.controllers.analytics_controller import analytics
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.ledger import ModelCall
from novel_desktop.domain.text import count_chars
from novel_desktop.storage.folder import import_folder
from tests.conftest import FIXTURES

SEED = FIXTURES / "seed_project"


def _log(folder: Path, n: int, **fields: object) -> None:
    path = folder / "logs" / f"chapter-{n:03d}-log.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(fields)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[ProjectController]:
    """The seed novel: chapter 1 forced through the gate with two issues, chapter 2 passed with one of the same
    rule; ledger rows for chapters 1 and 2 and one for planning (no chapter)."""
    folder = tmp_path / "seed"
    shutil.copytree(SEED, folder)
    _log(
        folder,
        1,
        gate_decision="force_pass",
        gate_issues=[
            {"kind": "length", "rule": "LENGTH", "message": "正文过短", "evidence": "", "blocking": True},
            {"kind": "ai_phrase", "rule": "", "message": "AI 高频词", "evidence": "", "blocking": False},
        ],
        gate_violations=["W-001（灵力不可凭空恢复）：一夜之间灵力全满"],
    )
    _log(folder, 2, gate_decision="pass", gate_violations=["W-001：又一次", "W-001：第二处"], gate_issues=[])
    path = tmp_path / "青石问道.novel"
    import_folder(folder, path)
    controller = ProjectController()
    controller.open(path)
    store = controller.store
    store.record_model_call(
        ModelCall(
            "chapter_writer", "m", "write", chapter=1, input_tokens=1000, output_tokens=3000, cost_usd=0.05
        )
    )
    store.record_model_call(
        ModelCall(
            "quality_judge",
            "m",
            "judge",
            chapter=1,
            input_tokens=500,
            cache_read_input_tokens=200,
            output_tokens=100,
            cost_usd=0.01,
        )
    )
    store.record_model_call(
        ModelCall(
            "chapter_writer", "m", "write", chapter=2, input_tokens=900, output_tokens=2800, cost_usd=0.04
        )
    )
    store.record_model_call(ModelCall("world_builder", "m", "plan", input_tokens=10, cost_usd=0.5))
    yield controller
    controller.close()


def test_pass_rate_counts_the_chapters_not_forced_through_the_gate(project: ProjectController) -> None:
    data = analytics(project)
    assert data.committed == [1, 2] and data.forced == [1]
    assert data.passed == 1 and data.pass_rate == 0.5


def test_judge_issues_are_grouped_by_rule_once_per_chapter(project: ProjectController) -> None:
    issues = {i.rule: i.chapters for i in analytics(project).issues}
    # W-001: chapter 1 once and chapter 2 (twice in its log, counted once); LENGTH by rule, the other by kind.
    assert issues == {"W-001": 2, "LENGTH": 1, "ai_phrase": 1}
    assert analytics(project).issues[0].rule == "W-001"


def test_tokens_and_cost_per_chapter_are_the_ledger_s(project: ProjectController) -> None:
    costs = analytics(project).costs
    assert set(costs) == {1, 2}  # the planning call belongs to no chapter
    assert costs == {n: c for n, c in project.store.chapter_costs().items() if n in (1, 2)}
    assert costs[1].total_input_tokens == 1700 and costs[1].output_tokens == 3100
    assert costs[1].cost_usd == pytest.approx(0.06)


def test_words_per_day_count_hand_edits_and_not_imported_text(project: ProjectController) -> None:
    assert analytics(project).days == []  # both chapters were imported
    before = project.chapter_text(1)
    added = "\n\n林枫站在山门前，看着远处的云海，心里第一次生出了留下来的念头。"
    project.save_chapter(1, before + added)
    days = analytics(project).days
    assert len(days) == 1
    assert days[0].day == datetime.now().astimezone().date()
    assert days[0].pipeline == 0
    assert days[0].manual == count_chars(before + added) - count_chars(before)


def test_a_closed_project_has_no_data() -> None:
    data = analytics(ProjectController())
    assert data.empty and data.pass_rate is None
