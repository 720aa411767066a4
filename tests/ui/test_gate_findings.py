"""The window shows each gate finding with the rule it breaks: the dock's log under the gate line and the
quality panel's 门控发现 section (issue 16 point 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.controllers.pipeline_events import emit_chapter_event
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.gate import GateIssue
from novel_desktop.pipeline.events import GateDecided
from novel_desktop.storage.folder import import_folder
from novel_desktop.ui.pipeline_dock import PipelineDock
from novel_desktop.ui.quality_panel import QualityPanel
from tests.conftest import FIXTURES

pytestmark = pytest.mark.usefixtures("gui_thread_gc")

VIOLATION = (
    "C-LINFENG-001（凡人，尚未引气入体，不能使用任何法术）：林枫用掌心雷击退守门弟子 原文：「雷光炸开」"
)
LEAK = GateIssue(
    "leak", "LS-005", "跨线泄漏：「许象乾」属于本章不活跃的故事线「靖海计划」", "许象乾站在雨里。"
)


def test_the_dock_lists_each_violation_with_its_rule_under_the_gate_line(
    qtbot: QtBot, project: ProjectController
) -> None:
    controller = PipelineController(project)
    dock = PipelineDock(controller)
    qtbot.addWidget(dock)
    dock.resize(1200, 400)
    dock.show()
    event = GateDecided(3, "revise", 4.5, "有 1 处高置信度契约违规，强制修订", 0, (VIOLATION, LEAK.line()))
    assert emit_chapter_event(controller, event)
    assert dock.log_lines()[-3:] == [
        "第 3 章 门控：修订（4.5 分）— 有 1 处高置信度契约违规，强制修订",
        f"    · {VIOLATION}",
        f"    · {LEAK.line()}",
    ]
    dock.grab().save("/tmp/gate_dock.png")


def test_the_quality_panel_shows_the_gate_findings_of_the_log(qtbot: QtBot, tmp_path: Path) -> None:
    folder = tmp_path / "seed"
    shutil.copytree(FIXTURES / "seed_project", folder)
    log_path = folder / "logs" / "chapter-002-log.json"
    log = json.loads(log_path.read_text(encoding="utf-8"))
    convergence = GateIssue(
        "convergence", "LS-003", "交汇事件第 1-2 章涉及的故事线「靖海计划」在这几章里没有出场"
    )
    log.update(gate_violations=[VIOLATION], gate_issues=[LEAK.to_json(), convergence.to_json()])
    log_path.write_text(json.dumps(log, ensure_ascii=False), encoding="utf-8")
    novel = tmp_path / "seed.novel"
    import_folder(folder, novel)
    project = ProjectController()
    project.open(novel)
    try:
        panel = QualityPanel(project)
        qtbot.addWidget(panel)
        panel.resize(1366, 900)
        panel.show()
        panel.show_chapter(2)
        shown = [label.text() for label in panel.gate_finding_labels]
        assert shown == [f"✗ {VIOLATION}", f"⚠ {LEAK.line()}", f"⚠ {convergence.line()}"]
        panel.show_chapter(1)  # a chapter whose log has no findings
        assert panel.gate_finding_labels == []
        panel.show_chapter(2)
        label = panel.gate_finding_labels[0]
        content = label.parentWidget()
        top = label.mapTo(content, label.rect().topLeft()).y()
        content.grab(content.rect().adjusted(0, top - 400, 0, 0)).save("/tmp/gate_quality.png")
    finally:
        project.close()
