"""``novel init``, ``status``, ``unlock`` and ``state apply/show`` as an author runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore

PATCH = {
    "chapter": 1,
    "base_state_version": 0,
    "storyline_id": "main_arc",
    "ops": [
        {"op": "set", "path": "characters.lin-feng.location", "value": "青云山"},
        {"op": "add", "path": "characters.lin-feng.inventory", "value": "铁剑"},
        {"op": "set", "path": "characters.林风.mood", "value": "紧张"},
        {"op": "teleport", "path": "characters.lin-feng.location", "value": "x"},
        {"op": "foreshadow", "path": "ancient_prophecy", "value": "planted", "detail": "石碑上的字"},
    ],
}


@pytest.fixture
def novel(tmp_path: Path) -> Path:
    path = tmp_path / "我的小说.novel"
    assert main(["init", str(path), "--title", "剑来", "--genre", "玄幻", "--platform", "qidian"]) == 0
    return path


def _write(tmp_path: Path, name: str, data: object) -> Path:
    p = tmp_path / name
    p.write_text(
        json.dumps(data, ensure_ascii=False) if not isinstance(data, str) else data, encoding="utf-8"
    )
    return p


def test_init_refuses_to_overwrite(novel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["init", str(novel), "--title", "别的书"]) == 2
    err = capsys.readouterr().err
    assert "已存在" in err
    assert "Traceback" not in err


def test_status_json_has_the_contract_keys(novel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with NovelStore.open(novel) as store:
        store.put_staging(layout.chapter_path(1), "# 第1章 入山\n\n　　林风走进山门。", kind="refined")
        store.put_staging(layout.evaluation_path(1), json.dumps({"overall": 4.2, "recommendation": "pass"}))
        store.commit_chapter(1)
    capsys.readouterr()
    assert main(["status", str(novel), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == {
        "current_volume": 1,
        "last_completed_chapter": 1,
        "orchestrator_state": "INIT",
        "pipeline_stage": "committed",
        "inflight_chapter": None,
        "chapters": 1,
        "total_chars": 12,  # 第 1 章 入 山 + 林风走进山门。
        "mean_score": 4.2,
        "open_foreshadowing": 0,
        "state_version": 0,
        "stale_chapters": [],
        "cost": {
            "total_usd": 0.0,
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "calls": 0,
        },
    }
    assert main(["status", str(novel)]) == 0
    out = capsys.readouterr().out
    assert "《剑来》" in out
    assert "总字数 characters: 12" in out
    assert "总花费 cost: $0.0000" in out


def test_status_of_a_missing_file_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status", str(tmp_path / "无.novel")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "找不到" in err


def test_second_writer_is_refused_and_a_stale_lock_can_be_cleared(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = _write(tmp_path, "p.json", PATCH)
    holder = NovelStore.open(novel, write=True)
    capsys.readouterr()
    assert main(["state", "apply", str(novel), "--patch", str(patch)]) == 3
    err = capsys.readouterr().err
    assert "pid" in err
    assert "主机" in err
    # A writer that dies without closing leaves its lock; its pid is gone on this host, so the next
    # writer takes the lock over without `novel unlock` (issue 17 item 5).
    code = (
        "import sys, os\n"
        "from novel_desktop.storage.store import NovelStore\n"
        "holder = NovelStore.open(sys.argv[1], write=True)\n"
        "os._exit(0)\n"
    )
    holder.close()
    subprocess.run([sys.executable, "-c", code, str(novel)], check=True)
    assert main(["state", "apply", str(novel), "--patch", str(patch)]) == 0
    # A lock from another host without a heartbeat for over ten minutes is stale; `novel unlock` clears it.
    from datetime import UTC, datetime, timedelta

    from sqlmodel import Session

    from novel_desktop.storage.engine import make_engine, writer
    from novel_desktop.storage.tables import LockRow

    engine = make_engine(novel)
    with Session(writer(engine)) as s, s.begin():
        started = (datetime.now(UTC) - timedelta(minutes=11)).isoformat(timespec="seconds")
        s.add(LockRow(id=1, token="remote", pid=4242, host="another-laptop", started=started))
    engine.dispose()
    capsys.readouterr()
    assert main(["state", "apply", str(novel), "--patch", str(patch)]) == 3
    assert "another-laptop" in capsys.readouterr().err
    assert main(["unlock", str(novel)]) == 0
    assert "已清除" in capsys.readouterr().out
    with NovelStore.open(novel, write=True) as again:
        assert again.writable


def test_state_apply_reports_applied_and_dropped_ops(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = _write(tmp_path, "p.json", PATCH)
    capsys.readouterr()
    assert main(["state", "apply", str(novel), "--patch", str(patch)]) == 0
    captured = capsys.readouterr()
    assert "state_version → 1" in captured.out
    assert "set characters.lin-feng.location" in captured.out
    assert "林风" in captured.err  # the dropped op names the offending segment
    assert "teleport" in captured.err
    assert main(["state", "show", str(novel)]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["characters"]["lin-feng"] == {"location": "青云山", "inventory": ["铁剑"]}
    assert state["active_foreshadowing"] == ["ancient_prophecy"]
    assert main(["state", "show", str(novel), "--version", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["characters"] == {}
    assert main(["state", "show", str(novel), "--version", "7"]) == 1
    assert "0, 1" in capsys.readouterr().err


def test_state_apply_json_output(novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    patch = _write(tmp_path, "p.json", PATCH)
    capsys.readouterr()
    assert main(["state", "apply", str(novel), "--patch", str(patch), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["applied"] is True
    assert data["state_version"] == 1
    assert len(data["applied_ops"]) == 3
    assert [d["index"] for d in data["dropped_ops"]] == [2, 3]


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{不是 JSON", "JSON"),
        (json.dumps({**PATCH, "base_state_version": 5}), "base_state_version"),
        (json.dumps([1, 2]), "patch"),
    ],
)
def test_state_apply_rejects_unusable_patches_with_exit_1(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, needle: str
) -> None:
    patch = _write(tmp_path, "bad.json", content)
    capsys.readouterr()
    assert main(["state", "apply", str(novel), "--patch", str(patch)]) == 1
    err = capsys.readouterr().err
    assert needle in err
    assert "Traceback" not in err
    with NovelStore.open(novel, write=False) as store:
        assert store.state_version() == 0


def test_state_apply_unreadable_patch_exits_2(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["state", "apply", str(novel), "--patch", str(tmp_path / "none.json")]) == 2
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert main(["state", "apply", str(novel), "--patch", str(binary)]) == 2
    assert "UTF-8" in capsys.readouterr().err


def test_every_command_has_bilingual_help() -> None:
    for argv in (
        ["init"],
        ["status"],
        ["export-folder"],
        ["import-folder"],
        ["state", "apply"],
        ["state", "show"],
        ["unlock"],
        ["ask", "validate"],
    ):
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from novel_desktop.cli import main; sys.exit(main())",
                *argv,
                "--help",
            ],
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, argv
        assert any("\u4e00" <= ch <= "\u9fff" for ch in out.stdout), argv
        assert any(ch.isascii() and ch.isalpha() for ch in out.stdout), argv


def test_an_unexpected_error_is_one_line_and_a_log(
    novel: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(self: NovelStore) -> object:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(NovelStore, "status", boom)
    assert main(["status", str(novel)]) == 70
    err = capsys.readouterr().err
    assert "disk on fire" in err
    assert "Traceback" not in err
    log = Path(err.split("details in ")[1].rstrip("）\n"))
    assert "Traceback" in log.read_text(encoding="utf-8")


def test_progress_lines_name_the_stage_never_its_id(capsys: pytest.CaptureFixture[str]) -> None:
    """A resumed chapter and each stage on stderr read in words (评审完成, 复核), not as stage ids."""
    from novel_desktop.cli.writing import _Printer
    from novel_desktop.pipeline.events import ChapterStarted, Stage, StageStarted

    printer = _Printer(stream=False)
    printer(ChapterStarted(7, "judged"))
    printer(StageStarted(7, Stage.JUDGE_SECONDARY))
    err = capsys.readouterr().err
    assert err == "第7章 开始（从“评审完成”处恢复）\n  · 复核\n"
    assert "judge" not in err
