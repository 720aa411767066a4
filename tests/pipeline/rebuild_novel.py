"""A scripted five-chapter novel for the rebuild tests (issue 15): chapter 3 brings in an item (青铜钥匙, held by
林风) and plants a thread; chapter 5 hands the key to 苏瑶 and advances the thread. Chapters are committed
through staging and ``commit_chapter`` as the pipeline does, so each has its point in the history.

Importable without pytest: the kill -9 test's child process builds nothing, but the parent uses it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore

KEY = {"name": "青铜钥匙", "holder": "lin-feng"}

OPS: dict[int, list[dict[str, Any]]] = {
    1: [{"op": "set", "path": "characters.lin-feng.location", "value": "山门"}],
    2: [{"op": "set", "path": "characters.su-yao.location", "value": "山门"}],
    3: [
        {"op": "set", "path": "items.bronze-key", "value": KEY},
        {"op": "add", "path": "characters.lin-feng.inventory", "value": "青铜钥匙"},
        {"op": "foreshadow", "path": "ancient-door", "value": "planted", "detail": "石门上的锁孔"},
    ],
    4: [{"op": "set", "path": "characters.lin-feng.location", "value": "后山"}],
    5: [
        {"op": "remove", "path": "characters.lin-feng.inventory", "value": "青铜钥匙"},
        {"op": "set", "path": "items.bronze-key.holder", "value": "su-yao"},
        {"op": "foreshadow", "path": "ancient-door", "value": "advanced", "detail": "钥匙能开石门"},
    ],
}

SUMMARIES = {
    1: "林风来到山门拜师。",
    2: "苏瑶也到了山门。",
    3: "林风在藏经阁捡到一把青铜钥匙，石门上有个锁孔。",
    4: "林风去后山砍柴。",
    5: "林风把青铜钥匙交给苏瑶，两人试着打开石门。",
}

#: Chapter 3 after the author's edit: no key, no locked door.
EDITED_3 = "# 第3章 藏经阁\n\n　　林风在藏经阁里抄了一天经书，什么也没捡到。\n"

OLD_MEMORY = "主线记忆：写到第2章为止。"
TODAY_MEMORY = "主线记忆：今天改过的版本。"


def text(n: int) -> str:
    return f"# 第{n}章\n\n　　{SUMMARIES[n]}\n\n　　第{n}章正文。\n"


def summarizer_reply(chapter: int, ops: list[dict[str, Any]], summary: str, memory: str) -> str:
    """The Summarizer's JSON for a rebuilt chapter."""
    return json.dumps(
        {
            "chapter": chapter,
            "storyline_id": "main_arc",
            "summary": summary,
            "patch": {"chapter": chapter, "base_state_version": 0, "storyline_id": "main_arc", "ops": ops},
            "foreshadowing": [],
            "storyline_memory": memory,
            "cross_references": [],
            "leak_risk": "low",
        },
        ensure_ascii=False,
    )


EDITED_3_REPLY = summarizer_reply(
    3,
    [{"op": "set", "path": "characters.lin-feng.location", "value": "藏经阁"}],
    "林风在藏经阁抄了一天经书。",
    "主线记忆：第3章林风抄经。",
)


def commit(store: NovelStore, n: int) -> None:
    version = store.state_version()
    store.put_staging(layout.chapter_path(n), text(n), kind="refined")
    store.put_staging(layout.summary_path(n), SUMMARIES[n])
    delta = {"chapter": n, "base_state_version": version, "storyline_id": "main_arc", "ops": OPS[n]}
    store.put_staging(layout.delta_path(n), json.dumps(delta, ensure_ascii=False))
    store.put_staging(layout.memory_path("main_arc"), f"主线记忆：写到第{n}章为止。", chapter=n)
    store.commit_chapter(n, storyline_id="main_arc")


def make_novel(path: Path, chapters: int = 5) -> Path:
    """The novel with ``chapters`` committed chapters, then today's memory written after the last one."""
    documents = {
        "characters/active/lin-feng.json": json.dumps({"id": "lin-feng", "name": "林风"}, ensure_ascii=False),
        "characters/active/su-yao.json": json.dumps({"id": "su-yao", "name": "苏瑶"}, ensure_ascii=False),
        "storylines/storylines.json": json.dumps(
            {"storylines": [{"id": "main_arc", "name": "主线", "type": "main_arc", "status": "active"}]},
            ensure_ascii=False,
        ),
        f"{layout.volume_dir(1)}/outline.md": "# 第一卷\n\n## 第1章 拜师\n\n## 第3章 藏经阁\n",
        layout.memory_path("main_arc"): "主线记忆：开篇。",
    }
    with NovelStore.create(path, title="钥匙", genre="玄幻", documents=documents) as store:
        for n in range(1, chapters + 1):
            commit(store, n)
        store.put_document(layout.memory_path("main_arc"), TODAY_MEMORY)
    return path


def edit_chapter_3(path: Path) -> None:
    with NovelStore.open(path, write=True) as store:
        store.save_manual_edit(3, EDITED_3)
