"""On-demand actions against the fake Messages API: their effect on the novel's documents and verdicts."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.domain.novel_ask import AnswerSpec
from novel_desktop.domain.novel_ask_answers import build_answer_spec
from novel_desktop.pipeline import on_demand
from novel_desktop.pipeline.interaction import InteractionManager, InteractionRequest
from novel_desktop.session import NovelSession
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore
from tests.conftest import FIXTURES
from tests.e2e.replies import judge_json
from tests.fakes.anthropic_server import BATCH_ROLE, FakeAnthropicServer, Reply, fast_settings

KEY = "sk-ant-test-on-demand"
TEXT = "# 第{n}章 练剑\n\n林枫在后山练剑，一练就是一整天。陈老在树下看着，没说话。\n"


@pytest.fixture
def store(seed_store: NovelStore) -> NovelStore:
    """The shared 《青石问道》 (chapters 1-2 committed, a 5-chapter outline), open."""
    return seed_store


def _run(server: FakeAnthropicServer, store: NovelStore, work: Any, provider: str = "anthropic") -> Any:
    """Run ``work(agents)`` with the agents of a session over ``store`` that talks to the fake server."""
    session = NovelSession(store, settings=fast_settings(provider), api_key=KEY, base_url=server.base_url)
    return session.run(lambda s: work(s.agents))


def _commit_more(store: NovelStore, upto: int) -> None:
    for n in range(3, upto + 1):
        store.put_staging(layout.chapter_path(n), TEXT.format(n=n), kind="refined")
        store.commit_chapter(n, volume=1)


class _Answer:
    """A responder that picks one option and remembers what it was asked; it accepts every proposal
    (what an agent invented is reviewed before it is stored) and remembers those in ``reviewed``."""

    def __init__(self, choice: str = "") -> None:
        self.choice = choice
        self.asked: list[InteractionRequest] = []
        self.reviewed: list[InteractionRequest] = []

    async def __call__(self, request: InteractionRequest) -> AnswerSpec:
        if request.proposal is not None:
            self.reviewed.append(request)
            return build_answer_spec(request.spec, {"review_action": "接受"}, answered_by="human")
        self.asked.append(request)
        return build_answer_spec(request.spec, {"decision": self.choice}, answered_by="human")


WEAVER = {
    "characters": [
        {
            "id": "su-wan",
            "name": "苏婉",
            "role": "supporting",
            "description": "苍梧宗外门执事之女",
            "goals": ["查清父亲的失踪"],
            "motivation": "父亲失踪前提过残玉",
            "inner_conflict": "想信林枫，又怕他是来抢玉的",
            "speech_pattern": "说话先笑，口头禅'那可不一定'",
            "contracts": [{"id": "C-SUWAN-001", "type": "capability", "rule": "炼气二层，只会基础剑诀"}],
        }
    ],
    "relationships": [{"from": "su-wan", "to": "lin-feng", "type": "试探", "value": 10}],
    "changelog": "新增苏婉",
}


def test_add_character_with_character_weaver(store: NovelStore, server: FakeAnthropicServer) -> None:
    server.set_default("character_weaver", json.dumps(WEAVER, ensure_ascii=False))
    answer = _Answer()
    result = _run(
        server,
        store,
        lambda a: on_demand.add_character(
            store,
            description="外门执事的女儿，性格活泼",
            agents=a.planning,
            interaction=InteractionManager(answer),
        ),
    )
    assert "苏婉" in result.message
    # The author saw the new character (with the existing ones) before it was stored.
    (review,) = answer.reviewed
    assert review.proposal is not None and review.proposal.kind == "characters"
    assert [c["id"] for c in review.proposal.payload["characters"]][-1] == "su-wan"
    profile = store.document_json("characters/active/su-wan.json")
    assert profile["name"] == "苏婉" and profile["contracts"][0]["id"] == "C-SUWAN-001"
    rels = store.document_json("characters/relationships.json")["relationships"]
    assert any(r["from"] == "su-wan" and r["to"] == "lin-feng" for r in rels)
    assert any(r["from"] == "lin-feng" for r in rels)  # the existing ones are kept
    assert "苏婉" in (store.document("characters/changelog.md") or "")
    request = server.requests_for("character_weaver")[0]
    assert "外门执事的女儿" in request.body["messages"][0]["content"]


def test_add_character_from_a_profile_needs_no_model(store: NovelStore) -> None:
    result = asyncio.run(on_demand.add_character(store, profile={"id": "wang-er", "name": "王二"}))
    assert result.written == ["characters/active/wang-er.json", "characters/changelog.md"]
    assert "王二（wang-er）" in (store.document("characters/changelog.md") or "")
    with pytest.raises(on_demand.OnDemandError, match="已存在"):
        asyncio.run(on_demand.add_character(store, profile={"id": "wang-er", "name": "王二"}))


def test_retire_character_moves_it_to_retired(store: NovelStore) -> None:
    result = on_demand.retire_character(store, "chen-lao", "旧事了结")
    assert store.document("characters/active/chen-lao.json") is None
    assert store.document("characters/active/chen-lao.md") is None
    retired = store.document_json("characters/retired/chen-lao.json")
    assert retired["status"] == "retired"
    assert retired["contracts"][0]["id"] == "C-CHENLAO-001"  # the contracts are kept
    assert store.document("characters/retired/chen-lao.md") is not None
    assert "旧事了结" in (store.document("characters/changelog.md") or "")
    assert "已退场" in result.message
    with pytest.raises(on_demand.OnDemandError, match="找不到"):
        on_demand.retire_character(store, "chen-lao")


def _world_reply(extra_rule: dict[str, Any]) -> str:
    rules = json.loads((FIXTURES / "seed_project/world/rules.json").read_text(encoding="utf-8"))["rules"]
    return json.dumps(
        {
            "rules": {"rules": [*rules, extra_rule]},
            "documents": [{"file": "sects.md", "content": "# 宗门\n\n苍梧宗之外还有赤霞门。"}],
            "storylines": None,
            "changed_rule_ids": [extra_rule["id"]],
            "changelog": "新增赤霞门",
        },
        ensure_ascii=False,
    )


def test_extend_world_appends_a_rule_with_a_new_id(store: NovelStore, server: FakeAnthropicServer) -> None:
    # The model reuses W-002 for a new rule: it must not replace the hard rule, it gets the next id.
    server.set_default(
        "world_builder",
        _world_reply(
            {"id": "W-002", "category": "society", "rule": "赤霞门与苍梧宗世仇", "constraint_type": "soft"}
        ),
    )
    result = _run(
        server,
        store,
        lambda a: on_demand.extend_world(store, a.planning, "加一个敌对宗门", InteractionManager(_Answer())),
    )
    rules = {r["id"]: r for r in store.document_json("world/rules.json")["rules"]}
    assert rules["W-002"]["rule"] == "青石镇灵气浓度不足 1级，镇上无人能修炼"
    assert rules["W-004"]["rule"] == "赤霞门与苍梧宗世仇"
    assert "W-004" in result.message
    assert store.document("world/sects.md") is not None
    assert "赤霞门" in (store.document("world/changelog.md") or "")


#: WorldBuilder's answer to a request that breaks hard rule W-002, and the rule it proposes once decided.
WORLD_CONFLICT = {
    "type": "requires_user_decision",
    "recommendation": "保留 W-002，改在镇外设灵脉",
    "options": ["保留 W-002，改在镇外设灵脉", "放弃这项需求"],
    "rationale": "需求与 hard 规则 W-002 冲突",
    "data": {"conflicting_rules": ["W-002"]},
}
SPRING_RULE = {
    "id": "W-004",
    "category": "geography",
    "rule": "青石镇外山谷有一条灵脉",
    "constraint_type": "hard",
}


def test_world_conflict_becomes_a_question_then_reruns(
    store: NovelStore, server: FakeAnthropicServer
) -> None:
    decision, new_rule = WORLD_CONFLICT, SPRING_RULE
    server.script("world_builder", json.dumps(decision, ensure_ascii=False), _world_reply(new_rule))
    responder = _Answer("保留 W-002，改在镇外设灵脉")
    _run(
        server,
        store,
        lambda a: on_demand.extend_world(
            store, a.planning, "青石镇地下有灵脉", InteractionManager(responder)
        ),
    )
    assert len(responder.asked) == 1
    assert "W-002" in responder.asked[0].spec.questions[0].question
    second = server.requests_for("world_builder")[1].body["messages"][0]["content"]
    assert "作者的决定：保留 W-002" in second
    assert any(r["id"] == "W-004" for r in store.document_json("world/rules.json")["rules"])
    assert store.list_answers()[-1].startswith("staging/novel-ask/world-extend-")


def test_world_conflict_abandoned_changes_nothing(store: NovelStore, server: FakeAnthropicServer) -> None:
    decision = {
        "type": "requires_user_decision",
        "recommendation": "放弃这项需求",
        "options": ["修改 W-002", "放弃这项需求"],
        "rationale": "冲突",
    }
    server.script("world_builder", json.dumps(decision, ensure_ascii=False))
    before = store.document("world/rules.json")
    result = _run(
        server,
        store,
        lambda a: on_demand.extend_world(
            store, a.planning, "镇上能修炼", InteractionManager(_Answer("放弃这项需求"))
        ),
    )
    assert "放弃" in result.message
    assert store.document("world/rules.json") == before
    assert len(server.requests_for("world_builder")) == 1


def test_add_storyline(store: NovelStore) -> None:
    result = on_demand.add_storyline(store, storyline_id="chixia_plot", name="赤霞阴谋", type="conspiracy")
    lines = store.document_json("storylines/storylines.json")["storylines"]
    assert [s["id"] for s in lines] == ["main_arc", "chixia_plot"]
    assert store.document("storylines/chixia_plot/memory.md") is not None
    assert not result.warnings
    with pytest.raises(on_demand.OnDemandError, match="已存在"):
        on_demand.add_storyline(store, storyline_id="chixia_plot", name="重复")


def test_import_research_notes(store: NovelStore, tmp_path: Path) -> None:
    notes = tmp_path / "宋代官制.txt"
    notes.write_bytes("枢密院掌兵。".encode("gb18030"))
    md = tmp_path / "notes.md"  # the novel already has research/notes.md
    md.write_text("# 药材\n\n灵芝。\n", encoding="utf-8")
    result = on_demand.import_research_notes(store, [notes, md, tmp_path / "missing.md"])
    assert result.written == ["research/宋代官制.md", "research/notes-2.md"]
    assert "枢密院掌兵" in (store.document("research/宋代官制.md") or "")
    assert store.document("research/notes.md") != store.document("research/notes-2.md")
    assert any("missing.md" in w for w in result.warnings)


def test_rejudge_keeps_the_old_verdict_in_the_log(store: NovelStore, server: FakeAnthropicServer) -> None:
    old = store.evaluation(2)
    assert old is not None
    server.set_default("quality_judge", judge_json(3.2))
    result = _run(server, store, lambda a: on_demand.rejudge(store, a.judge, 2))
    assert result.new_overall == pytest.approx(3.2)
    assert result.old_overall == old["overall"]
    new = store.evaluation(2)
    assert new is not None and new["overall"] == pytest.approx(3.2) and new["chapter"] == 2
    log = store.pipeline_log(2)
    assert log is not None
    assert log["previous_evaluations"][-1]["evaluation"] == old
    assert log["stages"][-1]["name"] == "rejudge"


def test_batch_reevaluation_of_five_chapters_costs_half(
    store: NovelStore, server: FakeAnthropicServer
) -> None:
    _commit_more(store, 5)
    server.set_default(BATCH_ROLE, judge_json(3.9))
    server.script("chapter-004", Reply("这不是 JSON"))
    report = _run(
        server,
        store,
        lambda a: on_demand.batch_reevaluate(store, a.judge, [1, 2, 3, 4, 5], first_poll_s=0.01),
    )
    assert report.batch.mode == "batch"
    assert sorted(report.chapters) == [1, 2, 3, 5]
    assert 4 in report.failed
    assert report.cost_usd == pytest.approx(report.full_price_usd / 2)
    assert report.cost_usd > 0
    assert (store.evaluation(3) or {})["overall"] == pytest.approx(3.9)
    assert (store.pipeline_log(1) or {})["stages"][-1]["name"] == "reevaluate_batch"
    assert store.evaluation(4) is None  # chapter 4 had no verdict and its reply failed: nothing invented
    assert not server.requests_for("quality_judge")


def test_batch_reevaluation_falls_back_without_batches(
    store: NovelStore, server: FakeAnthropicServer
) -> None:
    server.set_default("quality_judge", judge_json(4.1))
    report = _run(
        server, store, lambda a: on_demand.batch_reevaluate(store, a.judge, [1, 2]), provider="kimi"
    )
    assert report.batch.mode == "sequential"
    assert "不提供批处理" in report.batch.note
    assert sorted(report.chapters) == [1, 2]
    assert len(server.requests_for("quality_judge")) == 2
