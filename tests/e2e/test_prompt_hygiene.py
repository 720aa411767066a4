"""Issue 16 point 6, prompt hygiene, seen in what the fake model was sent (the real SDK, the real novel file)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json
from tests.fakes.anthropic_server import FakeAnthropicServer, RecordedRequest


def user_text(request: RecordedRequest) -> str:
    return request.user_text


def judge_with_violation(score: float) -> str:
    data: dict[str, Any] = json.loads(judge_json(score))
    data["contract_verification"] = {"W-001": "violation"}
    data["violations"] = [
        {
            "rule_id": "W-001",
            "confidence": "high",
            "description": "越级使用法术：炼气期的林枫施展了金丹期的御剑术",
            "evidence": "林枫并指一挥，飞剑破空",
        }
    ]
    return json.dumps(data, ensure_ascii=False)


def test_the_second_revision_is_told_it_is_round_two_and_the_last(
    novel: Path, fake: FakeAnthropicServer
) -> None:
    fake.script("quality_judge", judge_with_violation(4.5), judge_with_violation(4.5), judge_json(4.4))
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    first, second = (user_text(r) for r in fake.requests_for("reviser"))
    assert "第 1 轮修订（共最多 2 轮）" in first
    assert "最后一轮" not in first
    assert "第 2 轮修订（共最多 2 轮）" in second
    assert "这是最后一轮" in second and "第 1 轮没有改好" in second
    # The violation arrives as one readable line with its rule and the quoted passage, never as a repr.
    line = next(ln[2:] for ln in first.splitlines() if ln.startswith("- ") and "W-001" in ln)
    assert line.endswith("越级使用法术：炼气期的林枫施展了金丹期的御剑术 原文：「林枫并指一挥，飞剑破空」")
    assert f"- {line}" in first.splitlines()
    # Round 2 is told this rule was already in round 1's order and is still broken.
    assert f"- 【第 1 轮已要求修改，仍未解决】{line}" in second.splitlines()
    for text in (first, second):
        assert "rule_id" not in text and "Violation(" not in text and "('" not in text
    with NovelStore.open(novel, write=False) as store:
        assert store.pipeline_log(3)["revisions"] == 2


@pytest.mark.parametrize("round_", [1, 2])
def test_round_text(round_: int) -> None:
    from novel_desktop.agents.facts import revision_round_text

    text = revision_round_text(round_)
    assert text.startswith(f"第 {round_} 轮修订")
    assert ("最后一轮" in text) == (round_ == 2)


def test_the_second_polish_gets_the_judges_style_issues_and_only_what_is_left_of_the_budget(
    novel: Path, fake: FakeAnthropicServer
) -> None:
    from tests.e2e.replies import PARAGRAPHS, refiner_json

    data: dict[str, Any] = json.loads(judge_json(3.7))
    data["scores"]["style_naturalness"]["reason"] = "叙述腔偏书面，句式单一"
    data["issues"] = ["句式重复：连续几段都以“林枫”开头", "守门弟子脸谱化"]
    data["risk_flags"] = ["ai_phrase_density:high", "character_speech_missing:执事"]
    fake.script("quality_judge", json.dumps(data, ensure_ascii=False))
    # The polish asks for far more than the 15% the two passes share: six whole paragraphs.
    # Each edit costs its longer side: a refined text twice the paragraph's length.
    refined = "山门石阶湿滑，林枫背着药篓往上数，数到九十九级才停。" * 4
    greedy = [{"original": PARAGRAPHS[0], "refined": refined, "reason": "句式：x"}] * 6
    cost = max(len(PARAGRAPHS[0]), len(refined))
    fake.script("style_refiner", refiner_json(), json.dumps({"edits": greedy}, ensure_ascii=False))
    assert main(["continue", str(novel), "--non-interactive"]) == 0

    first, polish = (user_text(r) for r in fake.requests_for("style_refiner"))
    assert "先替换 AI 套话命中" in first and "叙述腔偏书面" not in first
    focus = polish.split("## 本次重点", 1)[1].split("## 程序检测结果", 1)[0]
    assert "第二次润色" in focus
    assert "文风自然度 3.7 分：叙述腔偏书面，句式单一" in focus
    assert "句式重复：连续几段都以“林枫”开头" in focus
    assert "ai_phrase_density" in focus
    assert "脸谱化" not in focus  # not a style issue: the reviser's business, not the polish's
    with NovelStore.open(novel, write=False) as store:
        log = store.pipeline_log(3)
        text = store.chapter_text(3)
    assert log["gate_decision"] == "polish"
    spent = [max(len(e["original"]), len(e["refined"])) for e in log["refine_edits"]]
    assert spent[0] == len("嘴角勾起一抹冷笑")  # the first pass
    # The polish was told what the first pass left of the chapter's 15% ...
    budget = int(re.search(r"本次全部修改合计不超过 (\d+) 个字符", polish).group(1))  # type: ignore[union-attr]
    size = int(re.search(r"本章共 (\d+) 个字符", polish).group(1))  # type: ignore[union-attr]
    assert budget == int(size * 0.15) - spent[0]
    # ... and only as many of its edits as fit in that were applied: both passes stay within 15%.
    applied = len(spent) - 1
    assert 0 < applied < 6
    assert applied * cost <= budget < (applied + 1) * cost
    assert sum(spent) <= int(size * 0.15)
    assert text.count("山门石阶湿滑") == applied * 4


def test_a_retry_is_said_once_in_chinese(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.e2e.replies import summarizer_json, writer_text
    from tests.fakes.anthropic_server import Reply

    fake.script("chapter_writer", Reply.overloaded(), Reply(writer_text(), chunk_size=40))
    fake.script("summarizer#S", Reply.malformed_json(), summarizer_json())  # the summary's part
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    err = capsys.readouterr().err
    repaired = [line for line in err.splitlines() if "修复重试后成功" in line]
    assert repaired == ["  ! 摘要：摘要与状态补丁首次输出无效，修复重试后成功。"]
    retried = [line for line in err.splitlines() if "重试" in line and "章节写作" in line]
    assert len(retried) == 1 and "章节写作的请求服务繁忙（529）" in retried[0]
    assert re.search(r"(马上|\d+ 秒后)重试（第 2 次，最多 \d 次）$", retried[0])
    # No raw English log line, no role id in a line the author reads.
    assert "LLM call" not in err and "summarizer" not in err and "chapter_writer" not in err


def test_commit_warnings_reach_the_author_once(novel: Path, fake: FakeAnthropicServer) -> None:
    """Every warning of a chapter run is a PipelineWarning (the window shows those), each exactly once."""
    import asyncio

    from novel_desktop.pipeline.chapter import ChapterPipeline
    from novel_desktop.pipeline.events import PipelineWarning
    from novel_desktop.pipeline.interaction import refuse_non_interactive
    from novel_desktop.session import NovelSession
    from tests.fakes.anthropic_server import Reply

    fake.script("summarizer", Reply.malformed_json(), Reply.malformed_json())
    events: list[object] = []

    async def run() -> list[str]:
        with NovelStore.open(novel, write=True) as store:
            async with NovelSession(store, responder=refuse_non_interactive) as session:
                pipeline = ChapterPipeline(
                    store, session.agents.chapter, session.interaction, emit=events.append
                )
                return (await pipeline.run_chapter()).warnings

    warnings = asyncio.run(run())
    shown = [e.message for e in events if isinstance(e, PipelineWarning)]
    assert warnings and shown == warnings
    assert any(w.startswith("摘要：摘要与状态补丁输出两次都无法通过校验") for w in shown)


def chapter_blocks(request: RecordedRequest) -> list[str]:
    """The texts of the cache-marked blocks of the request's first user turn."""
    content = request.body["messages"][0]["content"]
    assert isinstance(content, list), "the chapter goes as its own block"
    return [b["text"] for b in content if "cache_control" in b]


