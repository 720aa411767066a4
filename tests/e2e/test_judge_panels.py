"""The ordinary judge as three panels at once (issue 18: the critical path): each request asks for its part,
and the merged verdict is what the gate decides on — a violation panel A finds forces a revision, a low style
score panel C gives lowers the overall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.agents.judge_panels import PANEL_DIMENSIONS, PanelReply, merge_panels
from novel_desktop.cli import main
from novel_desktop.domain.evaluation import DIMENSION_WEIGHTS
from novel_desktop.domain.platforms import platform_profile
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json, panel_json
from tests.fakes.anthropic_server import FakeAnthropicServer


def _low_style(score: float) -> str:
    reply = json.loads(panel_json(judge_json(4.0), "C"))
    reply["scores"]["style_naturalness"]["score"] = score
    reply["new_ai_phrases"] = ["眸光微闪"]
    return json.dumps(reply, ensure_ascii=False)


def test_each_panel_is_asked_for_its_half(novel: Path, fake: FakeAnthropicServer) -> None:
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    requests = fake.requests_for("quality_judge")
    assert sorted(r.panel or "" for r in requests) == ["A", "B", "C"]
    for request in requests:
        task = request.body["messages"][0]["content"][-1]["text"]
        own = PANEL_DIMENSIONS[request.panel or ""]
        other = [d for p, dims in PANEL_DIMENSIONS.items() if p != request.panel for d in dims]
        line = next(x for x in task.splitlines() if x.startswith("- scores 只打"))
        assert all(dim in line for dim in own) and not any(dim in line for dim in other)
        assert ("contract_verification：覆盖" in task) == (request.panel == "A")


def test_a_violation_found_by_panel_a_forces_a_revision(novel: Path, fake: FakeAnthropicServer) -> None:
    fake.script("quality_judge#A", panel_json(judge_json(4.5, violation=True), "A"))
    fake.script("quality_judge#B", panel_json(judge_json(4.5), "B"))
    fake.script("quality_judge#C", panel_json(judge_json(4.5), "C"))
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    assert len(fake.requests_for("reviser")) == 1
    # The revision is told which rule panel A found broken.
    assert "W-001" in fake.requests_for("reviser")[0].user_text
    with NovelStore.open(novel, write=False) as store:
        log = store.pipeline_log(3)
    assert log["revisions"] == 1 and log["scores"][0] == 4.5


def test_a_low_style_score_from_panel_c_lowers_the_overall(novel: Path, fake: FakeAnthropicServer) -> None:
    fake.script("quality_judge#A", panel_json(judge_json(4.0), "A"))
    fake.script("quality_judge#B", panel_json(judge_json(4.0), "B"))
    fake.script("quality_judge#C", _low_style(1))
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    with NovelStore.open(novel, write=False) as store:
        weights = platform_profile(store.meta().get("platform", "web")).weights
        expected = round(4.0 - 3.0 * weights["style_naturalness"], 2)  # below a pass (4.0 without it)
        assert store.pipeline_log(3)["scores"][0] == expected < 4.0
        evaluation = store.evaluation(3)
    assert evaluation is not None
    assert evaluation["scores"]["style_naturalness"]["score"] == 1
    assert evaluation["scores"]["plot_logic"]["score"] == 4.0
    assert evaluation["new_ai_phrases"] == ["眸光微闪"]


def test_the_merge_takes_each_dimension_from_its_own_panel() -> None:
    a = PanelReply.model_validate(json.loads(judge_json(5.0, violation=True)))  # a whole reply: only A's half
    b = PanelReply.model_validate(json.loads(judge_json(2.0)))
    merged = merge_panels({"A": a, "B": b, "C": b}, 7)
    assert merged.chapter == 7
    assert {k: v.score for k, v in merged.scores.items()} == {
        k: 5.0 if k in PANEL_DIMENSIONS["A"] else 2.0 for k in DIMENSION_WEIGHTS
    }
    share_a = sum(DIMENSION_WEIGHTS[k] for k in PANEL_DIMENSIONS["A"])
    assert merged.overall == pytest.approx(5.0 * share_a + 2.0 * (1 - share_a), abs=0.01)
    assert [v.rule_id for v in merged.blocking_violations()] == ["W-001"]
    assert merged.recommendation == "revise"


def test_a_dimension_neither_panel_scored_is_an_error() -> None:
    a = PanelReply.model_validate(json.loads(panel_json(judge_json(4.0), "A")))
    with pytest.raises(ValueError, match="missing score dimensions"):
        merge_panels({"A": a, "B": PanelReply()}, 3)


def test_a_panel_score_out_of_range_gets_the_repair_retry(novel: Path, fake: FakeAnthropicServer) -> None:
    bad = json.loads(panel_json(judge_json(4.2), "C"))
    bad["scores"]["pacing"]["score"] = 9
    fake.script("quality_judge#C", json.dumps(bad, ensure_ascii=False), panel_json(judge_json(4.2), "C"))
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    assert [r.panel for r in fake.requests_for("quality_judge")].count("C") == 2
    with NovelStore.open(novel, write=False) as store:
        assert store.pipeline_log(3)["scores"] == [4.2]
