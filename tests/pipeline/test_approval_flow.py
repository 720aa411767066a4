"""What the agents invent is stored only once the author accepts it (issue 14 item 3), through the fake model:
the quick start's world and characters edited (编辑), regenerated with the author's notes (重新生成) or
accepted; the trial chapters get contracts; a staged proposal survives a kill."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.agents.chapter import LLMChapterAgents
from novel_desktop.agents.planning import LLMPlanningAgents
from novel_desktop.domain.novel_ask import AnswerSpec
from novel_desktop.domain.novel_ask_answers import build_answer_spec
from novel_desktop.domain.proposals import Proposal
from novel_desktop.llm.client import LLMClient
from novel_desktop.pipeline.approval import ApprovalError, propose
from novel_desktop.pipeline.interaction import (
    AnswersFileResponder,
    InteractionCancelled,
    InteractionManager,
    InteractionRequest,
)
from novel_desktop.pipeline.orchestrator import Orchestrator, RunSummary
from novel_desktop.pipeline.quick_start import StyleChoice
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore
from tests.e2e.lifecycle_replies import answers, characters_json, plan_json, script_planning, world_json
from tests.fakes.anthropic_server import FakeAnthropicServer, fast_settings

KEY = "sk-ant-test-approval"
ASK = "staging/novel-ask/"
EDITED_RULE = "青石镇地下埋着一条沉睡的灵脉，每逢月圆灵气外泄"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[NovelStore]:
    s = NovelStore.create(tmp_path / "青石问道.novel", title="青石问道")
    yield s
    s.close()


@pytest.fixture
def server(fake_server: FakeAnthropicServer) -> FakeAnthropicServer:
    script_planning(fake_server)
    fake_server.script("plot_architect", plan_json(1, 4, 10))
    return fake_server


def _run(store: NovelStore, server: FakeAnthropicServer, answer_map: dict[str, Any]) -> RunSummary:
    async def main() -> RunSummary:
        async with LLMClient(fast_settings(), api_key=KEY, base_url=server.base_url) as client:
            orch = Orchestrator(
                store,
                LLMPlanningAgents(client),
                LLMChapterAgents(store, client),
                InteractionManager(AnswersFileResponder(answer_map)),
                style=StyleChoice(template="热血少年"),
                volume_chapters=10,
            )
            return await orch.run_until_blocked(max_chapters=0)

    return asyncio.run(main())


def _edited_world() -> dict[str, Any]:
    reply = json.loads(world_json())
    rules = reply["rules"]["rules"]
    rules[1] = {**rules[1], "rule": EDITED_RULE, "constraint_type": "soft"}  # W-002 rewritten
    del rules[2]  # W-003 deleted
    return {"rules": rules, "documents": [{"file": "geography.md", "content": "# 地理\n\n作者改写的地理。"}]}


def _edited_characters() -> dict[str, Any]:
    reply = json.loads(characters_json())
    hero = {**reply["characters"][0], "name": "林青山"}
    return {"characters": [hero], "relationships": []}


def test_edited_world_and_characters_are_what_binds(store: NovelStore, server: FakeAnthropicServer) -> None:
    answer_map = {
        **answers(),
        # The edited payloads given as JSON objects in the answers file (they become the answer's text).
        "world review": {"review_action": "编辑", "edited": _edited_world()},
        "characters review": {"review_action": "编辑", "edited": _edited_characters()},
    }
    summary = _run(store, server, answer_map)
    assert summary.state == "WRITING"
    rules = {r["id"]: r for r in store.document_json("world/rules.json")["rules"]}
    assert set(rules) == {"W-001", "W-002"}
    assert rules["W-002"]["rule"] == EDITED_RULE
    assert store.document("world/rules.md") is None  # the author dropped the agent's document
    assert "作者改写的地理" in (store.document("world/geography.md") or "")
    assert [p.rsplit("/", 1)[-1] for p in store.list_documents("characters/active/")] == ["lin-feng.json"]
    assert store.document_json("characters/active/lin-feng.json")["name"] == "林青山"
    # The changelogs say what was stored and from which chapter.
    assert "自第 1 章起生效" in (store.document("world/changelog.md") or "")
    assert "林青山" in (store.document("characters/changelog.md") or "")
    # The chapters written after it see the author's version, never the agent's.
    first = json.dumps(server.requests_for("chapter_writer")[0].body, ensure_ascii=False)
    assert EDITED_RULE in first and "青石镇灵气浓度不足 1级" not in first
    assert "林青山" in first and "苍梧宗每三年开山收徒一次" not in first


def test_regenerate_calls_the_agent_again_with_the_changes(
    store: NovelStore, server: FakeAnthropicServer
) -> None:
    answer_map = {
        **answers(),
        f"{ASK}quick-start-world-review-r0.answers.json": {
            "review_action": "重新生成",
            "changes": "再加一条关于灵石交易的规则",
        },
    }
    _run(store, server, answer_map)
    requests = server.requests_for("world_builder")
    assert len(requests) == 2
    first, second = (r.body["messages"][0]["content"] for r in requests)
    assert "灵石交易" not in first and "再加一条关于灵石交易的规则" in second
    assert store.answer(f"{ASK}quick-start-world-review-r1.answers.json") is not None
    assert store.document_json("world/rules.json") is not None


def test_accepted_quick_start_and_trial_contracts(store: NovelStore, server: FakeAnthropicServer) -> None:
    _run(store, server, answers())
    assert len(server.requests_for("world_builder")) == 1
    rules = store.document_json("world/rules.json")["rules"]
    assert [r["id"] for r in rules] == ["W-001", "W-002", "W-003"]
    assert store.document_json("storylines/storylines.json")["storylines"][0]["name"] == "林枫问道"
    # The trial chapters 1-3 have chapter contracts like every other chapter; volume 1's plan kept them.
    for n in (1, 2, 3):
        contract = store.document_json(layout.contract_path(1, n))
        assert contract["chapter"] == n and contract["objectives"][0]["required"] is True
        assert contract["preconditions"]["required_world_rules"] == ["W-001", "W-002"]
    assert store.document_json(layout.contract_path(1, 4)) is not None
    log = store.document("volumes/vol-01/changelog.md") or ""
    assert "第1章契约" in log and "第4章契约" in log
    # The writer of chapter 1 got its contract's objective.
    first = json.dumps(server.requests_for("chapter_writer")[0].body, ensure_ascii=False)
    objective = store.document_json(layout.contract_path(1, 1))["objectives"][0]["description"]
    assert objective in first


class _Scripted:
    """Cancels the first review, accepts the next ones."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self, request: InteractionRequest) -> AnswerSpec | None:
        self.asked += 1
        if self.asked == 1:
            return None
        return build_answer_spec(request.spec, {"review_action": "接受"}, answered_by="human")


