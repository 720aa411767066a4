"""Chapters: revisions, the author's edits, and the whole-novel reads the views use."""

from __future__ import annotations

import json

import pytest

from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, StoreError
from tests.storage.staging import stage_chapter


def test_manual_edit_keeps_every_revision_and_marks_later_chapters(store: NovelStore) -> None:
    for n in range(1, 4):
        stage_chapter(store, n, f"# 第{n}章\n正文{n}")
        store.commit_chapter(n)
    assert store.save_manual_edit(2, "# 第2章\n正文2") == []  # unchanged text writes nothing
    assert store.save_manual_edit(2, "# 第2章 改\n作者改过的正文") == [2, 3]
    assert store.chapter_text(2) == "# 第2章 改\n作者改过的正文"
    kinds = [r.kind for r in store.revisions(2)]
    assert kinds == ["draft", "refined", "manual"]
    first = store.revisions(2)[1]
    assert store.revision_text(first.id) == "# 第2章\n正文2"
    statuses = {c.number: c.status for c in store.list_chapters()}
    assert statuses == {1: "committed", 2: "needs_rebuild", 3: "needs_rebuild"}
    assert store.status().stale_chapters == [2, 3]
    with pytest.raises(StoreError):
        store.save_manual_edit(9, "无")


def test_scores_and_texts_of_every_chapter_come_in_one_read(store: NovelStore) -> None:
    stage_chapter(store, 1, "# 第1章\n正文一", score=4.2)
    store.commit_chapter(1)
    stage_chapter(store, 2, "# 第2章\n正文二")
    store.put_staging(layout.evaluation_path(2), json.dumps({"chapter": 2, "recommendation": "pass"}))
    store.commit_chapter(2)
    assert store.chapter_scores() == {1: 4.2}  # chapter 2 has no overall score
    store.save_manual_edit(2, "# 第2章\n改过")
    assert store.chapter_texts() == {1: "# 第1章\n正文一", 2: "# 第2章\n改过"}
