"""`novel ask validate`: exit codes 0/1/2, one problem per stderr line, --json, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "novel_ask"
SEED_QUESTIONS = str(FIXTURES / "question_spec.json")
SEED_ANSWERS = str(FIXTURES / "answer_spec.json")
ALL_KINDS_QUESTIONS = str(FIXTURES / "question_spec_all_kinds.json")
ALL_KINDS_ANSWERS = str(FIXTURES / "answer_spec_all_kinds.json")
SEED_ANSWER_PATH = "staging/novel-ask/chapter-048-draft.answers.json"


def write_json(path: Path, data: Any) -> str:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["ask", "validate", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.fixture(autouse=True)
def project_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """--answer-path is checked against the current directory; make that a fresh project."""
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


def test_valid_question_spec_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--questions", SEED_QUESTIONS)
    assert code == 0
    assert "valid" in out
    assert err == ""


def test_seed_gate_is_valid(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys, "--questions", SEED_QUESTIONS, "--answers", SEED_ANSWERS, "--answer-path", SEED_ANSWER_PATH
    )
    assert (code, err) == (0, "")


def test_valid_with_json_prints_valid_true(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--questions", ALL_KINDS_QUESTIONS, "--answers", ALL_KINDS_ANSWERS, "--json")
    assert code == 0
    assert json.loads(out) == {"valid": True, "errors": []}
    assert err == ""


def test_invalid_question_spec_prints_one_line_per_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = json.loads(Path(ALL_KINDS_QUESTIONS).read_text(encoding="utf-8"))
    spec["questions"][1]["id"] = "platform"
    spec["questions"][3]["kind"] = "essay"
    code, out, err = run(capsys, "--questions", write_json(tmp_path / "q.json", spec))
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 2
    assert lines[0] == 'questions[1].id: 重复的 id "platform"'
    assert lines[1].startswith("questions[3].kind: ")


def test_answers_are_not_judged_against_an_invalid_spec(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(
        capsys, "--questions", write_json(tmp_path / "q.json", {"version": 1}), "--answers", ALL_KINDS_ANSWERS
    )
    assert code == 1
    assert [line.split(":")[0] for line in err.splitlines()] == ["topic", "questions"]


def test_invalid_answers_exit_1_with_each_problem(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    answer = json.loads(Path(ALL_KINDS_ANSWERS).read_text(encoding="utf-8"))
    answer["answers"]["genres"] = []
    answer["answers"]["unknown_key"] = "x"
    answer["answered_at"] = "2026/02/27"
    answers_file = write_json(tmp_path / "a.json", answer)
    code, out, err = run(capsys, "--questions", ALL_KINDS_QUESTIONS, "--answers", answers_file)
    assert code == 1
    assert out == ""
    assert [line.split(":")[0] for line in err.splitlines()] == [
        "answers.genres",
        "answers.unknown_key",
        "answered_at",
    ]


def test_invalid_answers_with_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    answer = json.loads(Path(SEED_ANSWERS).read_text(encoding="utf-8"))
    answer["answers"]["platform"] = "fanqie"
    answers_file = write_json(tmp_path / "a.json", answer)
    code, out, err = run(capsys, "--questions", SEED_QUESTIONS, "--answers", answers_file, "--json")
    assert code == 1
    result = json.loads(out)
    assert result["valid"] is False
    assert len(result["errors"]) == 1
    assert result["errors"][0].startswith("answers.platform: ")
    assert "fanqie" in result["errors"][0]
    assert err == ""


@pytest.mark.parametrize("path", ["../escape.json", "/etc/a.json", "C:\\a.json", "", "staging/.."])
def test_bad_answer_path_exits_1(capsys: pytest.CaptureFixture[str], path: str) -> None:
    code, _, err = run(capsys, "--questions", SEED_QUESTIONS, "--answer-path", path)
    assert code == 1
    assert err.splitlines()[0].startswith("answer_path: ")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_answer_path_symlink_out_of_the_project_exits_1(
    capsys: pytest.CaptureFixture[str], project_cwd: Path, tmp_path: Path
) -> None:
    (tmp_path / "elsewhere").mkdir()
    (project_cwd / "staging").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    code, out, _ = run(capsys, "--questions", SEED_QUESTIONS, "--answer-path", "staging/a.json", "--json")
    assert code == 1
    assert [e.split(":")[0] for e in json.loads(out)["errors"]] == ["answer_path"]


def test_answer_path_problems_add_to_answer_problems(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    answers_file = write_json(tmp_path / "a.json", {"version": 1})
    code, out, _ = run(
        capsys,
        "--questions",
        SEED_QUESTIONS,
        "--answers",
        answers_file,
        "--answer-path",
        "../x.json",
        "--json",
    )
    assert code == 1
    assert [e.split(":")[0] for e in json.loads(out)["errors"]] == [
        "topic",
        "answers",
        "answered_at",
        "answered_by",
        "answer_path",
    ]


@pytest.mark.parametrize("which", ["questions", "answers"])
@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "file not found"),
        (b"\xff\xfe\x00\xd8not utf-8", "cannot read"),
        (b'{"version": 1,', "not valid JSON"),
        (b"", "not valid JSON"),
    ],
)
def test_unreadable_input_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, which: str, content: bytes | None, words: str
) -> None:
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_bytes(content)
    args = (
        ["--questions", str(bad)]
        if which == "questions"
        else ["--questions", SEED_QUESTIONS, "--answers", str(bad)]
    )
    code, out, err = run(capsys, *args, "--json")
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert words in err
    assert "bad.json" in err


def test_unreadable_answers_win_over_an_invalid_spec(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(
        capsys,
        "--questions",
        write_json(tmp_path / "q.json", []),
        "--answers",
        str(tmp_path / "missing.json"),
    )
    assert code == 2
    assert "missing.json" in err


def test_utf8_bom_is_accepted(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bom_file = tmp_path / "q.json"
    bom_file.write_bytes(b"\xef\xbb\xbf" + Path(SEED_QUESTIONS).read_bytes())
    assert run(capsys, "--questions", str(bom_file))[0] == 0


def test_questions_option_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["ask", "validate"])
    assert info.value.code == 2
    assert "--questions" in capsys.readouterr().err


def test_help_is_bilingual_with_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["ask", "validate", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "问题规格 JSON 文件 / QuestionSpec JSON file" in out
    assert "示例 / example" in out
    assert "novel ask validate --questions" in out


def test_ask_alone_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask"]) == 2
    assert "validate" in capsys.readouterr().out


def _novel(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import sys; from novel_desktop.cli import main; sys.exit(main())", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=60,
        check=False,
    )


def test_as_a_process(project_cwd: Path, tmp_path: Path) -> None:
    answer = json.loads(Path(SEED_ANSWERS).read_text(encoding="utf-8"))
    answer["answers"]["platform"] = "fanqie"
    answer["answered_by"] = ""
    answers_file = write_json(tmp_path / "a.json", answer)

    ok = _novel(project_cwd, "ask", "validate", "--questions", SEED_QUESTIONS, "--answers", SEED_ANSWERS)
    assert (ok.returncode, ok.stderr) == (0, "")

    bad = _novel(project_cwd, "ask", "validate", "--questions", SEED_QUESTIONS, "--answers", answers_file)
    assert bad.returncode == 1
    assert [line.split(":")[0] for line in bad.stderr.splitlines()] == ["answers.platform", "answered_by"]

    as_json = _novel(
        project_cwd, "ask", "validate", "--questions", SEED_QUESTIONS, "--answers", answers_file, "--json"
    )
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["errors"] == bad.stderr.splitlines()

    missing = _novel(project_cwd, "ask", "validate", "--questions", str(tmp_path / "nope.json"))
    assert missing.returncode == 2
    assert "nope.json" in missing.stderr
    for result in (ok, bad, as_json, missing):
        assert "Traceback" not in result.stderr
