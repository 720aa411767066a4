"""Seed project folder (004 §9.1) import and export: lossless, extra files kept and reported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.folder import export_folder, import_folder
from novel_desktop.storage.store import NovelStore, StoreError
from tests.conftest import FIXTURES

SEED_PROJECT = FIXTURES / "seed_project"
#: git keeps no empty folder, so the fixture marks the seed's empty ones with .gitkeep: to us, extra files.
GITKEEPS = sorted(p.relative_to(SEED_PROJECT).as_posix() for p in SEED_PROJECT.rglob(".gitkeep"))


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _roundtrip(folder: Path, tmp_path: Path) -> tuple[dict[str, bytes], object]:
    novel = tmp_path / "imported.novel"
    report = import_folder(folder, novel)
    out = tmp_path / "exported"
    with NovelStore.open(novel, write=False) as store:
        export_folder(store, out)
    return _tree(out), report


def test_the_seed_project_round_trips_byte_for_byte(tmp_path: Path) -> None:
    original = _tree(SEED_PROJECT)
    assert ".checkpoint.json" in original
    assert "state/changelog.jsonl" in original
    assert any(p.startswith("staging/novel-ask/") for p in original)
    exported, report = _roundtrip(SEED_PROJECT, tmp_path)
    assert report.warnings == []
    assert report.extra_files == GITKEEPS
    assert sorted(exported) == sorted(original)
    differing = [p for p in original if exported[p] != original[p]]
    assert differing == []


def test_import_reads_the_novel_the_folder_describes(tmp_path: Path) -> None:
    novel = tmp_path / "n.novel"
    report = import_folder(SEED_PROJECT, novel)
    checkpoint = json.loads((SEED_PROJECT / ".checkpoint.json").read_text(encoding="utf-8"))
    state = json.loads((SEED_PROJECT / "state/current-state.json").read_text(encoding="utf-8"))
    chapters = sorted((SEED_PROJECT / "chapters").glob("chapter-*.md"))
    assert report.chapters == len(chapters)
    with NovelStore.open(novel, write=False) as store:
        status = store.status()
        assert status.chapters == len(chapters)
        assert status.last_completed_chapter == checkpoint["last_completed_chapter"]
        assert status.state_version == state["state_version"]
        assert status.total_chars > 300 * len(chapters)
        assert store.chapter_text(1) == chapters[0].read_text(encoding="utf-8")
        assert [r.kind for r in store.revisions(1)] == ["imported"]
        assert store.current_state() == state
        assert len(store.changelog()) == len(
            (SEED_PROJECT / "state/changelog.jsonl").read_text(encoding="utf-8").splitlines()
        )
        assert store.list_answers()
        assert store.meta()["title"]


def test_unknown_files_are_kept_and_reported(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    shutil.copytree(SEED_PROJECT, folder)
    (folder / "notes").mkdir()
    (folder / "notes" / "灵感.txt").write_text("主角的剑其实是钥匙", encoding="utf-8")
    (folder / "cover.png").write_bytes(bytes(range(256)))
    (folder / "world" / "geography.md").write_bytes("东胜神洲".encode("gbk"))  # a known name, but not UTF-8
    (folder / ".novel.lock").mkdir()
    (folder / ".novel.lock" / "info.json").write_text('{"pid": 1}', encoding="utf-8")

    exported, report = _roundtrip(folder, tmp_path)

    assert report.extra_files == sorted(["cover.png", "notes/灵感.txt", "world/geography.md", *GITKEEPS])
    assert report.skipped == [".novel.lock/"]
    assert any("world/geography.md" in w and "UTF-8" in w for w in report.warnings)
    assert exported["cover.png"] == bytes(range(256))
    assert exported["notes/灵感.txt"] == "主角的剑其实是钥匙".encode()
    assert exported["world/geography.md"] == "东胜神洲".encode("gbk")
    assert not any(p.startswith(".novel.lock") for p in exported)


def test_a_file_that_breaks_its_format_is_kept_with_a_warning(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    shutil.copytree(SEED_PROJECT, folder)
    eval_path = next((folder / "evaluations").glob("*.json"))
    data = json.loads(eval_path.read_text(encoding="utf-8"))
    data["recommendation"] = "publish-now"
    eval_path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    (folder / "world" / "rules.json").write_text("{not json", encoding="utf-8")

    exported, report = _roundtrip(folder, tmp_path)

    rel = eval_path.relative_to(folder).as_posix()
    assert any(w.startswith(rel) and "recommendation" in w for w in report.warnings)
    assert any(w.startswith("world/rules.json") and "JSON" in w for w in report.warnings)
    assert exported[rel] == eval_path.read_bytes()
    assert exported["world/rules.json"] == b"{not json"


def test_export_never_overwrites_and_import_never_clobbers(
    tmp_path: Path, store: NovelStore, novel_path: Path
) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("作者的文件", encoding="utf-8")
    with pytest.raises(StoreError, match="不是空的"):
        export_folder(store, busy)
    assert _tree(busy) == {"keep.txt": "作者的文件".encode()}
    with pytest.raises(StoreError, match="已存在"):
        import_folder(SEED_PROJECT, novel_path)
    with pytest.raises(StoreError, match="找不到"):
        import_folder(tmp_path / "nowhere", tmp_path / "x.novel")
    assert not (tmp_path / "x.novel").exists()


def test_cli_import_then_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    novel = tmp_path / "导入.novel"
    out = tmp_path / "out"
    assert main(["import-folder", str(SEED_PROJECT), str(novel), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["chapters"] >= 2
    assert report["extra_files"] == GITKEEPS
    assert main(["export-folder", str(novel), str(out)]) == 0
    assert "已导出" in capsys.readouterr().out
    assert _tree(out) == _tree(SEED_PROJECT)
    assert main(["export-folder", str(novel), str(out)]) == 2
    assert "不是空的" in capsys.readouterr().err


def _dirs(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir())


def test_cli_round_trip_is_diff_r_clean_empty_folders_included(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `diff -r` also reports a folder that exists on one side only: the author's empty folders come back,
    # and no skeleton folder the original lacked (staging/chapters …) appears.
    folder = tmp_path / "project"
    shutil.copytree(SEED_PROJECT, folder)
    (folder / "大纲草稿" / "第二卷").mkdir(parents=True)
    novel = tmp_path / "n.novel"
    out = tmp_path / "out"
    assert main(["import-folder", str(folder), str(novel)]) == 0
    assert main(["export-folder", str(novel), str(out)]) == 0
    capsys.readouterr()
    assert _dirs(out) == _dirs(folder)
    assert _tree(out) == _tree(folder)


def test_a_novel_not_from_a_folder_exports_the_seed_skeleton(tmp_path: Path, store: NovelStore) -> None:
    out = tmp_path / "out"
    export_folder(store, out)
    for rel in ("staging/chapters", "staging/state", "staging/evaluations", "characters/retired", "logs"):
        assert (out / rel).is_dir(), rel


def test_skeleton_adds_the_executors_folders_to_an_imported_novel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    novel = tmp_path / "n.novel"
    out = tmp_path / "out"
    assert main(["import-folder", str(SEED_PROJECT), str(novel)]) == 0
    assert main(["export-folder", str(novel), str(out), "--skeleton"]) == 0
    capsys.readouterr()
    assert (out / "staging" / "chapters").is_dir() and (out / "staging" / "evaluations").is_dir()
    assert set(_dirs(SEED_PROJECT)) < set(_dirs(out))
    assert _tree(out) == _tree(SEED_PROJECT)
