"""The staged context record is the durable copy: a recorder that keeps its last write in memory still sees
what a crashed run or another recorder staged, and what it stages reads the same from the novel."""

from __future__ import annotations

import json
from pathlib import Path

from novel_desktop.agents.context_recorder import StagedContextRecorder
from novel_desktop.domain.context_record import ContextEntry, ContextSection, entries_from_json
from novel_desktop.pipeline.context_records import staged_context
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore


def _entry(agent: str, panel: str = "", tokens: int = 10, round_: int = 0) -> ContextEntry:
    section = ContextSection("template", "模板", tokens, "为什么")
    return ContextEntry(agent, round_, agent, agent, "m", (section,), tokens, panel=panel)


def _titles(entries: list[ContextEntry]) -> list[str]:
    return [f"{e.agent}{e.panel}:{e.total_tokens}" for e in entries]


def test_a_fresh_recorder_after_a_crash_keeps_what_was_staged_before(
    novel_path: Path, store: NovelStore
) -> None:
    before = StagedContextRecorder(store)
    before.record(5, _entry("writer"))
    before.record(5, _entry("refiner"))
    store.close()  # the process dies; the novel is opened again by the resumed run

    with NovelStore.open(novel_path) as again:
        after = StagedContextRecorder(again)
        assert _titles(after.entries(5)) == ["writer:10", "refiner:10"]
        after.record(5, _entry("judge", "A"))
        assert _titles(after.entries(5)) == ["writer:10", "refiner:10", "judgeA:10"]
        assert _titles(entries_from_json(staged_context(again, 5))) == _titles(after.entries(5))


def test_a_recorder_sees_what_another_recorder_staged_since_its_own_write(store: NovelStore) -> None:
    ours, theirs = StagedContextRecorder(store), StagedContextRecorder(store)
    ours.record(7, _entry("writer"))
    theirs.record(7, _entry("writer", tokens=42))  # an adopted early draft's record, staged by the pipeline
    assert _titles(ours.entries(7)) == ["writer:42"]
    ours.record(7, _entry("summarizer", "S"))
    assert _titles(theirs.entries(7)) == ["writer:42", "summarizerS:10"]
    # Changed by hand in the novel (any other writer): read from the novel, not from memory.
    raw = json.loads(store.staging(layout.context_path(7)) or "[]")
    raw[0]["total_tokens"] = 5
    store.put_staging(layout.context_path(7), json.dumps(raw, ensure_ascii=False), chapter=7)
    assert _titles(ours.entries(7)) == ["writer:5", "summarizerS:10"]


def test_entries_read_from_memory_equal_the_staged_record(store: NovelStore) -> None:
    recorder = StagedContextRecorder(store)
    for entry in (
        _entry("writer"),
        _entry("judge", "B"),
        _entry("judge", "A"),
        _entry("judge", "B", tokens=9),
    ):
        recorder.record(3, entry)
    assert recorder.entries(3) == entries_from_json(staged_context(store, 3))
    assert _titles(recorder.entries(3)) == ["writer:10", "judgeA:10", "judgeB:9"]
    assert recorder.entries(4) == []  # another chapter: nothing staged
    store.delete_staging(layout.context_path(3))  # the commit took the staging away
    assert recorder.entries(3) == []
