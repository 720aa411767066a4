"""Issue 16 point 6, prompt hygiene, seen in what the fake model was sent (the real SDK, the real novel file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json
from tests.fakes.anthropic_server import FakeAnthropicServer, RecordedRequest


def user_text(request: RecordedRequest) -> str:
    """The first user turn as the model reads it (one string, or its text blocks in order)."""
    content = request.body["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "".join(str(block.get("text", "")) for block in content)


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
    line = "- [W-001] 越级使用法术：炼气期的林枫施展了金丹期的御剑术 原文：「林枫并指一挥，飞剑破空」"
    for text in (first, second):
        assert line in text.splitlines()
        assert "rule_id" not in text and "Violation(" not in text and "('" not in text
    with NovelStore.open(novel, write=False) as store:
        assert store.pipeline_log(3)["revisions"] == 2


@pytest.mark.parametrize("round_", [1, 2])
def test_round_text(round_: int) -> None:
    from novel_desktop.agents.facts import revision_round_text

    text = revision_round_text(round_)
    assert text.startswith(f"第 {round_} 轮修订")
    assert ("最后一轮" in text) == (round_ == 2)