def test_the_chapter_is_one_cached_block_the_later_calls_send_identically(
    novel: Path, fake: FakeAnthropicServer
) -> None:
    # Chapter 5 ends the volume: judged twice; 3.7 from both judges sends it to the second polish.
    fake.script("quality_judge", judge_json(4.2), judge_json(4.2), judge_json(3.7))
    fake.script("judge_secondary", judge_json(3.7))
    assert main(["continue", str(novel), "-n", "3", "--non-interactive"]) == 0
    # Chapter 5's three judge panels; they start at once, so any may reach the server first.
    judge, other_panel, third_panel = sorted(
        fake.requests_for("quality_judge")[6:9], key=lambda r: r.panel or ""
    )
    second = fake.requests_for("judge_secondary")[0]
    polish = fake.requests_for("style_refiner")[-1]
    summarizer = fake.requests_for("summarizer")[-1]
    [judged] = chapter_blocks(judge)
    assert judged.startswith("# 本章资料\n") and "# 本章正文\n<chapter>\n# 第5章" in judged
    # One prefix for every call after the writer: the same system blocks (every agent's instructions, then
    # the bible), then the chapter as the first user block; each agent's task only after it.
    for request in (second, polish, summarizer):
        assert request.body["system"] == judge.body["system"]
        assert "cache_control" in request.body["messages"][0]["content"][0]
    assert "本次任务：质量评审" in judge.body["messages"][0]["content"][1]["text"]
    # The judges, the summarizer and the first refiner run at once on the draft and send the very same
    # block, cache-marked, and the chapter only there: one of them writes the prefix, the others read it.
    first_refine = fake.requests_for("style_refiner")[-2]
    for request in (second, summarizer, first_refine, other_panel, third_panel):
        assert chapter_blocks(request) == [judged]
        assert user_text(request).count(judged) == 1
    # The panels and the secondary judge differ only in the task after the prefix: which part to give.
    tasks = [r.body["messages"][0]["content"][1]["text"] for r in (judge, other_panel, third_panel, second)]
    assert "【评审组 A】" in tasks[0] and "【评审组 B】" in tasks[1] and "【评审组 C】" in tasks[2]
    assert "完整评审" in tasks[3]
    assert [r.panel for r in (judge, other_panel, third_panel, second)] == ["A", "B", "C", None]
    assert other_panel.body["system"] == third_panel.body["system"] == judge.body["system"]
    # The second polish works on the refined text, quoted once in the same place.
    [refined] = chapter_blocks(polish)
    assert refined != judged and "哼了一声" in refined and user_text(polish).count(refined) == 1
    # Within the API's four breakpoints.
    for request in (judge, second, polish, summarizer):
        marks = [b for b in request.system_blocks if "cache_control" in b]
        assert len(marks) + 1 <= 4


