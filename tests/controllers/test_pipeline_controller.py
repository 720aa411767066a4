"""PipelineController: the chapter pipeline on the qasync loop against the fake Messages API server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import qasync
from PySide6.QtCore import QTimer, SignalInstance
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.novel_ask import AnswerSpec
from novel_desktop.domain.novel_ask_answers import build_answer_spec
from novel_desktop.pipeline.interaction import InteractionRequest
from novel_desktop.ui.ask_dialog import AskDialog, dialog_asker
from tests.e2e.replies import judge_json, summarizer_json, writer_text
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

pytestmark = pytest.mark.usefixtures("gui_thread_gc")


class Recorder:
    """Every signal of a controller, in order."""

    NAMES = (
        "running_changed",
        "chapter_started",
        "stage_started",
        "text_delta",
        "text_reset",
        "usage_updated",
        "gate_decided",
        "chapter_committed",
        "chapter_paused",
        "warning",
        "question_asked",
        "cancelled",
        "failed",
        "rebuild_finished",
        "finished",
    )

    def __init__(self, controller: PipelineController) -> None:
        self.events: list[tuple[str, tuple[Any, ...]]] = []
        for name in self.NAMES:
            signal: SignalInstance = getattr(controller, name)
            signal.connect(lambda *args, _n=name: self.events.append((_n, args)))

    def names(self) -> list[str]:
        return [n for n, _ in self.events]

    def args(self, name: str) -> list[tuple[Any, ...]]:
        return [a for n, a in self.events if n == name]


def run_until_finished(
    qloop: qasync.QEventLoop, controller: PipelineController, start: Any, timeout: float = 30
) -> None:
    """Start the controller from inside the running loop (as a click would) and wait for ``finished``."""

    async def main() -> None:
        done = asyncio.get_running_loop().create_future()
        controller.finished.connect(lambda: done.done() or done.set_result(None))
        start()
        await asyncio.wait_for(done, timeout)

    qloop.run_until_complete(main())


def answer_with(choice: str) -> Any:
    def asker(request: InteractionRequest) -> AnswerSpec:
        return build_answer_spec(request.spec, {"low_score_action": choice}, answered_by="novel_desktop")

    return asker


def answer_recommended(request: InteractionRequest) -> AnswerSpec:
    """Every question answered with its default (the recommended option), as an author clicking 确定."""
    answers = {q.id: q.default for q in request.spec.questions if q.default is not None}
    return build_answer_spec(request.spec, answers, answered_by="novel_desktop")


def test_continue_one_chapter_end_to_end(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    controller = PipelineController(project)
    rec = Recorder(controller)
    committed_seen: list[int] = []
    project.chapters_changed.connect(lambda: committed_seen.append(len(project.chapters())))

    run_until_finished(qloop, controller, lambda: controller.continue_chapters(1))

    names = rec.names()
    assert names[0] == "running_changed" and rec.args("running_changed") == [(True,), (False,)]
    assert names[-1] == "finished"
    assert "failed" not in names and "cancelled" not in names
    stages = [s for _, s in rec.args("stage_started")]
    assert stages == ["draft", "summarize", "refine", "judge", "gate", "commit"]
    # The draft streamed in pieces, before the summarizer started.
    deltas = [i for i, n in enumerate(names) if n == "text_delta"]
    assert len(deltas) > 10
    assert max(deltas) < rec.events.index(("stage_started", (3, "summarize")))
    assert "".join(t for _, t in rec.args("text_delta")).startswith(writer_text()[:30])
    assert rec.args("chapter_started") == [(3, "")]
    chapter, action, overall, _reason = rec.args("gate_decided")[0]
    assert (chapter, action, overall) == (3, "pass", pytest.approx(4.2))
    usage = rec.args("usage_updated")[-1]
    assert usage[0] == 3 and usage[1] > 0 and usage[2] > 0 and usage[3] > 0
    assert rec.args("chapter_committed") == [(3,)]
    # The project saw the new chapter, and the views were told.
    assert [c.number for c in project.chapters()] == [1, 2, 3]
    assert project.chapter_text(3).startswith("# 第3章")
    assert committed_seen and committed_seen[-1] == 3
    assert not controller.running


def test_a_low_score_asks_and_accept_commits_with_a_flag(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    fake.set_default("quality_judge", judge_json(2.5))
    asked: list[InteractionRequest] = []

    def asker(request: InteractionRequest) -> AnswerSpec:
        asked.append(request)
        return answer_with("接受")(request)

    controller = PipelineController(project, asker=asker)
    rec = Recorder(controller)
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(1))

    assert len(asked) == 1
    question = asked[0].spec.questions[0]
    assert question.kind == "single_choice" and "接受" in question.labels
    assert "脸谱化" in asked[0].context  # the judge's issues are shown with the question
    assert rec.args("question_asked") == [(asked[0],)]
    assert rec.args("gate_decided")[0][1] == "ask_user"
    assert rec.args("chapter_committed") == [(3,)]
    assert project.pipeline_log(3)["gate_decision"] == "force_pass"  # committed, flagged
    # The author's answer is on record, by the desktop app.
    answer = project.store.answer("staging/novel-ask/chapter-003-low-score-r0-m0.answers.json")
    assert answer is not None and '"novel_desktop"' in answer


def test_manual_edit_choice_pauses_the_chapter(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    fake.set_default("quality_judge", judge_json(2.5))
    controller = PipelineController(project, asker=answer_with("手动改"))
    rec = Recorder(controller)
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(2))
    assert rec.args("chapter_committed") == []
    assert [a[0] for a in rec.args("chapter_paused")] == [3]
    assert "暂存区" in rec.args("chapter_paused")[0][1]
    assert project.staged_text(3)  # the draft waits in staging for the author


def test_cancelling_a_question_aborts_the_step_and_asks_again_next_time(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    fake.set_default("quality_judge", judge_json(2.5))

    async def cancel_dialog(_request: InteractionRequest) -> None:
        return None

    controller = PipelineController(project, asker=cancel_dialog)
    rec = Recorder(controller)
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(1))
    assert "cancelled" in rec.names() and "failed" not in rec.names()
    assert len(project.chapters()) == 2
    assert project.checkpoint()["pipeline_stage"] == "judged"

    writer_calls = len(fake.requests_for("chapter_writer"))
    controller.asker = answer_with("接受")
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(1))
    assert len(project.chapters()) == 3
    assert len(fake.requests_for("chapter_writer")) == writer_calls  # resumed at the gate


def test_stop_mid_stream_leaves_the_novel_as_it_was_and_resumable(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    fake.script("chapter_writer", Reply.slow("慢" * 2000, delay=0.02, chunk_size=4))
    controller = PipelineController(project)
    rec = Recorder(controller)
    pieces: list[str] = []

    def on_delta(_chapter: int, text: str) -> None:
        pieces.append(text)
        if len(pieces) == 3:
            controller.cancel()  # 停止, while the draft streams

    controller.text_delta.connect(on_delta)
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(1), timeout=10)

    assert not controller.running
    assert rec.args("running_changed")[-1] == (False,)
    assert "cancelled" in rec.names() and "failed" not in rec.names()
    assert len(pieces) < 20  # stopped at once, not after the 500-piece stream
    assert fake.client_disconnected.wait(5)  # the HTTP stream was closed, not left running
    assert fake.disconnects == ["chapter_writer"]
    assert [c.number for c in project.chapters()] == [1, 2]
    cp = project.checkpoint()
    assert (cp["inflight_chapter"], cp["pipeline_stage"]) == (3, "drafting")

    controller.text_delta.disconnect(on_delta)
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(1))
    assert [c.number for c in project.chapters()] == [1, 2, 3]
    assert "慢慢慢" not in project.chapter_text(3)


def test_no_api_key_fails_with_what_to_do(
    qloop: qasync.QEventLoop,
    project: ProjectController,
    fake: FakeAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setattr("novel_desktop.llm.client.get_api_key", lambda _provider: None)
    controller = PipelineController(project)
    rec = Recorder(controller)
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(1))
    [(message,)] = rec.args("failed")
    assert "API Key" in message and "设置" in message
    assert "续写" in message  # and how to carry on
    assert len(project.chapters()) == 2
    assert fake.requests == []


def test_overloaded_after_retries_fails_and_the_chapter_resumes(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    # 续写 runs the Orchestrator: a step that fails after the client's retries is tried once more
    # (§8.2 ERROR_RETRY), as `novel start` does; the second failure stops the run.
    fake.script("summarizer", *[Reply.http_error(529)] * 6)
    controller = PipelineController(project)
    rec = Recorder(controller)
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(1))
    [(message,)] = rec.args("failed")
    assert "繁忙" in message and "稍后再试" in message
    assert any("重试一次" in text for _n, text in rec.args("warning"))
    assert len(project.chapters()) == 2
    assert project.checkpoint()["pipeline_stage"] == "drafted"

    writer_calls = len(fake.requests_for("chapter_writer"))
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(1))
    assert len(project.chapters()) == 3
    assert len(fake.requests_for("chapter_writer")) == writer_calls


def test_edit_a_committed_chapter_then_rebuild_reports_the_changes(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    # Chapter 5 is due for the quality brief; the author keeps writing (its recommended 继续).
    controller = PipelineController(project, asker=answer_recommended)
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(3))
    marked = project.save_chapter(4, project.chapter_text(4) + "\n\n　　他改道去了苍梧宗山门。")
    assert marked == [4, 5]
    fake.script("summarizer", summarizer_json(location="洛阳"))  # the edit sends 林枫 elsewhere

    rec = Recorder(controller)
    run_until_finished(qloop, controller, lambda: controller.rebuild(4))
    assert rec.args("failed") == []
    [(report,)] = rec.args("rebuild_finished")
    assert report["chapter"] == 4
    # Chapter 4's state now puts 林枫 in 洛阳; chapter 5 moves him on itself and its summary names no place he
    # no longer is, so nothing contradicts the new state, and after the rebuild no chapter is stale.
    assert any("洛阳" in line for line in report["changes"][4])
    assert report["disagreeing"] == {}
    assert project.status().stale_chapters == []


def test_rebuild_without_a_state_snapshot_fails_and_leaves_the_state(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    project.save_chapter(2, project.chapter_text(2) + "\n\n　　补一句。")
    before = project.current_state()
    controller = PipelineController(project)
    rec = Recorder(controller)
    run_until_finished(qloop, controller, lambda: controller.rebuild(2))
    [(message,)] = rec.args("failed")
    assert "第 1 章" in message and "状态保持原样" in message
    assert project.current_state() == before


def test_the_event_loop_keeps_running_while_the_draft_streams(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    fake.script("chapter_writer", Reply(writer_text(), chunk_size=20, delay=0.005))
    controller = PipelineController(project)
    ticks: list[int] = []
    ticks_at_delta: list[int] = []
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.append(1))
    controller.text_delta.connect(lambda *_: ticks_at_delta.append(len(ticks)))
    controller.running_changed.connect(lambda on: timer.start() if on else timer.stop())
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(1))
    assert len(project.chapters()) == 3
    # A Qt timer kept firing between the first and the last streamed piece: the window was not frozen.
    assert ticks_at_delta[-1] - ticks_at_delta[0] > 10


def test_continue_while_running_is_ignored(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    controller = PipelineController(project)
    rec = Recorder(controller)

    def start_twice() -> None:
        controller.continue_chapters(1)
        assert controller.running
        controller.continue_chapters(1)
        controller.rebuild(1)

    run_until_finished(qloop, controller, start_twice)
    assert rec.args("chapter_started") == [(3, "")]
    assert rec.args("running_changed") == [(True,), (False,)]


def test_the_gate_question_is_a_dialog_over_the_window(
    qtbot: QtBot, qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    """No asker injected: the real AskDialog opens over the window; the author picks 接受 and confirms."""
    fake.set_default("quality_judge", judge_json(2.5))
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    controller = PipelineController(project, asker=dialog_asker(window))
    seen: list[str] = []

    def answer_dialog() -> None:
        dialog = next(d for d in window.findChildren(AskDialog) if d.isVisible())
        seen.append(dialog.windowTitle())
        assert dialog.isModal()
        assert "脸谱化" in (dialog.context_view.toPlainText() if dialog.context_view else "")
        dialog.option_button("low_score_action", "接受").click()
        dialog.ok_button.click()

    # As the author would: after the dialog has appeared, from the GUI's event loop.
    controller.question_asked.connect(lambda _r: QTimer.singleShot(50, answer_dialog))
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(1))
    assert seen == ["第3章低分"]
    assert [c.number for c in project.chapters()] == [1, 2, 3]
    assert project.pipeline_log(3)["gate_decision"] == "force_pass"


def test_continue_runs_the_periodic_checks_and_stops_at_the_end_of_the_volume(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    """Writing chapters 3-5 of the 5-chapter volume: after chapter 5 the quality brief and the drift check
    report, the brief is asked as a question, and the run stops at the volume's end instead of failing on
    a chapter the outline does not have."""
    topics: list[str] = []

    def asker(request: InteractionRequest) -> AnswerSpec:
        topics.append(request.spec.topic)
        return answer_recommended(request)

    controller = PipelineController(project, asker=asker)
    rec = Recorder(controller)
    reports: list[tuple[int, str, bool]] = []
    finished: list[int] = []
    controller.checks_reported.connect(lambda n, text, pause: reports.append((n, text, pause)))
    controller.volume_finished.connect(finished.append)
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(10))

    assert [c.number for c in project.chapters()] == [1, 2, 3, 4, 5]
    assert rec.args("failed") == []
    assert topics == ["quality brief"]
    [(chapter, text, pause)] = reports
    assert chapter == 5 and not pause
    assert "第 1-5 章质量简报" in text and "文风" in text
    assert finished == [1]

    # Continuing a written volume says so at once and calls no model.
    writer_calls = len(fake.requests_for("chapter_writer"))
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(1))
    assert finished == [1, 1]
    assert len(fake.requests_for("chapter_writer")) == writer_calls
    assert project.recommendation().action == "review"


def test_a_brief_answered_回看_pauses_the_run(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    def asker(request: InteractionRequest) -> AnswerSpec:
        return build_answer_spec(request.spec, {"brief_action": "回看"}, answered_by="novel_desktop")

    controller = PipelineController(project, asker=asker)
    reports: list[tuple[int, str, bool]] = []
    controller.checks_reported.connect(lambda n, text, pause: reports.append((n, text, pause)))
    run_until_finished(qloop, controller, lambda: controller.continue_chapters(10))
    [(chapter, text, pause)] = reports
    assert (chapter, pause) == (5, True)
    assert "已暂停" in text


def test_the_periodic_checks_on_demand(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    """写作 → 定期检查: chapters 1-5 are written (here by hand), so the brief and the drift check are due;
    they run once, and a second request says nothing is due."""
    from tests.pipeline.test_on_demand import _commit_more

    _commit_more(project.store, 5)
    controller = PipelineController(project, asker=answer_recommended)
    reports: list[tuple[int, str, bool]] = []
    steps: list[str] = []
    done: list[str] = []
    controller.checks_reported.connect(lambda n, text, pause: reports.append((n, text, pause)))
    controller.step_finished.connect(steps.append)
    controller.lifecycle_finished.connect(lambda action, _text: done.append(action))
    run_until_finished(qloop, controller, lambda: controller.run_lifecycle("check"))
    [(chapter, text, pause)] = reports
    assert (chapter, pause) == (5, False) and "第 1-5 章质量简报" in text
    run_until_finished(qloop, controller, lambda: controller.run_lifecycle("check"))
    assert len(reports) == 1 and steps == ["第 5 章没有到期的检查。"]
    assert done == ["check", "check"]


def test_continue_on_a_new_novel_points_to_the_quick_start(
    qloop: qasync.QEventLoop, tmp_path: Any, fake: FakeAnthropicServer
) -> None:
    from novel_desktop.storage.store import NovelStore

    path = tmp_path / "新书.novel"
    NovelStore.create(path, title="新书").close()
    project = ProjectController()
    project.open(path)
    try:
        controller = PipelineController(project)
        rec = Recorder(controller)
        run_until_finished(qloop, controller, lambda: controller.continue_chapters(1))
        [(message,)] = rec.args("failed")
        assert "还没有大纲" in message and "快速起步" in message and "规划卷" in message
        assert fake.requests == []
    finally:
        project.close()


def test_the_quick_start_without_a_key_says_how_to_set_one(
    qloop: qasync.QEventLoop, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from novel_desktop.storage.store import NovelStore

    monkeypatch.setattr("keyring.get_password", lambda *_a: None)
    path = tmp_path / "新书.novel"
    NovelStore.create(path, title="新书").close()
    project = ProjectController()
    project.open(path)
    try:
        from tests.e2e.lifecycle_replies import answers

        by_topic = answers()

        def asker(request: InteractionRequest) -> AnswerSpec:
            spec = request.spec
            return build_answer_spec(spec, by_topic[spec.topic], answered_by="novel_desktop")

        controller = PipelineController(project, asker=asker)
        rec = Recorder(controller)
        run_until_finished(qloop, controller, lambda: controller.run_lifecycle("quick_start"))
        [(message,)] = rec.args("failed")
        assert "API" in message and "设置" in message
        assert "从中断处继续" in message  # nothing was lost; the same button carries on
        # The setup answers are kept: the next run goes straight to the world (the step that needs the key).
        assert project.checkpoint()["orchestrator_state"] == "QUICK_START"
        assert "仙侠" in (project.document("brief.md") or "")
    finally:
        project.close()


def test_a_quick_start_cancelled_at_a_question_resumes_where_it_stopped(
    qloop: qasync.QEventLoop, tmp_path: Any, fake: FakeAnthropicServer
) -> None:
    """Cancelling the style question keeps the world and the characters; the next run asks the style question
    again and calls WorldBuilder and CharacterWeaver no more."""
    from novel_desktop.storage.store import NovelStore
    from tests.e2e.lifecycle_replies import STYLE_SAMPLE, answers, plan_json, script_planning

    script_planning(fake)
    fake.script("plot_architect", plan_json(1, 4, 10))
    sample = tmp_path / "样本.txt"
    sample.write_text(STYLE_SAMPLE, encoding="utf-8")
    by_topic = {**answers(), "style source": {"style_source": "我的样本", "sample_files": str(sample)}}
    cancel_style = [True]

    def asker(request: InteractionRequest) -> AnswerSpec | None:
        if request.spec.topic == "style source" and cancel_style[0]:
            return None  # the author closes the dialog
        return build_answer_spec(request.spec, by_topic[request.spec.topic], answered_by="novel_desktop")

    path = tmp_path / "新书.novel"
    NovelStore.create(path, title="新书").close()
    project = ProjectController()
    project.open(path)
    try:
        project.set_planned_chapters(1, 10)
        controller = PipelineController(project, asker=asker)
        rec = Recorder(controller)
        run_until_finished(qloop, controller, lambda: controller.run_lifecycle("quick_start"))
        assert rec.args("cancelled") == [()] and rec.args("failed") == []
        assert project.document("world/rules.json") is not None
        assert project.documents("characters/active/")
        assert project.document("style-profile.json") is None
        assert project.chapters() == []

        cancel_style[0] = False
        run_until_finished(qloop, controller, lambda: controller.run_lifecycle("quick_start"), timeout=60)
        assert rec.args("failed") == []
        assert [c.number for c in project.chapters()] == [1, 2, 3]
        assert project.checkpoint()["orchestrator_state"] == "WRITING"
        assert len(fake.requests_for("world_builder")) == 1
        assert len(fake.requests_for("character_weaver")) == 1
    finally:
        project.close()
