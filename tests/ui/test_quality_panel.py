"""The quality report: the seed chapter's verdict as the author sees it, clicks that ask for a passage, the
novel's trends, empty states, and the English catalogue of the panel and the settings dialog."""

from __future__ import annotations

import ast
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPointF, Qt
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.evaluation import DIMENSION_NAMES
from novel_desktop.storage.folder import import_folder
from novel_desktop.ui.quality_panel import QualityPanel
from novel_desktop.ui.quality_text import gate_path
from tests.conftest import FIXTURES

SEED = FIXTURES / "seed_project"


def _seed_eval(n: int) -> dict[str, Any]:
    return json.loads((SEED / "evaluations" / f"chapter-{n:03d}-eval.json").read_text(encoding="utf-8"))


@pytest.fixture
def make_project(tmp_path: Path) -> Iterator[Callable[..., ProjectController]]:
    """The seed novel with chapter 2's evaluation and log replaced (None removes the file)."""
    opened: list[ProjectController] = []

    def make(
        evaluation: dict[str, Any] | None = None,
        log: dict[str, Any] | None = None,
        *,
        drop_eval: bool = False,
    ) -> ProjectController:
        folder = tmp_path / f"seed{len(opened)}"
        shutil.copytree(SEED, folder)
        eval_path = folder / "evaluations" / "chapter-002-eval.json"
        log_path = folder / "logs" / "chapter-002-log.json"
        if drop_eval:
            eval_path.unlink()
        elif evaluation is not None:
            eval_path.write_text(json.dumps(evaluation, ensure_ascii=False), encoding="utf-8")
        if log is not None:
            log_path.write_text(json.dumps(log, ensure_ascii=False), encoding="utf-8")
        novel = tmp_path / f"seed{len(opened)}.novel"
        import_folder(folder, novel)
        controller = ProjectController()
        controller.open(novel)
        opened.append(controller)
        return controller

    yield make
    for controller in opened:
        controller.close()


@pytest.fixture
def revised_chapter() -> dict[str, Any]:
    """Chapter 2 as judged after one revision, with every kind of finding."""
    ev = _seed_eval(2)
    ev["overall"] = 3.8
    ev["recommendation"] = "polish"
    ev["contract_verification"]["l2_checks"][2] = {"id": "C-CHENLAO-001", "status": "violation"}
    ev["contract_verification"]["has_violations"] = True
    ev["violations"] = [
        {
            "rule_id": "C-CHENLAO-001",
            "confidence": "medium",
            "description": "陈老说破了残玉的来历",
            "evidence": "果然是它。",
        }
    ]
    ev["risk_flags"] = ["character_speech_missing:陈老"]
    ev["required_fixes"] = [
        {"target": "数到第九张网，胸口一热。", "instruction": "补一处陈老的反问。"},
        {"target": "天亮时雨停了。", "instruction": "转场前加一句林枫的心理活动。"},
    ]
    ev["issues"] = ["陈老台词过满"]
    return ev


def _panel(qtbot: QtBot, project: ProjectController) -> QualityPanel:
    panel = QualityPanel(project)
    qtbot.addWidget(panel)
    panel.resize(1366, 768)
    panel.show()
    return panel


# ---------------------------------------------------------------------------------------------- 本章
def test_the_seed_chapter_shows_its_eight_scores_reasons_and_evidence(
    qtbot: QtBot, project: ProjectController
) -> None:
    panel = _panel(qtbot, project)
    panel.show_chapter(1)
    expected = _seed_eval(1)["scores"]

    assert panel.dimension_chart is not None
    assert len(panel.dimension_chart.scores()) == 8
    # The chart lists 情节逻辑 at the top, each bar named with its weight.
    assert panel.dimension_chart.rows()[0][0] == "情节逻辑 18%"
    shown = dict(zip(panel.dimension_order, panel.dimension_chart.scores(), strict=True))
    assert shown == {name: float(entry["score"]) for name, entry in expected.items()}
    assert set(panel.dimension_order) == set(DIMENSION_NAMES)
    for name, entry in expected.items():
        assert panel.reason_labels[name].text() == entry["reason"]
        assert entry["evidence"].strip("“”") in panel.evidence_labels[name].text()
    assert panel.score_label.text() == "3.84"
    assert "二次润色" in panel.recommendation_label.text()
    assert "二次润色后通过" in panel.gate_label.text()
    checks = sum(len(v) for k, v in _seed_eval(1)["contract_verification"].items() if k.endswith("_checks"))
    assert f"全部 {checks} 项通过" in _texts(panel)


