"""The bundled demo novel: what an author sees when opening it before setting any key."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from novel_desktop import paths
from novel_desktop.analysis.ai_phrases import find_hits, load_default_phrases
from novel_desktop.cli import main as cli_main
from novel_desktop.demo import build_demo, demo_copy, demo_source
from novel_desktop.domain.contracts import ChapterContract
from novel_desktop.domain.evaluation import DIMENSION_WEIGHTS, Evaluation
from novel_desktop.domain.foreshadowing import GlobalForeshadowing, overdue
from novel_desktop.domain.state_patch import StatePatch
from novel_desktop.domain.storylines import StorylineSchedule
from novel_desktop.domain.summary import ChapterSummary
from novel_desktop.domain.text import count_chars
from novel_desktop.domain.validate import model_for, problems_for
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, StoreError

SRC = demo_source()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NovelStore]:
    path = build_demo(tmp_path_factory.mktemp("demo") / "demo.novel")
    with NovelStore.open(path, write=False) as store:
        yield store


def test_demo_data_is_found_through_paths() -> None:
    assert paths.resources_dir() / "demo" == SRC
    assert (SRC / "novel.json").is_file()


def test_status_shows_six_chapters_open_threads_and_a_stale_edit(demo: NovelStore) -> None:
    status = demo.status()
    assert status.title == "剑冢守灯人"
    assert status.chapters == 6
    assert status.last_completed_chapter == 6
    assert status.open_foreshadowing > 0
    assert status.stale_chapters == [4, 5, 6]
    assert status.mean_score is not None and 3.4 <= status.mean_score <= 4.5
    assert status.inflight_chapter is None


def test_state_history_has_one_version_per_chapter(demo: NovelStore) -> None:
    assert demo.state_versions() == list(range(7))
    changelog = demo.changelog()
    assert {entry["chapter"] for entry in changelog} == set(range(1, 7))
    # Each version's changelog group came from exactly one chapter commit.
    for version in range(1, 7):
        chapters = {e["chapter"] for e in changelog if e["state_version"] == version}
        assert chapters == {version}
    state = demo.current_state()
    assert state["characters"]["shen-yan"]["cultivation"] == "练气四层"
    assert "荐书" in state["characters"]["shen-yan"]["inventory"]
    assert demo.state_at(2)["items"]["duanshuang-sword"]["mark"] == "丙三"


def test_every_chapter_has_summary_evaluation_and_log(demo: NovelStore) -> None:
    for n in range(1, 7):
        summary = ChapterSummary.from_markdown(demo.summary(n) or "")
        assert summary.chapter == n and summary.storyline_id
        evaluation = Evaluation.model_validate(demo.evaluation(n))
        assert 3.4 <= evaluation.overall <= 4.5
        assert evaluation.overall == evaluation.computed_overall()
        for name, score in evaluation.scores.items():
            assert score.weight == DIMENSION_WEIGHTS[name]
        log = demo.pipeline_log(n)
        assert log is not None and log["stages"] and log["total_cost_usd"] > 0


def test_evidence_quotes_the_chapter_it_judges(demo: NovelStore) -> None:
    for n in range(1, 7):
        text = demo.chapter_text(n) or ""
        for name, score in (demo.evaluation(n) or {})["scores"].items():
            assert score["evidence"] in text, f"chapter {n} {name}: {score['evidence']}"


def test_one_chapter_went_through_a_revision(demo: NovelStore) -> None:
    revised = [n for n in range(1, 7) if (demo.pipeline_log(n) or {}).get("revisions")]
    assert revised == [5]
    kinds = [r.kind for r in demo.revisions(5)]
    assert kinds == ["draft", "revision"]
    draft = demo.revision_text(demo.revisions(5)[0].id) or ""
    assert "“灭着。”沈砚说。" in draft  # the lie the judge caught
    assert "“亮着。”沈砚说。" in (demo.chapter_text(5) or "")


def test_manual_edit_of_chapter_four_is_the_current_text(demo: NovelStore) -> None:
    assert [r.kind for r in demo.revisions(4)] == ["draft", "refined", "manual"]
    assert "三十七号灯台底下那块松动的砖" in (demo.chapter_text(4) or "")
    # The state still says what the pipeline derived from the old text: that is why it needs a rebuild.
    assert demo.current_state()["items"]["father-ledger"]["location"] == "沈砚怀中"


def test_foreshadowing_has_planted_advanced_resolved_and_overdue_threads(demo: NovelStore) -> None:
    threads = GlobalForeshadowing.model_validate(demo.document_json(layout.GLOBAL_FORESHADOWING))
    statuses = {t.id: t.status for t in threads.foreshadowing}
    assert statuses["bing_san_mark"] == "resolved"
    assert statuses["duanshuang_spirit"] == "planned"
    assert {"planted", "advanced"} <= set(statuses.values())
    assert [t.id for t in overdue(threads.foreshadowing, 7)] == ["father_death"]


def test_chapters_are_real_prose_without_ai_phrases(demo: NovelStore) -> None:
    phrases = load_default_phrases()
    for n in range(1, 7):
        text = demo.chapter_text(n) or ""
        assert 1500 <= count_chars(text) <= 2500
        assert find_hits(text, phrases) == []


def test_every_demo_json_validates_against_its_model() -> None:
    checked = 0
    for file in sorted(SRC.rglob("*.json")):
        rel = file.relative_to(SRC).as_posix()
        if rel.startswith("state/") and rel.endswith("-delta.json"):
            rel = "staging/" + rel  # deltas are staged pipeline outputs
        data = json.loads(file.read_text(encoding="utf-8"))
        if model_for(rel) is None:
            continue
        assert problems_for(rel, data) == [], rel
        checked += 1
    assert checked >= 35


def test_deltas_are_valid_patches_in_order() -> None:
    for n in range(1, 7):
        patch = StatePatch.model_validate_json((SRC / layout.delta_path(n)).read_text(encoding="utf-8"))
        assert patch.chapter == n and patch.base_state_version == n - 1


def test_contract_chain_and_convergence() -> None:
    folder = SRC / "volumes/vol-01/chapter-contracts"
    contracts = [
        ChapterContract.model_validate_json((folder / f"chapter-{n:03d}.json").read_text(encoding="utf-8"))
        for n in range(1, 11)
    ]
    for before, after in itertools.pairwise(contracts):
        assert after.preconditions.character_states == before.postconditions.state_changes
    schedule = StorylineSchedule.model_validate_json(
        (SRC / "volumes/vol-01/storyline-schedule.json").read_text(encoding="utf-8")
    )
    covered = {n for n in range(1, 11) if any(e.covers(n) for e in schedule.convergence_events)}
    assert {9, 10} <= covered
    assert 8 not in covered
    outline = (SRC / "volumes/vol-01/outline.md").read_text(encoding="utf-8")
    for contract in contracts:
        assert f"## 第{contract.chapter}章 " in outline
        assert f"- **Storyline**: {contract.storyline_id}" in outline


def test_demo_copy_makes_a_new_file_each_time() -> None:
    first = demo_copy()
    second = demo_copy()
    assert first != second
    assert first.parent == paths.user_data_dir() / "demo" == second.parent
    with NovelStore.open(second, write=False) as store:
        assert store.status().chapters == 6


def test_build_demo_never_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "mine.novel"
    target.write_bytes(b"the author's own file")
    with pytest.raises(StoreError):
        build_demo(target)
    assert target.read_bytes() == b"the author's own file"


def test_cli_demo_writes_the_novel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "示例.novel"
    assert cli_main(["demo", str(target)]) == 0
    out = capsys.readouterr().out
    assert "剑冢守灯人" in out and "4、5、6" in out
    assert cli_main(["demo", str(target)]) == 2
    assert "不会覆盖" in capsys.readouterr().err


def test_broken_demo_data_leaves_no_half_built_file(tmp_path: Path) -> None:
    import shutil

    from novel_desktop.demo import DemoError

    source = tmp_path / "demo"
    shutil.copytree(SRC, source)
    delta = source / layout.delta_path(3)
    patch = json.loads(delta.read_text(encoding="utf-8"))
    patch["ops"].append({"op": "set", "path": "characters.柳含章.location", "value": "执法堂"})
    delta.write_text(json.dumps(patch, ensure_ascii=False), encoding="utf-8")
    target = tmp_path / "out.novel"
    with pytest.raises(DemoError, match="第 3 章"):
        build_demo(target, source=source)
    assert not target.exists()


def test_screenshot_of_the_demo_leaves_no_copy_behind(tmp_path: Path) -> None:
    """``novel-desktop --screenshot OUT --demo --view editor``: the demo's first chapter on screen, nothing kept."""
    import os
    import struct
    import subprocess
    import sys

    shot = tmp_path / "editor.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-m", "novel_desktop", "--screenshot", str(shot), "--demo", "--view", "editor",
         "--size", "1280x800"],
        env=env, capture_output=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == (1280, 800)
    assert not (paths.user_data_dir() / "demo").exists()


def test_screenshot_with_demo_renders_the_demo_novel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from novel_desktop import app

    shown: list[tuple[str, int, str]] = []

    def fake_render(out: str, *, project: Path, view: str, **_: object) -> Path:
        with NovelStore.open(project, write=False) as store:
            shown.append((store.status().title, store.status().chapters, view))
        return Path(out)

    monkeypatch.setattr(app, "render_screenshot", fake_render)
    assert app.main(["--screenshot", str(tmp_path / "x.png"), "--demo", "--view", "outline"]) == 0
    assert shown == [("剑冢守灯人", 6, "outline")]
