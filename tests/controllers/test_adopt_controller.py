"""AdoptController over the pipeline controller's public ``run_in_session`` (no window): the estimate without
a request, the adoption as a pipeline run (``running`` holds, a second run is refused), progress counted over
the whole book, the summary of what was stored, and an error that keeps the chapters read."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import qasync

from novel_desktop.controllers.adopt_controller import AdoptController, AdoptSummary
from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.novel_ask import AnswerSpec
from novel_desktop.domain.novel_ask_answers import build_answer_spec
from novel_desktop.pipeline.interaction import InteractionRequest
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.pipeline.adopt_book import imported_book, note_json, script_adoption

pytestmark = pytest.mark.usefixtures("gui_thread_gc")


def accept(request: InteractionRequest) -> AnswerSpec:
    """Every question answered with its default (接受), as an author pressing the default button."""
    answers = {q.id: q.default for q in request.spec.questions if q.default is not None}
    return build_answer_spec(request.spec, answers, answered_by="novel_desktop")


def _controllers(novel: Path) -> tuple[PipelineController, AdoptController]:
    project = ProjectController()
    project.open(novel)
    pipeline = PipelineController(project, asker=accept)
    return pipeline, AdoptController(pipeline)


def _until(qloop: qasync.QEventLoop, start: Callable[[], Any], done: Callable[[], bool]) -> None:
    async def main() -> None:
        start()
        for _ in range(3000):
            if done():
                return
            await asyncio.sleep(0.02)
        raise TimeoutError

    qloop.run_until_complete(main())


def test_estimate_then_adopt_as_a_pipeline_run(
    qloop: qasync.QEventLoop, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    pipeline, adopt = _controllers(imported_book(tmp_path))
    assert adopt.needed() and adopt.available()
    estimates: list[Any] = []
    adopt.estimate_ready.connect(estimates.append)
    _until(qloop, adopt.request_estimate, lambda: bool(estimates))
    assert estimates[0].to_read == [1, 2, 3, 4, 5, 6] and estimates[0].cost_usd > 0
    assert fake.requests == []

    script_adoption(fake)
    progress: list[tuple[int, int]] = []
    summaries: list[AdoptSummary] = []
    adopt.progress.connect(lambda d, t, _m: progress.append((d, t)))
    adopt.finished.connect(summaries.append)

    def start() -> None:
        assert adopt.start()
        assert pipeline.running and pipeline.run_name == "adopt"
        assert not adopt.start() and not pipeline.run_in_session("other", lambda _s: asyncio.sleep(0))

    _until(qloop, start, lambda: not pipeline.running)
    assert progress[0] == (0, 6) and progress[-1] == (6, 6)
    assert summaries and (summaries[0].characters, summaries[0].rules, summaries[0].storylines) == (2, 2, 1)
    assert summaries[0].foreshadowing == 1
    assert summaries[0].next_step.startswith("下一步：规划第 1 卷")
    assert not adopt.needed() and not adopt.active


def test_an_error_keeps_the_chapters_read_and_progress_counts_the_whole_book(
    qloop: qasync.QEventLoop, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    novel = imported_book(tmp_path)
    fake.script("summarizer", note_json(1), note_json(2))
    fake.set_default("summarizer", Reply.http_error(500, message="坏了"))
    pipeline, adopt = _controllers(novel)
    failures: list[str] = []
    adopt.failed.connect(failures.append)
    pipeline_failures: list[str] = []
    pipeline.failed.connect(pipeline_failures.append)
    _until(qloop, adopt.start, lambda: not pipeline.running)
    assert len(failures) == 1 and "第 3 章分析失败" in failures[0] and "已分析的 2 章已保存" in failures[0]
    assert pipeline_failures == []  # the adoption says it once, in its own dialog

    fake.script("summarizer", *(note_json(n) for n in range(3, 7)))
    script_adoption(fake, range(0))
    progress: list[tuple[int, int]] = []
    adopt.progress.connect(lambda d, t, _m: progress.append((d, t)))
    _until(qloop, adopt.start, lambda: not pipeline.running)
    assert progress[0] == (2, 6) and progress[-1] == (6, 6)
    assert not adopt.needed()


def test_run_in_session_refuses_a_closed_novel_and_reports_an_unexpected_error(
    qloop: qasync.QEventLoop, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    assert not PipelineController(ProjectController()).run_in_session("x", lambda _s: asyncio.sleep(0))
    pipeline, _adopt = _controllers(imported_book(tmp_path))
    seen: list[Any] = []
    failures: list[str] = []
    pipeline.failed.connect(failures.append)

    async def work(session: Any) -> None:
        seen.append(session.store)
        raise OSError("磁盘满了")

    _until(qloop, lambda: pipeline.run_in_session("x", work), lambda: not pipeline.running and bool(failures))
    assert seen == [pipeline.project.store]
    assert "读写文件失败：磁盘满了" in failures[0]


def test_progress_speaks_the_windows_language(
    qloop: qasync.QEventLoop, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    from novel_desktop import i18n

    pipeline, adopt = _controllers(imported_book(tmp_path))
    script_adoption(fake)
    messages: list[str] = []
    adopt.progress.connect(lambda _d, _t, m: messages.append(m))
    i18n.set_language("en")
    try:
        _until(qloop, adopt.start, lambda: not pipeline.running)
    finally:
        i18n.set_language("zh")
    assert messages[0] == "Chapters to analyse: 6"
    assert messages[1].startswith("Chapter 1 analysed: ") and "第1章摘要" in messages[1]  # the book's words
    assert messages[-1].startswith("Chapter 6 analysed: ")
    assert not any("已分析" in m or "待分析" in m for m in messages)


def test_an_error_speaks_the_windows_language(
    qloop: qasync.QEventLoop, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    # The model service stays overloaded at chapter 3: the adoption's message and the model error inside it
    # are English in the English window (the provider's own words stay as it said them).
    from novel_desktop import i18n

    fake.script("summarizer", note_json(1), note_json(2))
    fake.set_default("summarizer", Reply.overloaded())
    pipeline, adopt = _controllers(imported_book(tmp_path))
    failures: list[str] = []
    adopt.failed.connect(failures.append)
    i18n.set_language("en")
    try:
        _until(qloop, adopt.start, lambda: not pipeline.running)
    finally:
        i18n.set_language("zh")
    assert len(failures) == 1
    message = failures[0]
    assert message.startswith("Analysing chapter 3 failed: The model service is overloaded (529)")
    assert "The chapters analysed so far are saved (2); running again resumes at chapter 3" in message
    assert not re.search(r"[\u4e00-\u9fff]", message), message