def test_clicking_evidence_asks_for_that_passage(qtbot: QtBot, project: ProjectController) -> None:
    panel = _panel(qtbot, project)
    panel.show_chapter(1)
    quote = _seed_eval(1)["scores"]["immersion"]["evidence"]
    with qtbot.waitSignal(panel.jump_requested) as signal:
        qtbot.mouseClick(panel.evidence_labels["immersion"], Qt.MouseButton.LeftButton)
    assert signal.args == [1, quote]


def test_required_fixes_violations_and_the_revision_path(
    qtbot: QtBot, make_project: Callable[..., ProjectController], revised_chapter: dict[str, Any]
) -> None:
    log = json.loads((SEED / "logs" / "chapter-002-log.json").read_text(encoding="utf-8"))
    log.update(scores=[3.2, 3.8], revisions=1, gate_decision="polish")
    panel = _panel(qtbot, make_project(revised_chapter, log))
    panel.show_chapter(2)

    assert panel.gate_label.text() == "门控：3.2 → 修订 → 3.8，二次润色后通过"
    assert len(panel.fix_labels) == 2
    assert "补一处陈老的反问" in panel.fix_labels[0].text()
    with qtbot.waitSignal(panel.jump_requested) as signal:
        qtbot.mouseClick(panel.fix_labels[1], Qt.MouseButton.LeftButton)
    assert signal.args == [2, "天亮时雨停了。"]

    assert panel.contract_labels["C-CHENLAO-001"] == "violation"
    assert panel.contract_labels["W-001"] == "pass"
    texts = _texts(panel)
    assert "1 / 11 项未通过：C-CHENLAO-001" in texts
    assert "中置信度" in texts
    assert "角色没有体现语癖：陈老" in texts
    assert "陈老台词过满" in texts
    with qtbot.waitSignal(panel.jump_requested) as signal:
        qtbot.mouseClick(panel.violation_labels[0], Qt.MouseButton.LeftButton)
    assert signal.args == [2, "果然是它。"]


def test_a_report_built_in_parts_ends_the_same_and_a_newer_one_drops_the_older_parts(
    qtbot: QtBot, make_project: Callable[..., ProjectController], revised_chapter: dict[str, Any]
) -> None:
    # The window follows a committed chapter with the report in parts (a part per event-loop turn).
    panel = _panel(qtbot, make_project(revised_chapter))
    panel.show_chapter(2)
    whole = _texts(panel)
    panel._shown_key = None  # show the same report again, now in parts
    panel.show_chapter(2, in_parts=True)
    assert panel.score_label.text()  # the scores are there at once
    assert panel.fix_labels == []  # the fixes come a turn later
    qtbot.waitUntil(lambda: len(panel.fix_labels) == 2, timeout=5_000)
    qtbot.wait(20)
    assert _texts(panel) == whole

    panel._shown_key = None
    panel.show_chapter(2, in_parts=True)
    panel.show_chapter(1)  # another chapter before the first one's parts arrive
    qtbot.wait(50)
    assert panel.chapter == 1
    assert panel.fix_labels == []  # chapter 1 has none; chapter 2's never arrived
    assert "补一处陈老的反问" not in _texts(panel)


def test_a_required_fix_can_be_followed_from_the_keyboard(
    qtbot: QtBot, make_project: Callable[..., ProjectController], revised_chapter: dict[str, Any]
) -> None:
    panel = _panel(qtbot, make_project(revised_chapter))
    panel.show_chapter(2)
    with qtbot.waitSignal(panel.jump_requested) as signal:
        qtbot.keyClick(panel.fix_labels[0], Qt.Key.Key_Return)
    assert signal.args == [2, "数到第九张网，胸口一热。"]


