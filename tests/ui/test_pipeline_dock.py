"""PipelineDock and LiveDraftView: what the author sees while a chapter is written."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.pipeline_dock import LiveDraftView, PipelineDock
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

pytestmark = pytest.mark.usefixtures("gui_thread_gc")


@pytest.fixture
def widgets(
    qtbot: QtBot, project: ProjectController
) -> tuple[PipelineController, PipelineDock, LiveDraftView]:
    controller = PipelineController(project)
    dock = PipelineDock(controller)
    draft = LiveDraftView(controller)
    for w in (dock, draft):
        qtbot.addWidget(w)
        w.resize(1200, 400)
        w.show()
    return controller, dock, draft


def wait_finished(qloop: qasync.QEventLoop, controller: PipelineController, timeout: float = 30) -> None:
    async def main() -> None:
        done = asyncio.get_running_loop().create_future()
        controller.finished.connect(lambda: done.done() or done.set_result(None))
        await asyncio.wait_for(done, timeout)

    qloop.run_until_complete(main())


def step_states(dock: PipelineDock) -> list[str]:
    return [s.state for s in dock.steps]


def test_one_click_continue_shows_every_stage_the_tokens_and_the_streamed_draft(
    qtbot: QtBot,
    qloop: qasync.QEventLoop,
    fake: FakeAnthropicServer,
    widgets: tuple[PipelineController, PipelineDock, LiveDraftView],
) -> None:
    controller, dock, draft = widgets
    assert [s.text() for s in dock.steps] == ["写作", "摘要/润色", "评审", "门控", "提交"]
    assert dock.continue_button.isEnabled() and not dock.stop_button.isEnabled()
    seen_states: list[list[str]] = []
    controller.stage_started.connect(lambda *_: seen_states.append(step_states(dock)))
    seen_buttons: list[tuple[bool, bool]] = []
    controller.chapter_started.connect(
        lambda *_: seen_buttons.append((dock.continue_button.isEnabled(), dock.stop_button.isEnabled()))
    )

    qtbot.mouseClick(dock.continue_button, Qt.MouseButton.LeftButton)
    wait_finished(qloop, controller)

    assert seen_buttons == [(False, True)]  # while running: 停止 on, 续写 off
    # Each stage highlighted in turn, the earlier ones checked.
    assert seen_states[0] == ["current", "pending", "pending", "pending", "pending"]
    assert ["done", "done", "current", "pending", "pending"] in seen_states
    assert seen_states[-1] == ["done", "done", "done", "done", "current"]
    assert step_states(dock) == ["done"] * 5
    assert dock.steps[0].text() == "✓ 写作"
    assert dock.chapter_label.text() == "第 3 章"
    usage = dock.usage_label.text()
    assert "输入 0 " not in usage and "$0.0000" not in usage and "已写 0 字" not in usage
    lines = dock.log_lines()
    assert lines[0] == "第 3 章 开始"
    assert any(line.startswith("第 3 章 门控：通过（4.2 分）") for line in lines)
    assert lines[-1] == "第 3 章 已提交"
    assert dock.continue_button.isEnabled() and not dock.stop_button.isEnabled()
    draft.flush()
    shown = draft.toPlainText()
    assert shown.startswith("山门前的石阶湿得发亮")
    assert "```" not in shown  # the writer's state hints are not prose
    assert draft.isReadOnly()


def test_stop_button_stops_the_stream_and_marks_the_step(
    qtbot: QtBot,
    qloop: qasync.QEventLoop,
    fake: FakeAnthropicServer,
    widgets: tuple[PipelineController, PipelineDock, LiveDraftView],
    project: ProjectController,
) -> None:
    controller, dock, _draft = widgets
    fake.script("chapter_writer", Reply.slow("慢" * 2000, delay=0.02, chunk_size=4))
    pieces: list[str] = []

    def on_delta(_chapter: int, text: str) -> None:
        pieces.append(text)
        if len(pieces) == 3:
            dock.stop_button.click()

    controller.text_delta.connect(on_delta)
    dock.continue_button.click()
    wait_finished(qloop, controller, timeout=10)

    assert step_states(dock)[0] == "stopped"
    assert dock.log_lines()[-1].startswith("已停止")
    assert not dock.error_label.isVisible()
    assert len(project.chapters()) == 2


def test_a_provider_error_is_shown_with_what_to_do(
    qtbot: QtBot,
    qloop: qasync.QEventLoop,
    fake: FakeAnthropicServer,
    widgets: tuple[PipelineController, PipelineDock, LiveDraftView],
) -> None:
    controller, dock, _draft = widgets
    # 续写 runs the Orchestrator, which tries a failed step once more (§8.2 ERROR_RETRY): both attempts fail.
    fake.script("chapter_writer", *[Reply.http_error(529)] * 6)
    dock.continue_button.click()
    wait_finished(qloop, controller)
    assert dock.error_label.isVisible()
    assert "繁忙" in dock.error_label.text() and "续写" in dock.error_label.text()
    assert dock.log_lines()[-1].startswith("✖ 模型服务繁忙")
    assert step_states(dock)[0] == "stopped"
    # The next run clears the old error.
    dock.continue_button.click()
    wait_finished(qloop, controller)
    assert not dock.error_label.isVisible()


def test_revision_gate_and_rebuild_in_the_log(
    qtbot: QtBot, widgets: tuple[PipelineController, PipelineDock, LiveDraftView]
) -> None:
    controller, dock, draft = widgets
    controller.chapter_started.emit(7, "judged")
    controller.stage_started.emit(7, "gate")
    controller.gate_decided.emit(7, "revise", 3.2, "综合 3.2，按评审意见修订")
    controller.stage_started.emit(7, "revise")
    assert step_states(dock) == ["current", "pending", "pending", "pending", "pending"]
    assert dock.steps[0].text() == "修订"
    controller.text_delta.emit(7, "新的开头")
    controller.text_reset.emit(7)
    controller.text_delta.emit(7, "重来的开头")
    draft.flush()
    assert draft.toPlainText() == "重来的开头"
    controller.warning.emit(7, "第 7 章的状态补丁未能应用：x")
    controller.rebuild_finished.emit({"chapter": 4, "disagreeing": {5: ["x"], 6: ["y"]}})
    assert dock.log_lines() == [
        "第 7 章 从中断处继续（评审完成）",  # the stage in words, not its id
        "第 7 章 门控：修订（3.2 分）— 综合 3.2，按评审意见修订",  # gate and revise: said by their own lines
        "第 7 章 按评审意见修订",
        "第 7 章 连接中断，正在重新生成",
        "⚠ 第 7 章的状态补丁未能应用：x",
        "第 4 章 重建完成；第 5、6 章可能与修改后的内容不一致，请检查",
    ]


def test_the_log_names_each_stage_never_its_id(
    qtbot: QtBot, widgets: tuple[PipelineController, PipelineDock, LiveDraftView]
) -> None:
    from novel_desktop.i18n import set_language

    controller, dock, _draft = widgets
    controller.chapter_started.emit(3, "")
    for stage in ("draft", "length", "summarize", "refine", "judge", "judge_secondary", "polish", "commit"):
        controller.stage_started.emit(3, stage)
    controller.stage_started.emit(4, "draft")  # the next chapter's early draft, keyed by its own chapter
    controller.chapter_started.emit(5, "refined")
    assert dock.log_lines() == [
        "第 3 章 开始",
        "第 3 章 · 写作",
        "第 3 章 · 字数调整",
        "第 3 章 · 摘要",
        "第 3 章 · 润色",
        "第 3 章 · 评审",
        "第 3 章 · 复核",
        "第 3 章 · 二次润色",
        "第 3 章 · 提交",
        "第 4 章 · 写作",
        "第 5 章 从中断处继续（润色完成）",
    ]
    ids = ("draft", "length", "summarize", "refine", "judge_secondary", "polish", "commit", "refined")
    assert not any(stage in line for line in dock.log_lines() for stage in ids)
    set_language("en")
    try:
        controller.stage_started.emit(5, "judge_secondary")
        controller.stage_started.emit(5, "refine")
    finally:
        set_language("zh")
    assert dock.log_lines()[-2:] == ["Chapter 5 · Second review", "Chapter 5 · Refine"]


def test_the_english_catalogue_covers_the_pipeline_ui() -> None:
    """Every string the pipeline UI passes to tr() has an English translation."""
    import re

    from novel_desktop.paths import resource
    from novel_desktop.ui import ask_dialog, pipeline_dock, queue_panel, style_drop

    catalogue: dict[str, str] = {}
    for name in ("pipeline_ui.json", "drops.json"):  # the style page's drop zone's texts live with the drops
        catalogue |= json.loads(resource("i18n", "en", name).read_text(encoding="utf-8"))
    modules = [
        "controllers/pipeline_controller.py",
        "controllers/jobs.py",
        "controllers/style_controller.py",
        "ui/pipeline_dock.py",
        "ui/queue_panel.py",
        "ui/ask_dialog.py",
        "ui/style_drop.py",
    ]
    root = Path(pipeline_dock.__file__).resolve().parent.parent
    literals = {
        m.group(1)
        for name in modules
        for m in re.finditer(r'tr\(\s*"([^"]*)"', (root / name).read_text(encoding="utf-8"))
    }
    from novel_desktop.controllers.pipeline_events import stage_name
    from novel_desktop.pipeline.events import Stage
    from novel_desktop.pipeline.orchestrator import STAGE_DONE

    tables = [title for title, _ in pipeline_dock.STEPS] + [stage_name(s) for s in [*Stage, *STAGE_DONE, "?"]]
    tables += list(pipeline_dock.GATE_DECISIONS.values()) + list(pipeline_dock.STATE_NAMES.values())
    tables += list(ask_dialog.TOPIC_TITLES.values())
    tables += list(queue_panel.QUEUE_STATES) + [title for title, _ in queue_panel.QUEUE_STEPS]
    tables += [label for _, label in style_drop.SOURCE_TYPES] + [
        label for _, label, _ in style_drop.METRIC_LABELS
    ]
    missing = sorted((literals | set(tables)) - set(catalogue))
    assert missing == []


def test_continue_is_offered_only_with_a_novel_open(qtbot: QtBot, seed_novel: Path) -> None:
    project = ProjectController()
    dock = PipelineDock(PipelineController(project))
    qtbot.addWidget(dock)
    assert not dock.continue_button.isEnabled() and not dock.stop_button.isEnabled()
    project.open(seed_novel)
    try:
        assert dock.continue_button.isEnabled() and dock.count_box.isEnabled()
    finally:
        project.close()
    assert not dock.continue_button.isEnabled()


def test_opening_a_novel_with_an_interrupted_chapter_says_where_it_stopped(
    qtbot: QtBot, seed_novel: Path
) -> None:
    from novel_desktop.storage.store import NovelStore

    with NovelStore.open(seed_novel) as store:
        store.update_checkpoint(inflight_chapter=3, pipeline_stage="judged")
    project = ProjectController()
    dock = PipelineDock(PipelineController(project))
    qtbot.addWidget(dock)
    project.open(seed_novel)
    try:
        assert dock.chapter_label.text() == "第 3 章未完成"
        assert any("第 3 章上次停在“评审完成”，续写会从那里接着做" in line for line in dock.log_lines())
    finally:
        project.close()
