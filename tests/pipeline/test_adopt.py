"""接续已有书稿 (issue 19 point 1) through the real agents, the real SDK and the fake Messages API: the
estimate before any request, the whole analysis with the author's accept and edit, a resumed analysis that
asks only for the chapters left, and 续写 afterwards with the book's characters and last summary."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.agents.adopt import LLMAdoptAgents
from novel_desktop.agents.planning import LLMPlanningAgents
from novel_desktop.llm.client import LLMClient
from novel_desktop.pipeline.adopt import (
    AdoptError,
    AdoptReport,
    adopt,
    adopt_needed,
    estimate,
    pending_chapters,
)
from novel_desktop.pipeline.interaction import AnswersFileResponder, InteractionManager
from novel_desktop.pipeline.orchestrator import recommend
from novel_desktop.storage.store import NovelStore
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, fast_settings
from tests.pipeline.adopt_book import (
    CHAPTERS,
    accept_all,
    imported_book,
    note_json,
    script_adoption,
    synthesis,
)

KEY = "sk-ant-test-adopt"


def _adopt(
    store: NovelStore,
    server: FakeAnthropicServer,
    answers: dict[str, Any],
    progress: list[tuple[int, int, str]] | None = None,
) -> AdoptReport:
    async def main() -> AdoptReport:
        async with LLMClient(fast_settings(max_attempts=1), api_key=KEY, base_url=server.base_url) as client:
            return await adopt(
                store,
                LLMAdoptAgents(client),
                LLMPlanningAgents(client),
                InteractionManager(AnswersFileResponder(answers)),
                on_progress=(lambda d, t, m: progress.append((d, t, m))) if progress is not None else None,
            )

    return asyncio.run(main())


def _chapters_read(server: FakeAnthropicServer) -> list[int]:
    """The chapter each reader request was about (read from its 「# 第 N 章正文」 heading)."""
    return [
        int(re.search(r"# 第 (\d+) 章正文", r.user_text).group(1)) for r in server.requests_for("summarizer")
    ]  # type: ignore[union-attr]


def test_the_estimate_comes_before_any_request(tmp_path: Path, server: FakeAnthropicServer) -> None:
    with NovelStore.open(imported_book(tmp_path)) as store:
        assert adopt_needed(store)
        rec = recommend(store)
        assert (rec.action, rec.label) == ("adopt", "接续已有书稿")
        est = estimate(store, fast_settings())
        assert est.to_read == list(range(1, CHAPTERS + 1)) and est.already == 0
        assert est.input_tokens > 0 and est.output_tokens > 0 and est.cost_usd > 0
        assert "待分析 6 章" in "\n".join(est.lines())
    assert server.requests == []


def test_a_full_analysis_stores_what_the_author_accepts(tmp_path: Path, server: FakeAnthropicServer) -> None:
    script_adoption(server)
    answers = accept_all()
    edited = synthesis()["world"]
    edited["rules"][0]["rule"] = "残玉只认林枫，旁人碰之即碎"
    answers["world review"] = {"review_action": "编辑", "edited": edited}
    progress: list[tuple[int, int, str]] = []
    path = imported_book(tmp_path)
    with NovelStore.open(path) as store:
        report = _adopt(store, server, answers, progress)
        assert report.read == list(range(1, CHAPTERS + 1))
        assert [p[:2] for p in progress] == [(d, CHAPTERS) for d in range(CHAPTERS + 1)]
        # Summaries the writer reads; no chapter left stale.
        assert store.summary(6) == "第6章摘要：林枫来到残玉，陈老叮嘱他别急。"
        assert store.stale_chapters() == []
        # The edit is what is stored; the rest as proposed.
        rules = store.document_json("world/rules.json")["rules"]
        assert rules[0]["rule"] == "残玉只认林枫，旁人碰之即碎"
        lin = store.document_json("characters/active/lin-feng.json")
        assert {c["type"] for c in lin["contracts"]} == {"capability", "personality"}
        assert store.document_json("characters/relationships.json")["relationships"][0]["type"] == "师徒"
        assert store.document_json("storylines/storylines.json")["storylines"][0]["id"] == "main_arc"
        assert store.document("storylines/storyline-spec.json") is not None
        threads = store.document_json("foreshadowing/global.json")["foreshadowing"]
        assert [(t["id"], t["status"], t["planted_chapter"]) for t in threads] == [
            ("broken_jade", "advanced", 1)
        ]
        state = store.current_state()
        assert state["characters"]["lin-feng"]["realm"] == "炼气一层"
        assert state["world_state"]["time_marker"] == "永安三年冬"
        assert "broken_jade" in state["active_foreshadowing"]
        profile = store.document_json("style-profile.json")
        assert profile["avg_sentence_length"] != 99 and "句子短，动作推进" in profile["writing_directives"]
        # The checkpoint stays after the last chapter; the next step is planning, no longer the adoption.
        assert not adopt_needed(store)
        assert store.checkpoint()["last_completed_chapter"] == CHAPTERS
        assert recommend(store).action == "plan"
    # The style samples are the book's own chapters; the names stayed consistent through the synopsis.
    assert "林枫在残玉前站了很久" in server.requests_for("style_analyzer")[0].user_text
    assert "林枫" in server.requests_for("summarizer")[1].user_text.split("# 第 2 章正文")[0]


def test_a_stopped_analysis_resumes_at_the_next_chapter(tmp_path: Path, server: FakeAnthropicServer) -> None:
    server.script("summarizer", *(note_json(n) for n in (1, 2, 3)))
    server.script("summarizer", Reply.http_error(400, message="坏请求"))
    path = imported_book(tmp_path)
    with NovelStore.open(path) as store:
        with pytest.raises(AdoptError) as failed:
            _adopt(store, server, accept_all())
        assert "第 4 章分析失败" in failed.value.message and "已分析的 3 章已保存" in failed.value.message
        assert pending_chapters(store) == [4, 5, 6]
        assert store.summary(3) is not None and store.summary(4) is None
        assert estimate(store, fast_settings()).already == 3
        assert _chapters_read(server) == [1, 2, 3, 4]

        script_adoption(server, range(4, CHAPTERS + 1))
        _adopt(store, server, accept_all())
        # Only chapters 4-6 were asked again; the same final result as a run without a stop.
        assert _chapters_read(server) == [1, 2, 3, 4, 4, 5, 6]
        assert [store.summary(n) is not None for n in range(1, 7)] == [True] * 6
        assert store.document_json("characters/active/chen-lao.json")["name"] == "陈老"
        assert not adopt_needed(store)
        # The synthesis of chapter 4 onward was given the synopsis of 1-3 (the resumed reader knows them).
        fourth = server.requests_for("summarizer")[-3].user_text
        assert "第 3 章：第3章摘要" in fourth


def test_an_edited_chapter_is_read_again(tmp_path: Path, server: FakeAnthropicServer) -> None:
    script_adoption(server)
    path = imported_book(tmp_path)
    with NovelStore.open(path) as store:
        _adopt(store, server, accept_all())
        store.save_manual_edit(2, "# 第2章 问心阶\n\n林枫改了主意。")
        assert pending_chapters(store) == [2]
    assert json.loads(note_json(2))["chapter"] == 2