def test_the_judges_own_contract_shape_is_shown_too(
    qtbot: QtBot, make_project: Callable[..., ProjectController]
) -> None:
    ev = _seed_eval(2)
    ev["contract_verification"] = {"W-001": "pass", "OBJ-002-1": "fail"}
    panel = _panel(qtbot, make_project(ev))
    panel.show_chapter(2)
    assert panel.contract_labels == {"W-001": "pass", "OBJ-002-1": "violation"}
    assert "1 / 2 项未通过：OBJ-002-1" in _texts(panel)


def test_a_chapter_without_a_verdict_says_so(
    qtbot: QtBot, make_project: Callable[..., ProjectController]
) -> None:
    panel = _panel(qtbot, make_project(drop_eval=True))
    panel.show_chapter(2)
    assert panel.dimension_chart is None
    assert "第 2 章还没有评审结果" in panel.empty_label.text()
    assert panel.empty_label.isVisible()


def test_opening_the_panel_shows_the_latest_judged_chapter(qtbot: QtBot, project: ProjectController) -> None:
    panel = _panel(qtbot, project)
    assert panel.chapter == 2
    assert panel.score_label.text() == "4.28"


def test_the_chapter_list_switches_the_report_and_open_asks_for_the_chapter(
    qtbot: QtBot, project: ProjectController
) -> None:
    panel = _panel(qtbot, project)
    panel.chapter_combo.setCurrentIndex(panel.chapter_combo.findData(1))
    panel.chapter_combo.activated.emit(panel.chapter_combo.currentIndex())
    assert panel.score_label.text() == "3.84"
    with qtbot.waitSignal(panel.chapter_requested) as signal:
        qtbot.mouseClick(panel.open_button, Qt.MouseButton.LeftButton)
    assert signal.args == [1]


def test_gate_path_without_a_log_is_the_final_score() -> None:
    from novel_desktop.domain.evaluation import Evaluation

    ev = Evaluation.model_validate(_seed_eval(2))
    assert gate_path(None, ev) == "4.28"
    assert gate_path({"scores": [2.9, 3.4, 3.6], "gate_decision": "force_pass"}, ev) == (
        "2.9 → 修订 → 3.4 → 修订 → 3.6，强制通过（已标记）"
    )


# ---------------------------------------------------------------------------------------------- 全书
def test_the_novel_trend_has_one_point_per_judged_chapter_and_the_gate_lines(
    qtbot: QtBot, project: ProjectController
) -> None:
    panel = _panel(qtbot, project)
    panel.show_novel()
    points = [(p.x(), p.y()) for p in panel.score_series.points()]
    assert points == [(1.0, 3.84), (2.0, 4.28)]
    assert {p.y() for p in panel.pass_line.points()} == {4.0}
    assert {p.y() for p in panel.polish_line.points()} == {3.5}
    assert "已评审 2 章" in panel.trend_summary.text()
    qtbot.waitUntil(lambda: panel.ai_scan_done)
    assert [p.x() for p in panel.ai_series.points()] == [1.0, 2.0]
    assert "AI 高频词" in panel.ai_status.text()


def test_a_chapter_without_a_verdict_has_no_point_on_the_trend(
    qtbot: QtBot, make_project: Callable[..., ProjectController]
) -> None:
    panel = _panel(qtbot, make_project(drop_eval=True))
    panel.show_novel()
    assert [p.x() for p in panel.score_series.points()] == [1.0]
    qtbot.waitUntil(lambda: panel.ai_scan_done)
    # Both chapters have text, so both have an AI-phrase density.
    assert len(panel.ai_series.points()) == 2


def test_ai_phrases_in_the_text_raise_the_density(qtbot: QtBot, project: ProjectController) -> None:
    text = project.chapter_text(2)
    project.save_chapter(2, text + "\n他的嘴角微微上扬，眼中闪过一丝精光。不禁倒吸一口凉气。")
    panel = _panel(qtbot, project)
    panel.show_novel()
    qtbot.waitUntil(lambda: panel.ai_scan_done)
    assert panel.ai_hits[2] > panel.ai_hits[1]
    assert "最高为第 2 章" in panel.ai_status.text()