def test_a_staged_proposal_survives_a_kill_without_a_new_call(store: NovelStore) -> None:
    calls: list[str] = []
    payload = {
        "storylines": [
            {"id": "main_arc", "name": "主线", "type": "main_arc", "scope": "novel", "status": "active"}
        ]
    }

    async def generate(changes: str) -> Proposal:
        calls.append(changes)
        return Proposal(kind="storylines", title="故事线", payload=payload)

    responder = _Scripted()
    with pytest.raises(InteractionCancelled):
        asyncio.run(propose(store, InteractionManager(responder), name="lines", generate=generate))
    assert store.document("storylines/storylines.json") is None  # nothing stored before acceptance
    done = asyncio.run(propose(store, InteractionManager(responder), name="lines", generate=generate))
    assert calls == [""]  # asked again from the staged proposal, no second agent call
    assert (
        done.written
        and store.document_json("storylines/storylines.json")["storylines"][0]["id"] == "main_arc"
    )
    assert store.staging("proposals/lines.json") is None


def test_an_invalid_edit_names_the_answer_and_stores_nothing(store: NovelStore) -> None:
    payload = {"storylines": []}

    async def generate(_changes: str) -> Proposal:
        return Proposal(kind="storylines", title="故事线", payload=payload)

    bad = {"lines": {"review_action": "编辑", "edited": "{not json"}}
    answerer = AnswersFileResponder({"storylines review": bad["lines"]})
    with pytest.raises(ApprovalError, match=f"{ASK}lines-r0.answers.json") as info:
        asyncio.run(propose(store, InteractionManager(answerer), name="lines", generate=generate))
    assert "不是有效的 JSON" in str(info.value)
    assert store.document("storylines/storylines.json") is None
    assert store.answer(f"{ASK}lines-r0.answers.json") is None  # the question comes back next time
