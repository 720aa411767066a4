"""The staged context record is the durable copy: a recorder that keeps its last write in memory still sees
what a crashed run or another recorder staged, and what it stages reads the same from the novel."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from novel_desktop.agents.chapter import _settled
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


def test_a_judges_records_are_written_before_its_result_counts_whatever_the_call_did() -> None:
    # The judges' prompts are recorded while they are sent (agents/chapter.py _note): the stage's result,
    # or its failure, comes only once every record is in, so none lands after the stage has ended.
    written: list[str] = []
    release = threading.Event()

    def record(name: str) -> None:
        release.wait(5)
        written.append(name)

    async def call(fail: bool) -> str:
        await asyncio.sleep(0)
        release.set()
        if fail:
            raise RuntimeError("the call failed")
        return "verdict"

    async def run(fail: bool) -> str:
        notes = [asyncio.ensure_future(asyncio.to_thread(record, n)) for n in ("A", "B")]
        return await _settled(notes, call(fail))

    assert asyncio.run(run(False)) == "verdict" and sorted(written) == ["A", "B"]
    written.clear()
    release.clear()
    with pytest.raises(RuntimeError, match="the call failed"):
        asyncio.run(run(True))
    assert sorted(written) == ["A", "B"]

    def broken() -> None:
        raise OSError("disk full")

    async def failed_record() -> str:
        return await _settled([asyncio.ensure_future(asyncio.to_thread(broken))], call(False))

    with pytest.raises(OSError, match="disk full"):  # a record that failed fails the stage, as before
        asyncio.run(failed_record())
