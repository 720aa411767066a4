"""``novel context`` (issue 16 point 7): after chapters run against the fake Messages API, each agent's prompt
record lists its sections with token counts that add up to the total and match what the model was sent; a
novel whose context is over the writer's budget gets a writer prompt under it, and the record says what the
budget cut; the chapter in flight can be inspected; bad input exits 1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.agents.context import WRITER_BUDGET_TOKENS, estimate_tokens
from novel_desktop.agents.text_ending import text_in_place_of_summary
from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.fakes.anthropic_server import FakeAnthropicServer, RecordedRequest, Reply

OUTLINE = """# 第一卷 入山

## 第1章 雨夜

林枫在雨夜里埋葬了爷爷，发现爷爷留下的残玉。

## 第2章 山门

林枫持残玉上苍梧宗，守门弟子以年龄拒收。

## 第3章 木牌

执事验玉后发给考核木牌，木牌背面与残玉同纹。
"""


@pytest.fixture
def novel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "新书.novel"
    outline = tmp_path / "outline.md"
    outline.write_text(OUTLINE, encoding="utf-8")
    assert main(["init", str(path), "--title", "青石问道", "--genre", "玄幻"]) == 0
    assert main(["outline", "set", str(path), "--volume", "1", str(outline)]) == 0
    capsys.readouterr()
    return path


def _prompt_text(request: RecordedRequest) -> str:
    """The prompt as the agent rendered it: the system blocks, then the first user message."""
    system = request.body.get("system") or []
    blocks = [b["text"] for b in system] if isinstance(system, list) else [str(system)]
    user = request.body["messages"][0]["content"]
    if isinstance(user, list):
        user = "\n\n".join(part["text"] for part in user if part.get("type") == "text")
    return "\n\n".join(blocks) + "\n\n" + user


def _chapter_text(novel: Path, n: int) -> str:
    with NovelStore.open(novel) as store:
        text = store.chapter_text(n)
    assert text is not None
    return text


def _context(novel: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["context", str(novel), *args, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_the_writer_record_lists_its_sections_and_they_add_up_to_the_prompt_sent(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["continue", str(novel), "-n", "2", "--non-interactive"]) == 0
    capsys.readouterr()
    data = _context(novel, capsys, "--chapter", "2", "--agent", "writer")
    assert data["in_flight"] is False
    [writer] = data["entries"]
    assert (writer["agent"], writer["round"], writer["role"]) == ("writer", 0, "chapter_writer")
    assert writer["budget"] == WRITER_BUDGET_TOKENS
    sections = {s["slot"]: s for s in writer["sections"]}
    assert sum(s["tokens"] for s in writer["sections"]) == writer["total_tokens"]
    # The total is the estimate of the prompt the model received for chapter 2.
    sent = _prompt_text(fake.requests_for("chapter_writer")[1])
    assert writer["total_tokens"] == estimate_tokens(sent)
    assert "守门弟子以年龄拒收" in sent
    assert sections["chapter_outline"]["tokens"] >= estimate_tokens(
        "林枫持残玉上苍梧宗，守门弟子以年龄拒收。"
    )
    assert sections["chapter_outline"]["label"] == "本章大纲"
    # The queued run drafted chapter 2 while chapter 1 was judged (pipeline/ahead.py): in place of chapter
    # 1's summary, not made yet, its writer read the end of chapter 1's text, a section of its own.
    assert "第1章的摘要尚未生成" in sent
    ending = sections["previous_text_ending"]
    assert ending["label"] == "上一章定稿结尾" and "第 1 章的摘要尚未生成" in ending["why"]
    assert ending["tokens"] >= estimate_tokens(text_in_place_of_summary(1, _chapter_text(novel, 1)))
    assert sections["recent_summaries"]["why"] == "没有更早的章节摘要"
    assert not [s for s in writer["sections"] if s.get("status")]  # nothing over budget here

    # Every agent of the chapter has its record: chapter 1 opens the volume, so it was judged twice; the
    # summarizer is two parts at once (agents/summary_parts.py) and the ordinary judge three panels
    # (agents/judge_panels.py), each with its own prompt.
    all_agents = _context(novel, capsys, "--chapter", "1")
    assert [(e["agent"], e.get("panel", "")) for e in all_agents["entries"]] == [
        ("writer", ""),
        ("summarizer", "S"),
        ("summarizer", "M"),
        ("refiner", ""),
        ("judge", "A"),
        ("judge", "B"),
        ("judge", "C"),
        ("judge2", ""),
    ]
    # Chapter 1 read no text ending: its recent summaries are its own section as before.
    assert "previous_text_ending" not in {s["slot"] for s in all_agents["entries"][0]["sections"]}
    for entry in all_agents["entries"]:
        assert sum(s["tokens"] for s in entry["sections"]) == entry["total_tokens"]
    judge2 = all_agents["entries"][-1]
    assert judge2["role"] == "judge_secondary" and judge2["model"]

    # The table a person reads: per section its tokens and why, the total against the budget.
    assert main(["context", str(novel), "--chapter", "2", "--agent", "写作"]) == 0
    out = capsys.readouterr().out
    assert "== 写作 writer" in out
    assert "本章大纲" in out and "上一章定稿结尾" in out
    assert f"预算 budget {WRITER_BUDGET_TOKENS:,}" in out
    assert "预算内，未丢弃任何内容" in out


def test_a_novel_over_the_writer_budget_gets_a_prompt_under_it_and_the_record_says_what_was_cut(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [{"id": "main", "name": "主线", "type": "main_arc", "status": "active"}] + [
        {"id": f"side-{i}", "name": f"支线{i}", "type": "faction_conflict", "status": "active"}
        for i in range(3)
    ]
    schedule = {
        "volume": 1,
        "active_storylines": [{"storyline_id": "main", "volume_role": "primary"}]
        + [{"storyline_id": f"side-{i}", "volume_role": "secondary"} for i in range(3)],
    }
    with NovelStore.open(novel) as store:
        store.put_documents(
            {
                "storylines/storylines.json": json.dumps({"storylines": lines}, ensure_ascii=False),
                "volumes/vol-01/storyline-schedule.json": json.dumps(schedule, ensure_ascii=False),
                # The current line's memory alone is ~40K tokens: far over the 25K budget.
                "storylines/main/memory.md": "最早的记忆开头。"
                + "林枫在山中修炼，记下每一日的所得。" * 2_300
                + "最近的记忆结尾。",
                **{f"storylines/side-{i}/memory.md": f"支线{i}的记忆。" * 300 for i in range(3)},
            }
        )
    assert main(["continue", str(novel), "-n", "1", "--non-interactive"]) == 0
    capsys.readouterr()
    sent = _prompt_text(fake.requests_for("chapter_writer")[0])
    assert estimate_tokens(sent) <= WRITER_BUDGET_TOKENS
    assert "最近的记忆结尾" in sent and "最早的记忆开头" not in sent
    assert "支线1的记忆" not in sent
    assert "林枫在雨夜里埋葬了爷爷" in sent  # the chapter outline is never cut

    [writer] = _context(novel, capsys, "--chapter", "1", "--agent", "writer")["entries"]
    assert writer["total_tokens"] == estimate_tokens(sent) <= WRITER_BUDGET_TOKENS
    cut = {s["slot"]: s for s in writer["sections"] if s.get("status")}
    assert cut["adjacent_memories"]["status"] == "dropped"
    assert "side-0（本卷日程：secondary）" in cut["adjacent_memories"]["why"]
    assert cut["storyline_memory"]["status"] == "trimmed"
    assert "前略" in cut["storyline_memory"]["note"]
    assert "chapter_outline" not in cut and "chapter_contract" not in cut

    assert main(["context", str(novel), "--chapter", "1", "--agent", "writer"]) == 0
    out = capsys.readouterr().out
    assert "被预算丢弃或裁剪" in out and "相邻线记忆" in out and "[已丢弃]" in out and "[已裁剪]" in out


def test_the_chapter_in_flight_shows_what_its_agents_were_sent_so_far(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every judgement unusable: the run's one retry (§8.2 ERROR_RETRY) fails too, and the chapter stays open.
    fake.set_default("quality_judge", Reply.malformed_json())
    assert main(["continue", str(novel), "-n", "1", "--non-interactive"]) != 0
    capsys.readouterr()
    data = _context(novel, capsys, "--chapter", "1")
    assert data["in_flight"] is True
    agents = [e["agent"] for e in data["entries"]]
    # The writer first; then summarizer, refiner and judge, which run at once on the draft (issue 18).
    assert agents[0] == "writer"
    assert {"summarizer", "refiner", "judge"} <= set(agents[1:])
    assert main(["context", str(novel), "--chapter", "1"]) == 0
    assert "写作中 in flight" in capsys.readouterr().out


def test_bad_input_exits_1_with_a_clear_message(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["context", str(novel), "--chapter", "1"]) == 1
    assert "第 1 章还没有写" in capsys.readouterr().err
    assert main(["continue", str(novel), "-n", "1", "--non-interactive"]) == 0
    capsys.readouterr()
    assert main(["context", str(novel), "--chapter", "9"]) == 1
    assert "第 9 章还没有写" in capsys.readouterr().err
    assert main(["context", str(novel), "--chapter", "1", "--agent", "editor"]) == 1
    err = capsys.readouterr().err
    assert "没有这个智能体：editor" in err and "writer" in err
    assert main(["context", str(novel), "--chapter", "1", "--agent", "reviser"]) == 1
    assert "没有 reviser 的提示词记录" in capsys.readouterr().err
    assert main(["context", str(novel), "--chapter", "0"]) == 1


def test_a_chapter_written_before_the_records_existed_says_so(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["continue", str(novel), "-n", "1", "--non-interactive"]) == 0
    capsys.readouterr()
    with NovelStore.open(novel) as store:
        log = store.pipeline_log(1)
        assert log is not None and log["context"]
    # A log without the key is what every chapter committed before this version has.
    _drop_context_key(novel)
    assert main(["context", str(novel), "--chapter", "1"]) == 0
    assert "没有上下文记录" in capsys.readouterr().out


def _drop_context_key(novel: Path) -> None:
    import sqlite3

    con = sqlite3.connect(novel)
    try:
        (content,) = con.execute("select content from pipeline_logs where chapter = 1").fetchone()
        log = json.loads(content)
        del log["context"]
        con.execute("update pipeline_logs set content = ? where chapter = 1", (json.dumps(log),))
        con.commit()
    finally:
        con.close()


def test_a_revision_and_the_polish_are_separate_entries_by_agent_and_round(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.e2e.replies import judge_json

    fake.script("quality_judge", judge_json(3.2), judge_json(3.7))
    assert main(["continue", str(novel), "-n", "1", "--non-interactive"]) == 0
    capsys.readouterr()
    entries = _context(novel, capsys, "--chapter", "1")["entries"]
    assert [(e["agent"], e["round"]) for e in entries] == [
        ("writer", 0),
        ("summarizer", 0),
        ("summarizer", 0),
        ("refiner", 0),
        ("judge", 0),
        ("judge", 0),
        ("judge", 0),
        ("judge2", 0),
        ("reviser", 1),
        ("summarizer", 1),
        ("summarizer", 1),
        ("refiner", 1),
        ("judge", 1),
        ("judge", 1),
        ("judge", 1),
        ("judge2", 1),
        ("polish", 1),
    ]
    assert [e["panel"] for e in entries if e["agent"] == "judge"] == ["A", "B", "C"] * 2
    assert [e["panel"] for e in entries if e["agent"] == "summarizer"] == ["S", "M"] * 2
    reviser = next(e for e in entries if e["agent"] == "reviser")
    assert {s["slot"] for s in reviser["sections"]} >= {"chapter_draft", "violations", "revision_round"}
    assert main(["context", str(novel), "--chapter", "1", "--agent", "二次润色"]) == 0
    assert "== 二次润色 polish · 第 1 轮" in capsys.readouterr().out


def test_every_judge_panel_and_summary_part_is_recorded_each_with_the_task_it_was_sent(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from novel_desktop.agents.judge_panels import PANEL_TASKS
    from novel_desktop.agents.summary_parts import PART_TASKS

    assert main(["continue", str(novel), "-n", "2", "--non-interactive"]) == 0
    capsys.readouterr()
    judges = _context(novel, capsys, "--chapter", "2", "--agent", "judge")["entries"]
    assert [(e["agent"], e["panel"], e["role"]) for e in judges] == [
        ("judge", "A", "quality_judge"),
        ("judge", "B", "quality_judge"),
        ("judge", "C", "quality_judge"),
    ]
    sent = [r.user_text for r in fake.requests_for("quality_judge")[-3:]]  # chapter 2's three panel calls
    for entry in judges:
        panel = {s["slot"]: s for s in entry["sections"]}["judge_panel"]
        # Each entry's panel task is the one that panel's request carried, and only that panel's.
        assert panel["tokens"] == estimate_tokens(PANEL_TASKS[entry["panel"]])
        assert sum(f"【评审组 {entry['panel']}】" in text for text in sent) == 1
        assert sum(s["tokens"] for s in entry["sections"]) == entry["total_tokens"]

    assert main(["context", str(novel), "--chapter", "2", "--agent", "评审"]) == 0
    out = capsys.readouterr().out
    assert "== 评审 judge · 评审组 A（" in out and "== 评审 judge · 评审组 C（" in out
    assert out.index("评审组 A") < out.index("评审组 B") < out.index("评审组 C")

    # The summarizer's two parts, likewise: one entry per call sent, each with its own part's task.
    parts = _context(novel, capsys, "--chapter", "2", "--agent", "summarizer")["entries"]
    assert [(e["panel"], e["role"]) for e in parts] == [("S", "summarizer"), ("M", "summarizer")]
    sent = [r.user_text for r in fake.requests_for("summarizer")[-2:]]  # chapter 2's two part calls
    for entry in parts:
        part = {s["slot"]: s for s in entry["sections"]}["summary_part"]
        assert part["tokens"] == estimate_tokens(PART_TASKS[entry["panel"]])
        assert sum(f"【摘要组 {entry['panel']}】" in text for text in sent) == 1
        assert sum(s["tokens"] for s in entry["sections"]) == entry["total_tokens"]
    assert main(["context", str(novel), "--chapter", "2", "--agent", "摘要"]) == 0
    out = capsys.readouterr().out
    assert out.index("== 摘要 summarizer · 摘要组 S（") < out.index("== 摘要 summarizer · 摘要组 M（")


def test_an_early_draft_thrown_away_and_written_again_is_recorded_as_written_again(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.e2e.replies import judge_json, writer_text

    # Chapter 1 is sent back for a revision that ends it otherwise: chapter 2's first early draft, from
    # chapter 1's first text, is thrown away; chapter 2 is drafted again from the text chapter 1 committed.
    revised = writer_text().replace("\n\n```json", "\n\n林枫回头望了一眼修订后的山门。\n\n```json", 1)
    fake.script("reviser", Reply(revised, chunk_size=40))
    fake.script("quality_judge", judge_json(3.2), judge_json(3.7))
    assert main(["continue", str(novel), "-n", "2", "--non-interactive"]) == 0
    err = capsys.readouterr().err
    assert "预写的第 2 章作废" in err
    chapter_2 = [r for r in fake.requests_for("chapter_writer") if "现在写第 2 章" in _prompt_text(r)]
    assert len(chapter_2) >= 2
    [writer] = _context(novel, capsys, "--chapter", "2", "--agent", "writer")["entries"]
    # The record is the prompt of the draft that was kept, the last one sent.
    assert writer["total_tokens"] == estimate_tokens(_prompt_text(chapter_2[-1]))
    assert text_in_place_of_summary(1, _chapter_text(novel, 1)) in _prompt_text(chapter_2[-1])
    assert "修订后的山门" in _prompt_text(chapter_2[-1]) and "修订后的山门" not in _prompt_text(chapter_2[0])
    ending = {s["slot"]: s for s in writer["sections"]}["previous_text_ending"]
    assert ending["tokens"] == estimate_tokens(
        "第1章：" + text_in_place_of_summary(1, _chapter_text(novel, 1))
    )
    assert sum(s["tokens"] for s in writer["sections"]) == writer["total_tokens"]
