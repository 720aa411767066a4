"""The §8.2 state machine against the fake Messages API: transitions, the review answers that loop back
(调整风格, 调整章数), the /novel:start recommendation, and the one retry after an error."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.agents.chapter import LLMChapterAgents
from novel_desktop.agents.planning import LLMPlanningAgents
from novel_desktop.llm.client import LLMClient
from novel_desktop.pipeline.interaction import AnswersFileResponder, InteractionManager
from novel_desktop.pipeline.orchestrator import (
    Orchestrator,
    OrchestratorEvent,
    RunSummary,
    StateChanged,
    StepRetrying,
    recommend,
)
from novel_desktop.pipeline.quick_start import StyleChoice
from novel_desktop.storage.store import NovelStore
from tests.e2e.lifecycle_replies import answers, plan_json, script_planning
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, fast_settings

KEY = "sk-ant-test-orchestrator"
ASK = "staging/novel-ask/"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[NovelStore]:
    s = NovelStore.create(tmp_path / "青石问道.novel", title="青石问道")
    yield s
    s.close()


@pytest.fixture
def server(fake_server: FakeAnthropicServer) -> FakeAnthropicServer:
    """The shared fake server on which every role answers well, the planning roles too."""
    script_planning(fake_server)
    return fake_server


def _run(
    store: NovelStore,
    server: FakeAnthropicServer,
    answer_map: dict[str, Any],
    *,
    max_chapters: int | None = 0,
    chapters: int = 10,
    events: list[OrchestratorEvent] | None = None,
) -> RunSummary:
    async def main() -> RunSummary:
        async with LLMClient(fast_settings(), api_key=KEY, base_url=server.base_url) as client:
            orch = Orchestrator(
                store,
                LLMPlanningAgents(client),
                LLMChapterAgents(store, client),
                InteractionManager(AnswersFileResponder(answer_map)),
                emit=(events.append if events is not None else None),
                style=StyleChoice(template="热血少年"),
                volume_chapters=chapters,
            )
            return await orch.run_until_blocked(max_chapters=max_chapters)

    return asyncio.run(main())


def test_recommendation_follows_the_state(store: NovelStore) -> None:
    assert recommend(None).label == "创建新项目"
    rec = recommend(store)
    assert (rec.state, rec.label) == ("INIT", "创建新项目")
    assert 2 <= len(rec.options) <= 4 and rec.options[0][1].startswith("推荐")
    store.update_checkpoint(orchestrator_state="VOL_PLANNING", current_volume=2)
    assert recommend(store).label == "规划第 2 卷"


def test_a_hand_edit_is_rebuilt_before_writing_on(tmp_path: Path) -> None:
    """The demo novel: chapter 4 was edited by hand, so 4-6 need a rebuild before the next chapter."""
    from novel_desktop.demo import build_demo

    with NovelStore.open(build_demo(tmp_path / "demo.novel"), write=False) as demo:
        rec = recommend(demo)
    assert (rec.action, rec.label) == ("rebuild", "重建第 4 章起的故事状态")
    assert "第 4-6 章手改过" in rec.reason


def test_quick_start_to_writing_records_each_transition(
    store: NovelStore, server: FakeAnthropicServer
) -> None:
    server.script("plot_architect", plan_json(1, 4, 10))
    events: list[OrchestratorEvent] = []
    summary = _run(store, server, answers(), events=events)
    transitions = [(e.old, e.new) for e in events if isinstance(e, StateChanged)]
    assert transitions == [
        ("INIT", "QUICK_START"),
        ("QUICK_START", "VOL_PLANNING"),
        ("VOL_PLANNING", "WRITING"),
    ]
    assert summary.state == "WRITING" and not summary.blocked
    assert [c.chapter for c in summary.chapters] == [1, 2, 3]
    # The template named on the command line, not the StyleAnalyzer.
    assert store.document_json("style-profile.json")["source_type"] == "template"
    assert not server.requests_for("style_analyzer")
    rec = recommend(store)
    assert (rec.action, rec.label) == ("continue", "继续写作")


def test_adjust_style_rewrites_the_trial_with_the_new_style(
    store: NovelStore, server: FakeAnthropicServer
) -> None:
    server.script("plot_architect", plan_json(1, 4, 10))
    answer_map = {
        **answers(),
        f"{ASK}quick-start-review.answers.json": {"trial_action": "调整风格"},
        f"{ASK}novel-style-r1.answers.json": {"style_source": "风格模板", "template": "冷峻悬疑"},
        f"{ASK}quick-start-review-r1.answers.json": {"trial_action": "继续"},
    }
    summary = _run(store, server, answer_map)
    assert [c.chapter for c in summary.chapters] == [1, 2, 3, 1, 2, 3]
    assert "信息分层" in store.document_json("style-profile.json")["rhetoric_preferences"]
    assert [c.number for c in store.list_chapters()] == [1, 2, 3]
    assert store.checkpoint()["orchestrator_state"] == "WRITING"
    # The rewritten trial's writer read the new template's directives.
    last_writer = json.dumps(server.requests_for("chapter_writer")[-1].body, ensure_ascii=False)
    assert "感叹号全章不超过三个" in last_writer


def test_start_over_goes_back_to_the_setup_questions(store: NovelStore, server: FakeAnthropicServer) -> None:
    answer_map = {**answers(), "quick start review": {"trial_action": "重来"}}
    events: list[OrchestratorEvent] = []

    async def main() -> None:
        async with LLMClient(fast_settings(), api_key=KEY, base_url=server.base_url) as client:
            orch = Orchestrator(
                store,
                LLMPlanningAgents(client),
                LLMChapterAgents(store, client),
                InteractionManager(AnswersFileResponder(answer_map)),
                emit=events.append,
                style=StyleChoice(template="热血少年"),
            )
            while not any(isinstance(e, StateChanged) and e.new == "INIT" for e in events):
                await orch.step()

    asyncio.run(main())
    assert store.checkpoint()["orchestrator_state"] == "INIT"
    assert store.list_chapters() == []
    assert store.document("world/rules.json") is None and store.document("brief.md") is None
    assert store.current_state()["characters"] == {}


def test_changing_the_chapter_count_replans(store: NovelStore, server: FakeAnthropicServer) -> None:
    server.script("plot_architect", plan_json(1, 4, 10), plan_json(1, 4, 6))
    answer_map = {
        **answers(),
        f"{ASK}volume-01-plan-r0.answers.json": {"review_action": "调整章数", "chapter_count": "6 章"},
        f"{ASK}volume-01-plan-r1.answers.json": {"review_action": "接受"},
    }
    _run(store, server, answer_map)
    first, second = (r.body["messages"][0]["content"] for r in server.requests_for("plot_architect"))
    assert "第 4-10 章" in first and "第 4-6 章" in second
    assert store.document_json("volumes/vol-01/volume.json")["chapter_end"] == 6
    assert store.checkpoint()["orchestrator_state"] == "WRITING"


def test_a_failed_step_is_retried_once(store: NovelStore, server: FakeAnthropicServer) -> None:
    # Both the reply and its repair are unusable: the step fails, is retried, and the retry succeeds.
    server.script("plot_architect", Reply.malformed_json(), Reply.malformed_json(), plan_json(1, 4, 10))
    events: list[OrchestratorEvent] = []
    summary = _run(store, server, answers(), events=events)
    assert any(isinstance(e, StepRetrying) and e.state == "VOL_PLANNING" for e in events)
    assert summary.state == "WRITING"


def test_volume_end_leads_through_review_to_next_plan(store: NovelStore, server: FakeAnthropicServer) -> None:
    server.script("plot_architect", plan_json(1, 4, 5), plan_json(2, 6, 10))
    summary = _run(store, server, answers(), max_chapters=2, chapters=5)
    assert [c.chapter for c in summary.chapters] == [1, 2, 3, 4, 5]
    cp = store.checkpoint()
    assert (cp["current_volume"], cp["orchestrator_state"], cp["last_completed_chapter"]) == (2, "WRITING", 5)
    assert store.document("volumes/vol-01/review.md") is not None
    assert store.answer(f"{ASK}quality-brief-005.answers.json") is not None


def test_the_platform_is_chosen_by_its_name_and_stored_as_its_id() -> None:
    from novel_desktop.pipeline.quick_start import platform_id, setup_spec

    question = next(q for q in setup_spec().questions if q.id == "platform")
    labels = [o.label for o in question.options]
    assert labels == ["起点中文网", "番茄小说", "晋江文学城", "自建站/博客"]
    assert question.default == "起点中文网"
    assert "每章 2500-4000 字" in question.options[0].description
    assert [platform_id(label) for label in labels] == ["qidian", "tomato", "jjwxc", "web"]
    assert platform_id("tomato") == "tomato" and platform_id("别处") == "web" and platform_id(None) == "web"