def test_clicking_the_trend_opens_that_chapter(qtbot: QtBot, project: ProjectController) -> None:
    panel = _panel(qtbot, project)
    panel.show_novel()
    with qtbot.waitSignal(panel.chapter_requested) as signal:
        panel.score_series.clicked.emit(QPointF(1.2, 3.8))
    assert signal.args == [1]
    assert panel.tabs.currentIndex() == 0
    assert panel.chapter == 1


def test_a_new_verdict_reaches_the_open_trend(
    qtbot: QtBot, make_project: Callable[..., ProjectController]
) -> None:
    project = make_project(drop_eval=True)
    panel = _panel(qtbot, project)
    panel.show_novel()
    assert len(panel.score_series.points()) == 1
    # What the pipeline does when it commits a judged chapter (views only see the controller's signal).
    project.store.put_staging("chapters/chapter-002.md", project.chapter_text(2), kind="refined")
    project.store.put_staging("evaluations/chapter-002-eval.json", json.dumps(_seed_eval(2)))
    project.store.commit_chapter(2, volume=1, storyline_id="main_arc")
    project.notify_pipeline_commit()
    # The views re-read on later event-loop turns (never inside the pipeline's coroutine).
    qtbot.waitUntil(lambda: [p.x() for p in panel.score_series.points()] == [1.0, 2.0])


# ---------------------------------------------------------------------------------------------- English
def _tr_literals(path: Path) -> set[str]:
    """Every string literal passed to tr() or _t() (implicit concatenations joined, as Python does)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("tr", "_t")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


def test_the_english_catalogue_covers_the_panel_and_the_settings_with_the_same_slots() -> None:
    import re

    from novel_desktop.llm.providers import PRESETS
    from novel_desktop.paths import resource
    from novel_desktop.ui import agent_names, quality_panel, quality_text, settings_dialog

    catalogue = json.loads(resource("i18n", "en", "quality_settings.json").read_text(encoding="utf-8"))
    root = Path(quality_panel.__file__).resolve().parent.parent
    literals: set[str] = set()
    for name in (
        "ui/quality_panel.py",
        "ui/quality_chapter.py",
        "ui/quality_trend.py",
        "ui/quality_text.py",
        "ui/settings_dialog.py",
        "ui/provider_notes.py",
        "ui/session_key.py",
        "controllers/settings_controller.py",
    ):
        literals |= _tr_literals(root / name)
    literals |= set(DIMENSION_NAMES.values()) | set(quality_text.RECOMMENDATIONS.values())
    literals |= set(quality_text.GATE_DECISIONS.values()) | set(quality_text.RISK_KINDS.values())
    literals |= {title for _, title in quality_text.CONTRACT_LAYERS} | set(quality_text.CONFIDENCE.values())
    literals |= set(agent_names.ROLE_NAMES.values()) | {label for _, label in settings_dialog.PRICE_FIELDS}
    literals |= {p.display_name for p in PRESETS.values()} | {p.key_help for p in PRESETS.values()}
    missing = sorted(literals - set(catalogue))
    assert missing == []
    slots = re.compile(r"\{[^{}]*\}")
    for source, english in catalogue.items():
        assert sorted(slots.findall(source)) == sorted(slots.findall(english)), source
        assert not re.search(r"[\u4e00-\u9fff]", english), english


def test_the_panel_speaks_english_when_asked(qtbot: QtBot, project: ProjectController) -> None:
    from novel_desktop import i18n

    i18n.set_language("en")
    try:
        panel = _panel(qtbot, project)
        panel.show_chapter(1)
        assert panel.tabs.tabText(0) == "Chapter"
        assert "Polish" in panel.recommendation_label.text()
    finally:
        i18n.set_language("zh")


def _texts(panel: QualityPanel) -> str:
    from PySide6.QtWidgets import QLabel

    widget = panel.report_scroll.widget()
    assert widget is not None
    return "\n".join(label.text() for label in widget.findChildren(QLabel))
