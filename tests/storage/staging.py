"""Stage a chapter's pipeline outputs the way the pipeline does, for the storage tests."""

from __future__ import annotations

import json

from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore


def stage_chapter(
    store: NovelStore, n: int, text: str, *, delta: dict | None = None, score: float = 3.8
) -> None:
    store.put_staging(layout.draft_path(n), text + "（初稿）", kind="draft")
    store.put_staging(layout.chapter_path(n), text, kind="refined")
    store.put_staging(layout.summary_path(n), f"第{n}章摘要")
    if delta is not None:
        store.put_staging(layout.delta_path(n), json.dumps(delta, ensure_ascii=False))
    store.put_staging(
        layout.evaluation_path(n), json.dumps({"chapter": n, "overall": score, "recommendation": "pass"})
    )
    store.put_staging(layout.log_path(n), json.dumps({"chapter": n, "total_cost_usd": 0.5}))
