"""Writing a split manuscript into a new novel: chapters, volumes, kept-aside parts, checkpoint, atomicity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.analysis.manuscript import read_manuscript, split_manuscript
from novel_desktop.storage.manuscript_import import (
    FRONT_MATTER_FILE,
    REPORT_FILE,
    TRAILING_FILE,
    import_manuscript,
    volume_intro_file,
)
from novel_desktop.storage.store import NovelStore, StoreError
from novel_desktop.storage.tables import ChapterRevisionRow
from tests.conftest import CORPUS, FIXTURES

WEB_NOVEL = FIXTURES / "manuscripts" / "web_novel.txt"


def test_import_writes_chapters_volumes_and_kept_aside_parts(novel_path: Path) -> None:
    split = split_manuscript(WEB_NOVEL.read_text(encoding="utf-8"))
    summary = import_manuscript(
        split, novel_path, title="青云志异", genre="仙侠", source_name="web_novel.txt"
    )

    assert (summary.chapters, summary.last_chapter, summary.current_volume) == (6, 5, 2)
    with NovelStore.open(novel_path, write=False) as store:
        chapters = store.list_chapters()
        assert [(c.number, c.volume, c.title) for c in chapters] == [
            (0, 1, "楔子"),
            (1, 1, "第1章 山村少年"),
            (2, 1, "第2章 仙门试炼"),
            (3, 2, "第3章 下山"),
            (4, 2, "第4章 重逢"),
            (5, 2, "番外一 师父的往事"),
        ]
        assert store.chapter_text(1) == (
            "# 第1章 山村少年\n\n　　林风是山村里的少年，每天上山砍柴。\n\n"
            "　　这一天，他在山里捡到了一块会发光的石头。\n"
        )
        assert [r.kind for r in store.revisions(1)] == ["imported"]
        assert store.document_json("volumes/vol-01/volume.json") == {"volume": 1, "title": "初入仙门"}
        assert store.document_json("volumes/vol-02/volume.json") == {"volume": 2, "title": "风起云涌"}

        front = (store.extra_file(FRONT_MATTER_FILE) or b"").decode("utf-8")
        assert front.startswith("《青云志异》\n作者：某某")
        trailing = (store.extra_file(TRAILING_FILE) or b"").decode("utf-8")
        assert trailing.startswith("完本感言")
        intro = (store.extra_file(volume_intro_file(1)) or b"").decode("utf-8")
        assert intro == "　　本卷讲林风拜入青云门的经过。\n"
        report = json.loads(store.extra_file(REPORT_FILE) or b"{}")
        assert report["source"] == "web_novel.txt"
        assert any("合并为一章" in w for w in report["warnings"])
        assert {(n["kind"], n["chapter"]) for n in report["notes"]} >= {("merged_heading", 4)}
        # The repeated heading is the chapter's heading, once: its copy is not in the text.
        assert (store.chapter_text(4) or "").count("第4章") == 1

        checkpoint = store.checkpoint()
        assert checkpoint["last_completed_chapter"] == 5
        assert checkpoint["current_volume"] == 2
        assert checkpoint["orchestrator_state"] == "VOL_PLANNING"
        assert store.meta()["title"] == "青云志异"
        assert store.meta()["genre"] == "仙侠"


def test_corpus_import_status_matches_the_split(novel_path: Path) -> None:
    manuscript = read_manuscript(CORPUS / "ershinian_pg24099_ch01-10.txt")
    split = split_manuscript(manuscript.text)
    summary = import_manuscript(split, novel_path, title="二十年目睹之怪現狀")

    with NovelStore.open(novel_path, write=False) as store:
        status = store.status()
    assert status.chapters == 10
    assert status.last_completed_chapter == 10
    assert status.total_chars == sum(c.chars for c in split.chapters) == summary.total_chars
    assert status.orchestrator_state == "VOL_PLANNING"


def test_an_existing_file_is_never_overwritten(novel_path: Path) -> None:
    novel_path.write_bytes(b"keep me")
    split = split_manuscript("第1章 a\n　　正文。\n")
    with pytest.raises(StoreError, match="已存在"):
        import_manuscript(split, novel_path, title="书")
    assert novel_path.read_bytes() == b"keep me"


def test_a_split_without_chapters_is_refused_and_writes_nothing(novel_path: Path) -> None:
    with pytest.raises(StoreError, match="没有可导入的章节"):
        import_manuscript(split_manuscript("只有一段文字。"), novel_path, title="书")
    assert not novel_path.exists()


def test_a_failure_while_writing_leaves_no_file(novel_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    split = split_manuscript("第1章 a\n　　正文。\n第2章 b\n　　正文。\n")
    original_init = ChapterRevisionRow.__init__
    calls = {"n": 0}

    def failing_init(self: ChapterRevisionRow, **kwargs: object) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        original_init(self, **kwargs)

    monkeypatch.setattr(ChapterRevisionRow, "__init__", failing_init)
    from novel_desktop.storage.store import DiskFullError

    with pytest.raises(DiskFullError, match="磁盘已满"):
        import_manuscript(split, novel_path, title="书")
    assert not novel_path.exists()
    assert not Path(f"{novel_path}-wal").exists()
    assert list(novel_path.parent.iterdir()) == []  # no temporary file left either
