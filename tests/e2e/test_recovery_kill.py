"""Killing `novel continue` at each pipeline stage and running it again resumes from that stage.

The child process talks to the fake server over HTTP; the reply of the stage after the target is slowed so
the child sits in that stage; the test kills it with SIGKILL there, then runs `novel continue` again and
checks the novel ends with the same committed chapters and a valid state, without redoing finished stages.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.domain.state import CurrentState
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json, refiner_json, summarizer_json, writer_text
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

REPO = Path(__file__).resolve().parents[2]


def _slow(text: str) -> Reply:
    return Reply(text, chunk_size=8, delay=0.05)


# target stage → (role to slow down, its slow reply, judge score, writer requests the resumed run makes)
CASES = {
    "drafting": ("chapter_writer", _slow(writer_text()), 4.2, 1),
    "drafted": ("summarizer", _slow(summarizer_json()), 4.2, 0),
    "refined": ("quality_judge", _slow(judge_json(4.2)), 4.2, 0),
    "judged": ("style_refiner", None, 3.7, 0),  # a 3.7 gets a second polish, made while the stage is "judged"
}


def _stage(novel: Path) -> str | None:
    try:
        with NovelStore.open(novel, write=False) as store:
            return store.checkpoint().get("pipeline_stage")
    except Exception:
        return None


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("target", list(CASES))
def test_kill_at_each_stage_then_resume(target: str, novel: Path, fake: FakeAnthropicServer) -> None:
    role, slow, score, redraft = CASES[target]
    fake.set_default("quality_judge", judge_json(score))
    if target == "judged":
        fake.script("style_refiner", refiner_json(), _slow(refiner_json()))
    else:
        fake.script(role, slow)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from novel_desktop.cli import main; sys.exit(main())",
            "continue",
            str(novel),
            "--non-interactive",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while _stage(novel) != target:
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        assert time.monotonic() < deadline, f"never reached {target}"
        time.sleep(0.02)
    time.sleep(0.2)  # inside the slow stage now
    os.kill(child.pid, signal.SIGKILL)
    child.wait()

    with NovelStore.open(novel, write=False) as store:
        assert store.status().chapters == 2  # nothing half-committed
        assert store.checkpoint()["pipeline_stage"] == target
    writer_before = len(fake.requests_for("chapter_writer"))
    assert main(["unlock", str(novel)]) == 0  # the killed writer's lock is stale
    fake.set_default("quality_judge", judge_json(4.2))
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    assert len(fake.requests_for("chapter_writer")) - writer_before == redraft

    with NovelStore.open(novel, write=False) as store:
        status = store.status()
        assert (status.chapters, status.last_completed_chapter, status.inflight_chapter) == (3, 3, None)
        state = store.current_state()
        CurrentState.model_validate(state)
        assert state["state_version"] == store.state_version()
        assert state["characters"]["lin-feng"]["location"] == "苍梧宗山门"
        assert store.list_staging() == []


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_kill_during_a_revision_resumes_the_revision(novel: Path, fake: FakeAnthropicServer) -> None:
    # The judge wants a revision (3.2); the reviser (stronger model, with the judge's fixes) is slow, and the
    # process dies while it writes. The next run must redo the revision, not start a fresh first draft.
    fake.script("quality_judge", judge_json(3.2))
    fake.script("reviser", _slow(writer_text()))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from novel_desktop.cli import main; sys.exit(main())",
            "continue",
            str(novel),
            "--non-interactive",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not fake.requests_for("reviser"):
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        assert time.monotonic() < deadline, "the reviser was never called"
        time.sleep(0.02)
    time.sleep(0.2)  # the reviser is streaming now
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    with NovelStore.open(novel, write=False) as store:
        assert store.status().chapters == 2
        assert store.checkpoint()["pipeline_stage"] == "drafting"
        assert store.checkpoint()["orchestrator_state"] == "CHAPTER_REWRITE"

    writers, revisers = len(fake.requests_for("chapter_writer")), len(fake.requests_for("reviser"))
    assert main(["unlock", str(novel)]) == 0
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    assert len(fake.requests_for("chapter_writer")) == writers  # no fresh first draft
    assert len(fake.requests_for("reviser")) == revisers + 1
    # The judge's required fix reached the resumed reviser.
    resumed = json.dumps(fake.requests_for("reviser")[-1].body, ensure_ascii=False)
    assert "守门弟子的态度写得更具体" in resumed
    with NovelStore.open(novel, write=False) as store:
        log = store.pipeline_log(3)
        assert (log["revisions"], log["scores"], log["gate_decision"]) == (1, [3.2, 4.2], "pass")
        assert [r.kind for r in store.revisions(3)] == ["draft", "refined", "revision", "refined"]
        assert store.status().chapters == 3
        assert store.list_staging() == []
