"""The bundled demo novel (``resources/demo/``): build a fresh ``.novel`` from it.

The demo is built the way a real novel grows, so every view has honest data to show before any API key is
set: the planning documents are stored first, then each chapter is staged with its draft, summary, state
delta, evaluation and pipeline log and committed through :meth:`NovelStore.commit_chapter` — one state
snapshot and one changelog group per chapter — and finally the author's manual edit of chapter 4 is saved,
which marks chapters 4-6 ``needs_rebuild`` (a manual edit makes every later chapter stale, as in a real
novel).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from novel_desktop import paths
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, StoreError

DEMO_DIR_NAME = "demo"
#: Chapters whose text and pipeline outputs the demo holds are found by these file names.
_CHAPTER_FILE = re.compile(r"^chapter-(\d{3,})\.md$")
_MEMORY = re.compile(r"^storylines/([^/]+)/memory\.md$")


class DemoError(StoreError):
    """The demo's source data is missing or inconsistent (a packaging mistake, not the author's)."""


def demo_source() -> Path:
    """The demo's source folder, found through :mod:`novel_desktop.paths` (works in a frozen build)."""
    return paths.resource(DEMO_DIR_NAME)


def demo_title(source: Path | None = None) -> str:
    """The demo novel's title."""
    return str(_read_json(source or demo_source(), "novel.json")["title"])


def build_demo(path: str | Path, *, source: Path | None = None) -> Path:
    """Create a NEW novel at ``path`` from the demo data and return its path.

    Raises :class:`~novel_desktop.storage.store.StoreError` when ``path`` exists (it is never overwritten)
    and :class:`DemoError` when the demo data does not commit cleanly; a half-built file is removed.
    """
    src = source or demo_source()
    if not (src / "novel.json").is_file():
        raise DemoError(f"找不到示例小说的数据：{src} (demo data not found)")
    info = _read_json(src, "novel.json")
    volume = int(info.get("volume", 1))
    target = Path(path)
    store = NovelStore.create(
        target, title=str(info["title"]), genre=str(info.get("genre", "")), platform=str(info["platform"])
    )
    try:
        _fill(store, src, volume)
    except BaseException:
        store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{target}{suffix}").unlink(missing_ok=True)
        raise
    store.close()
    return target


def demo_copy() -> Path:
    """Build a fresh demo novel under the user's data folder and return its path.

    Each call makes a new file named with the time, so a copy the author has already changed is never
    reused or overwritten.
    """
    folder = paths.user_data_dir() / DEMO_DIR_NAME
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{demo_title()}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    candidate = folder / f"{stem}.novel"
    n = 2
    while candidate.exists():
        candidate = folder / f"{stem}-{n}.novel"
        n += 1
    return build_demo(candidate)


# ---------------------------------------------------------------------- building
def _fill(store: NovelStore, src: Path, volume: int) -> None:
    memories: dict[str, str] = {}
    for file in sorted(p for p in src.rglob("*") if p.is_file()):
        rel = file.relative_to(src).as_posix()
        kind, _ = layout.classify(rel)
        if kind is not layout.Kind.DOCUMENT:
            continue  # chapters and their outputs are staged below; novel.json, drafts/ are build inputs
        memory = _MEMORY.match(rel)
        if memory:
            # A storyline memory arrives with the chapter that last advanced its line, as the pipeline does.
            memories[memory.group(1)] = file.read_text(encoding="utf-8")
            continue
        store.put_document(rel, file.read_text(encoding="utf-8"))

    chapters = sorted(
        int(m.group(1)) for p in (src / "chapters").iterdir() if (m := _CHAPTER_FILE.match(p.name))
    )
    if not chapters:
        raise DemoError("示例小说没有章节 (the demo has no chapters)")
    lines = {n: _read_json(src, layout.delta_path(n)).get("storyline_id") for n in chapters}
    last_on_line: dict[str, int] = {}
    for n in chapters:
        if lines[n]:
            last_on_line[str(lines[n])] = n

    for n in chapters:
        text = (src / layout.chapter_path(n)).read_text(encoding="utf-8")
        draft, final_kind = _draft_of(src, n, text)
        store.update_checkpoint(inflight_chapter=n, pipeline_stage="judged", orchestrator_state="WRITING")
        if draft != text:
            store.put_staging(layout.draft_path(n), draft, chapter=n, kind="draft")
        store.put_staging(layout.chapter_path(n), text, chapter=n, kind=final_kind)
        for rel in (layout.summary_path(n), layout.evaluation_path(n), layout.log_path(n)):
            store.put_staging(rel, (src / rel).read_text(encoding="utf-8"), chapter=n)
        store.put_staging(
            layout.delta_path(n), (src / layout.delta_path(n)).read_text(encoding="utf-8"), chapter=n
        )
        line = lines[n]
        if line and last_on_line.get(line) == n and line in memories:
            store.put_staging(layout.memory_path(line), memories.pop(line), chapter=n)
        result = store.commit_chapter(n, volume=volume, storyline_id=line)
        if result.dropped_ops or result.ops_skipped:
            problems = result.dropped_ops or [result.ops_skipped or ""]
            raise DemoError(f"示例第 {n} 章的状态补丁不合规：{'；'.join(problems)} (demo delta rejected)")
    for line, content in memories.items():  # a line with no written chapter yet keeps its planned memory
        store.put_document(layout.memory_path(line), content)

    edit = _read_json(src, "manual-edit.json")
    chapter = int(edit["chapter"])
    current = store.chapter_text(chapter) or ""
    if current.count(edit["find"]) != 1:
        raise DemoError(f"示例的手动修改找不到第 {chapter} 章的原文 (demo manual edit does not apply)")
    store.save_manual_edit(chapter, current.replace(edit["find"], edit["replace"]), note=str(edit["note"]))
    store.update_checkpoint(orchestrator_state="WRITING", current_volume=volume)


def _draft_of(src: Path, n: int, text: str) -> tuple[str, str]:
    """The writer's first draft of chapter ``n`` (the final text with the edits undone) and the final kind."""
    spec_file = src / "drafts" / f"chapter-{layout.num(n)}.json"
    if not spec_file.is_file():
        return text, "refined"
    spec = json.loads(spec_file.read_text(encoding="utf-8"))
    draft = text
    for rep in spec.get("replacements", []):
        if draft.count(rep["final"]) != 1:
            raise DemoError(f"示例第 {n} 章的初稿还原失败 (demo draft does not apply)")
        draft = draft.replace(rep["final"], rep["draft"])
    return draft, str(spec.get("final_kind", "refined"))


def _read_json(src: Path, rel: str) -> dict[str, Any]:
    try:
        data = json.loads((src / rel).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DemoError(f"示例数据无法读取：{rel}：{exc} (demo data unreadable)") from exc
    if not isinstance(data, dict):
        raise DemoError(f"示例数据格式不对：{rel} (demo data is not an object)")
    return data
