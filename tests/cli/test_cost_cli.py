"""Honest totals (issue 15 point 6): every model call an author's commands make is in the cost ledger, with
its chapter and purpose, cancelled ones too, and ``novel status`` / ``novel cost`` add up to what the provider
reported — against the fake Messages API server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.cli.common import display_width
from novel_desktop.domain.ledger import attributed
from novel_desktop.llm.client import PromptBlock
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.settings import LLMSettings
from novel_desktop.llm.usage import Usage
from novel_desktop.session import NovelSession
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

ROOT = Path(__file__).resolve().parents[2]


def _priced(fake: FakeAnthropicServer, settings: LLMSettings) -> tuple[float, Usage]:
    """What the fake server reported, priced as the provider would bill it."""
    cost, total = 0.0, Usage()
    for report in fake.reported:
        usage = Usage.from_api(report["usage"])
        cost += usage.cost(settings.price_for(report["model"]))
        total = total + usage
    return cost, total


def _cancel_mid_stream(novel: Path, settings: LLMSettings) -> None:
    """A chapter writer's call the author stops after its first words."""

    async def work(session: NovelSession) -> None:
        cancel = asyncio.Event()
        with attributed("write", chapter=3), pytest.raises(asyncio.CancelledError):
            await session.client.stream(
                AgentRole.chapter_writer,
                system=[PromptBlock("你是网文作者。")],
                messages=[{"role": "user", "content": "写第三章"}],
                on_text=lambda _text: cancel.set(),
                cancel=cancel,
            )

    with NovelSession.open(novel, settings=settings) as session:
        session.run(work)


def test_every_call_is_in_the_ledger_and_the_status_total_is_what_the_provider_reported(
    novel: Path, fake: FakeAnthropicServer, settings: LLMSettings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["continue", str(novel), "-n", "1", "--non-interactive"]) == 0  # chapter 3
    fake.set_default("quality_judge", judge_json(3.0))
    assert main(["judge", str(novel), "--chapter", "1"]) == 0
    decision = {
        "type": "requires_user_decision",
        "recommendation": "保留",
        "options": ["保留"],
        "rationale": "冲突",
    }
    fake.set_default("world_builder", json.dumps(decision, ensure_ascii=False))
    assert main(["world", "extend", str(novel), "镇上有灵脉", "--non-interactive"]) == 1  # asked, not applied
    fake.script("chapter_writer", Reply.slow("林风" * 200, delay=0.02))
    _cancel_mid_stream(novel, settings)
    capsys.readouterr()

    with NovelStore.open(novel, write=False) as store:
        calls = store.model_calls()
    assert len(calls) == len(fake.reported)
    seen = {(c.chapter, c.purpose, c.role, c.status) for c in calls}
    assert {
        (3, "write", "chapter_writer", "ok"),
        (3, "summarize", "summarizer", "ok"),
        (3, "judge", "quality_judge", "ok"),
        (1, "rejudge", "quality_judge", "ok"),
        (None, "on_demand", "world_builder", "ok"),
        (3, "write", "chapter_writer", "cancelled"),
    } <= seen
    cancelled = next(c for c in calls if c.status == "cancelled")
    started = fake.reported[-1]["usage"]  # message_start's usage: the input is billed
    assert cancelled.input_tokens == started["input_tokens"] > 0
    assert cancelled.cost_usd > 0

    cost, usage = _priced(fake, settings)
    assert main(["status", str(novel), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["cost"]["calls"] == len(fake.reported)
    assert status["cost"]["total_usd"] == pytest.approx(cost, abs=1e-5)
    assert status["cost"]["input_tokens"] == usage.input_tokens
    assert status["cost"]["output_tokens"] == usage.output_tokens
    assert main(["status", str(novel)]) == 0
    assert f"总花费 cost: ${cost:.4f}" in capsys.readouterr().out

    assert main(["cost", str(novel), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["total"]["total_usd"] == pytest.approx(cost, abs=1e-5)
    by_chapter = {row["chapter"]: row["total_usd"] for row in report["chapters"]}
    assert set(by_chapter) == {1, 3, None}
    assert sum(by_chapter.values()) == pytest.approx(cost, abs=1e-5)
    assert {row["purpose"] for row in report["purposes"]} >= {"write", "rejudge", "on_demand", "judge"}
    assert main(["cost", str(novel)]) == 0
    out = capsys.readouterr().out
    assert "第 3 章" in out and "重新评审" in out and "章节之外" in out
    # The dollar figures stand in one column in a terminal, whatever the labels' widths (CJK takes two).
    rows = [line for line in out.splitlines() if line.startswith("  ") and "$" in line]
    assert len(rows) >= 6
    assert len({display_width(row[: row.index("$")]) for row in rows}) == 1, rows


def test_a_process_killed_mid_call_leaves_an_interrupted_row_with_its_input(
    novel: Path, fake: FakeAnthropicServer, settings: LLMSettings
) -> None:
    fake.script("chapter_writer", Reply.slow("林风" * 200, delay=0.02))
    code = (
        "import os, sys\n"
        "from novel_desktop.domain.ledger import attributed\n"
        "from novel_desktop.llm.client import PromptBlock\n"
        "from novel_desktop.session import NovelSession\n"
        "from tests.fakes.anthropic_server import fast_settings\n"
        "session = NovelSession.open(sys.argv[1], settings=fast_settings())\n"
        "async def work(s):\n"
        "    with attributed('write', chapter=3):\n"
        "        await s.client.stream('chapter_writer', system=[PromptBlock('写')],\n"
        "            messages=[{'role': 'user', 'content': '写第三章'}], on_text=lambda t: os._exit(9))\n"
        "session.run(work)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(novel)], cwd=ROOT, check=False)
    assert done.returncode == 9  # killed in the middle of the stream
    with NovelStore.open(novel, write=False) as store:
        calls = store.model_calls()
    assert [(c.chapter, c.purpose, c.status) for c in calls] == [(3, "write", "interrupted")]
    assert calls[0].input_tokens == fake.reported[-1]["usage"]["input_tokens"] > 0
