"""Periodic checks, the volume review and contract change propagation, against the fake Messages API and
the seed project 《青石问道》 (chapters 1-2 written)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from novel_desktop.agents.planning import LLMPlanningAgents
from novel_desktop.llm.client import LLMClient
from novel_desktop.pipeline import checks, rule_change, volume_review
from novel_desktop.pipeline.interaction import AnswersFileResponder, InteractionManager
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, dumps
from tests.e2e.lifecycle_replies import audit_json, characters_json
from tests.fakes.anthropic_server import FakeAnthropicServer, fast_settings

KEY = "sk-ant-test-checks"
TEXT = "# 第{n}章 练剑\n\n林枫在后山练剑，一练就是一整天。陈老在树下看着，没说话。\n“还不够。”陈老说。\n"


@pytest.fixture
def store(seed_store: NovelStore) -> NovelStore:
    """The shared 《青石问道》 (chapters 1-2 committed, a 5-chapter outline), open."""
    return seed_store


@pytest.fixture
def server(server: FakeAnthropicServer) -> FakeAnthropicServer:
    """The shared bare fake server, on which the auditor and the character weaver answer well."""
    server.set_default("consistency_auditor", audit_json())
    server.set_default("character_weaver", characters_json())
    return server


def _commit(store: NovelStore, upto: int, score: float = 4.2) -> None:
    for n in range(3, upto + 1):
        store.put_staging(layout.chapter_path(n), TEXT.format(n=n), kind="refined")
        store.put_staging(layout.evaluation_path(n), json.dumps({"chapter": n, "overall": score}))
        store.commit_chapter(n, volume=1)


def _run(server: FakeAnthropicServer, answers: dict[str, Any], work: Any) -> Any:
    async def main() -> Any:
        async with LLMClient(fast_settings(), api_key=KEY, base_url=server.base_url) as client:
            interaction = InteractionManager(AnswersFileResponder(answers))
            return await work(LLMPlanningAgents(client), interaction)

    return asyncio.run(main())


def test_checks_fall_due_by_period_and_run_once(store: NovelStore) -> None:
    assert checks.due_checks(store, 4) == []
    assert checks.due_checks(store, 5) == ["brief", "drift"]
    assert checks.due_checks(store, 10) == ["brief", "drift", "audit"]
    checks._mark(store, "brief", 10)
    assert checks.due_checks(store, 12) == ["drift", "audit"]


def test_quality_brief_names_the_problem_chapters(store: NovelStore) -> None:
    _commit(store, 5, score=3.1)
    brief = checks.quality_brief(store, 5)
    # Chapters 1-2 came with the seed project (3.84, 4.28); 3-5 scored 3.1.
    assert brief.mean == pytest.approx((3.84 + 4.28 + 3.1 * 3) / 5, abs=0.01)
    assert sorted(brief.problems) == [3, 4, 5]
    assert "评分 3.1" in brief.problems[3]


def test_severe_audit_pauses_the_loop_and_is_remembered(
    store: NovelStore, server: FakeAnthropicServer
) -> None:
    _commit(store, 10)
    server.script("consistency_auditor", audit_json("high"))
    answers = {"quality brief": {"brief_action": "继续"}}
    report = _run(server, answers, lambda a, i: checks.after_chapter(store, 10, agents=a, interaction=i))
    assert report.pause
    assert "严重" in report.message and "把第 7 章的木牌改为通关玉符" in report.message
    assert store.checkpoint()["pending_actions"][-1]["type"] == "consistency_audit"
    assert json.loads(store.extra_file("audits/audit-001-010.json"))["findings"][0]["severity"] == "high"
    # The auditor read the window's summaries.
    assert "第 1-10 章" in server.requests_for("consistency_auditor")[0].body["messages"][0]["content"]
    # Running again asks nothing and calls nothing: every check of this period is done.
    again = _run(server, {}, lambda a, i: checks.after_chapter(store, 10, agents=a, interaction=i))
    assert not again.pause and again.message == ""
    assert len(server.requests_for("consistency_auditor")) == 1


def test_brief_answer_adjust_direction_replans_the_rest(
    store: NovelStore, server: FakeAnthropicServer
) -> None:
    _commit(store, 5)
    answers = {"quality brief": {"brief_action": "调整方向", "direction": "让苏婉提前登场"}}
    report = _run(server, answers, lambda a, i: checks.after_chapter(store, 5, agents=a, interaction=i))
    assert report.pause
    assert store.checkpoint()["orchestrator_state"] == "VOL_PLANNING"
    assert "让苏婉提前登场" in json.loads(store.meta()["plan_vol_01"])["direction"]


def test_drift_is_written_for_the_writer_and_cleared_at_baseline(store: NovelStore) -> None:
    _commit(store, 5)
    store.put_document(
        "style-profile.json",
        dumps({"avg_sentence_length": 60, "dialogue_ratio": 0.0, "metrics": {"avg_sentence_length": 60}}),
    )
    report = checks.style_drift(store, 5)
    assert report.items
    assert store.document_json("style-drift.json")["corrections"]
    # The writer of the next chapter reads it.
    from novel_desktop.agents.context import load_facts

    assert "corrections" in load_facts(store, 6).style_drift
    measured = checks.StyleMetrics.combine(
        c.metrics for c in checks.analyze_store(store).chapters if 1 <= c.number <= 5
    )
    baseline = measured.summary()
    profile = {
        "avg_sentence_length": baseline["avg_sentence_length"],
        "dialogue_ratio": baseline["dialogue_ratio"],
        "metrics": baseline,
    }
    store.put_document("style-profile.json", dumps(profile))
    cleared = checks.style_drift(store, 5)
    assert cleared.cleared and store.document("style-drift.json") is None


def _volume_one(store: NovelStore) -> None:
    _commit(store, 5)
    store.put_document(
        "characters/active/su-wan.json", dumps({"id": "su-wan", "name": "苏婉", "role": "supporting"})
    )
    store.put_document(layout.volume_info_path(1), dumps({"volume": 1, "chapter_start": 1, "chapter_end": 5}))


def test_volume_review_archives_cleans_up_and_leads_to_next_volume(
    store: NovelStore, server: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _volume_one(store)
    before = store.current_state()
    monkeypatch.setattr(volume_review, "RETIRE_AFTER", 3)  # 苏婉 never appears in chapters 1-5
    answers = {
        "volume closures": {"apply": ["退场角色：苏婉（su-wan）"]},
        "volume review": {"review_action": "确认", "direction": "外门大比"},
    }

    async def work(agents: Any, interaction: Any) -> Any:
        review = await volume_review.volume_review(store, agents, interaction, 1)
        await volume_review.ask_review(store, agents, interaction, 1)
        return review

    review = _run(server, answers, work)
    text = store.document("volumes/vol-01/review.md")
    assert "全卷一致性报告" in text and "伏笔完成度" in text and "苏婉" in text
    assert "退场角色：苏婉（su-wan）" in text and "作者确认执行" in text
    assert store.document_json("state/history/vol-01-final-state.json") == before
    assert store.document("characters/retired/su-wan.json") is not None
    assert store.document("characters/active/su-wan.json") is None
    assert store.document("characters/active/lin-feng.json") is not None  # the protagonist stays
    assert "苏婉" in review.message
    cp = store.checkpoint()
    assert (cp["current_volume"], cp["orchestrator_state"]) == (2, "VOL_PLANNING")
    assert "外门大比" in json.loads(store.meta()["plan_vol_02"])["direction"]


def test_volume_review_asks_before_retiring_and_keeps_what_the_author_keeps(
    store: NovelStore, server: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _volume_one(store)
    store.put_document(
        "storylines/storylines.json",
        dumps(
            {
                "storylines": [
                    {"id": "main", "name": "主线", "type": "main_arc", "scope": "novel", "status": "active"},
                    {
                        "id": "trial",
                        "name": "入门考核",
                        "type": "main_arc",
                        "scope": "single_volume",
                        "status": "active",
                        "introduced_volume": 1,
                    },
                ]
            }
        ),
    )
    store.put_document(
        "volumes/vol-01/foreshadowing.json",
        dumps(
            {
                "volume": 1,
                "foreshadowing": [
                    {"id": "jade_token", "description": "玉符来历", "scope": "volume", "status": "planted"}
                ],
            }
        ),
    )
    monkeypatch.setattr(volume_review, "RETIRE_AFTER", 3)
    proposed = [c.label for c in volume_review.review_closures(store, 1, 5)]
    assert "退场角色：苏婉（su-wan）" in proposed
    assert "关闭伏笔：玉符来历（jade_token）" in proposed
    assert "完结故事线：入门考核（trial）" in proposed

    # Without an answer nothing is retired, closed or written, and no review is stored.
    from novel_desktop.pipeline.interaction import AnswersNeeded

    with pytest.raises(AnswersNeeded) as info:
        _run(server, {}, lambda a, i: volume_review.volume_review(store, a, i, 1))
    asked = info.value.request.spec.questions[0]
    assert asked.kind == "multi_choice" and asked.default == proposed
    assert store.document("characters/active/su-wan.json") is not None
    assert store.document("volumes/vol-01/review.md") is None
    calls = len(server.requests_for("consistency_auditor"))

    # The author keeps 苏婉 and closes the thread and the storyline.
    chosen = ["关闭伏笔：玉符来历（jade_token）", "完结故事线：入门考核（trial）"]
    answers = {"volume closures": {"apply": chosen}}
    _run(server, answers, lambda a, i: volume_review.volume_review(store, a, i, 1))
    assert len(server.requests_for("consistency_auditor")) == calls  # the audit is not run twice
    assert store.document("characters/active/su-wan.json") is not None
    assert store.document("characters/retired/su-wan.json") is None
    threads = store.document_json("foreshadowing/global.json")["foreshadowing"]
    thread = next(f for f in threads if f["id"] == "jade_token")
    assert (thread["id"], thread["status"], thread["resolved_chapter"]) == ("jade_token", "resolved", 5)
    lines = {s["id"]: s["status"] for s in store.document_json("storylines/storylines.json")["storylines"]}
    assert lines == {"main": "active", "trial": "resolved"}
    text = store.document("volumes/vol-01/review.md")
    assert "退场角色：苏婉（su-wan）" in text and "作者选择保留" in text
    assert "关闭伏笔：玉符来历（jade_token）" in text and "作者确认执行" in text


def test_volume_review_reads_every_chapter_of_a_long_volume(
    store: NovelStore, server: FakeAnthropicServer
) -> None:
    """60 chapters of long summaries (well over one call's 12K tokens): the auditor still reads them all."""
    first = (store.summary(1) or "").strip().splitlines()[-1][:30]
    padding = "林枫在外门修炼，与同门切磋，暗中调查玉符的来历，又在藏经阁翻检旧案卷。" * 16
    for n in range(3, 61):
        store.put_staging(layout.chapter_path(n), TEXT.format(n=n), kind="refined")
        store.put_staging(layout.summary_path(n), f"# 第{n}章摘要\n\n摘要标记-{n:03d}。{padding}\n")
        store.put_staging(layout.evaluation_path(n), json.dumps({"chapter": n, "overall": 4.0}))
        store.commit_chapter(n, volume=1)
    store.put_document(
        layout.volume_info_path(1), dumps({"volume": 1, "chapter_start": 1, "chapter_end": 60})
    )
    answers = {"volume closures": {}}
    report = _run(server, answers, lambda a, i: volume_review.volume_review(store, a, i, 1))
    sent = [r.body["messages"][0]["content"] for r in server.requests_for("consistency_auditor")]
    assert len(sent) > 1  # audited in windows
    seen = "\n".join(sent)
    assert first and first in seen
    for n in (3, 30, 59, 60):
        assert f"摘要标记-{n:03d}" in seen
    assert "第 1-60 章" in report.message
    assert store.document("volumes/vol-01/review.md") is not None


def test_cleanup_prunes_retired_characters_from_the_state(store: NovelStore) -> None:
    state = store.current_state()
    assert "chen-lao" in state["characters"]
    # 陈老 is mentioned in the seed chapters; 30 chapters later he has been absent long enough.
    retired = volume_review.cleanup_state(store, 40, absent_for=20)
    assert retired == ["陈老"]
    assert "chen-lao" not in store.current_state()["characters"]
    assert store.current_state()["state_version"] == state["state_version"]
    assert (
        store.document_json("characters/retired/chen-lao.json")["final_state"]
        == state["characters"]["chen-lao"]
    )


def test_rule_change_lists_and_updates_affected_contracts(
    store: NovelStore, server: FakeAnthropicServer
) -> None:
    contract = {"chapter": 3, "preconditions": {"required_world_rules": ["W-002"]}, "acceptance_criteria": []}
    store.put_document(layout.contract_path(1, 3), dumps(contract))
    impact = rule_change.rule_change_impact(store, ["W-001", "W-002"])
    # 林枫's capability is bounded by W-001 without citing it; 陈老's contract is not about cultivation.
    assert impact.contracts == {"lin-feng": ["C-LINFENG-001"]}
    assert list(impact.chapters) == [3]  # chapters 1-2 are written: their contracts stay as they were

    answers = {"rule change propagation": {"propagate": "更新"}}
    report = _run(
        server, answers, lambda a, i: rule_change.propagate_rule_change(store, a, i, ["W-001", "W-002"])
    )
    assert "C-LINFENG-001" in report.message
    request = server.requests_for("character_weaver")[0].body["messages"][0]["content"]
    assert "更新角色" in request and "C-LINFENG-001" in request
    updated = store.document_json(layout.contract_path(1, 3))
    assert "W-001" in updated["preconditions"]["required_world_rules"]
    assert any("W-002" in c for c in updated["acceptance_criteria"])