def test_a_repair_reads_the_chapter_from_the_cache(novel: Path, fake: FakeAnthropicServer) -> None:
    from tests.fakes.anthropic_server import Reply, estimate_tokens

    fake.script("quality_judge", Reply.malformed_json(), judge_json(4.2))
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    # The malformed reply served every panel (one scripted judgement answers all parts): each repairs.
    requests = fake.requests_for("quality_judge")
    assert sorted(r.panel or "" for r in requests) == ["A", "A", "B", "B", "C", "C"]
    [chapter] = chapter_blocks(requests[0])
    assert all(chapter_blocks(r) == [chapter] for r in requests)
    usage = [r["usage"] for r in fake.reported if r["role"] == "quality_judge"]
    # Only the first call writes the prefix; the other panels and the repairs read the chapter from it.
    assert sum(u["cache_read_input_tokens"] >= estimate_tokens(chapter) for u in usage) >= 5
    with NovelStore.open(novel, write=False) as store:
        judge_stage = [s for s in store.pipeline_log(3)["stages"] if s["name"] == "judge"]
    assert len(judge_stage) == 6  # the pipeline log shows each panel's repair reading the chapter's cache
    for repair in (1, 3, 5):
        assert judge_stage[repair]["cache_read_input_tokens"] >= estimate_tokens(chapter)


def test_each_storyline_fact_reaches_the_writer_once_and_a_line_is_adjacent_or_frozen(
    novel: Path, fake: FakeAnthropicServer
) -> None:
    lines = [
        {"id": "main_arc", "name": "林枫问道", "type": "main_arc", "status": "active", "description": "主线"},
        {
            "id": "sect_war",
            "name": "宗门之争",
            "type": "faction_conflict",
            "status": "active",
            "description": "两宗相争",
        },
        {
            "id": "old_feud",
            "name": "陈老旧怨",
            "type": "mystery",
            "status": "dormant",
            "description": "陈老的过去",
        },
    ]
    contract = {
        "chapter": 3,
        "storyline_id": "main_arc",
        "objectives": [{"id": "OBJ-003-1", "type": "plot", "required": True, "description": "林枫过问心阶"}],
        "storyline_context": {
            "last_chapter_on_this_line": 2,
            "last_chapter_summary": "陈老带林枫到了苍梧山脚",
            "chapters_since_last": 0,
            # sect_war is active in the schedule (adjacent) AND named here: today it was both.
            "concurrent_state": {"sect_war": "玄水宗使者已到山门", "old_feud": "陈老闭门不出"},
        },
        "transition_hint": {"next_storyline": "sect_war", "bridge": "考核的钟声传到玄水宗使者耳中"},
    }
    with NovelStore.open(novel, write=True) as store:
        schedule = json.loads(store.document("volumes/vol-01/storyline-schedule.json") or "{}")
        schedule["active_storylines"].append({"storyline_id": "sect_war", "volume_role": "secondary"})
        store.put_documents(
            {
                "storylines/storylines.json": json.dumps({"storylines": lines}, ensure_ascii=False),
                "storylines/sect_war/memory.md": "- 玄水宗与苍梧宗争夺灵脉\n- 使者携战书而来",
                "storylines/old_feud/memory.md": "- 陈老年轻时是苍梧宗弃徒",
                "volumes/vol-01/storyline-schedule.json": json.dumps(schedule, ensure_ascii=False),
                "volumes/vol-01/chapter-contracts/chapter-003.json": json.dumps(contract, ensure_ascii=False),
            }
        )
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    prompt = user_text(fake.requests_for("chapter_writer")[0])
    section = prompt.split("<storyline_context>", 1)[1].split("</storyline_context>", 1)[0]
    adjacent = section.split("<adjacent_lines", 1)[1].split("</adjacent_lines>", 1)[0]
    frozen = section.split("<frozen_lines", 1)[1].split("</frozen_lines>", 1)[0]
    # sect_war is adjacent: its memory, headed by the contract's news; not also a frozen line.
    assert "[sect_war] 此刻：玄水宗使者已到山门" in adjacent and "使者携战书而来" in adjacent
    assert "sect_war" not in frozen
    # old_feud is frozen: one line, no memory.
    assert "- old_feud：陈老闭门不出" in frozen and "弃徒" not in prompt
    # Each fact once in the whole user turn.
    for fact in ("玄水宗使者已到山门", "考核的钟声传到玄水宗使者耳中", "陈老闭门不出", "林枫过问心阶"):
        assert prompt.count(fact) == 1, fact
    # The last chapter's summary is among the recent summaries: not repeated in the storyline context.
    contract_part = prompt.split("## L3 章节契约", 1)[1].split("## L2", 1)[0]
    assert "storyline_context" not in contract_part and "transition_hint" not in contract_part
    assert "陈老带林枫到了苍梧山脚" not in section
