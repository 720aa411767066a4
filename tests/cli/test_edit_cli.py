"""Later edits from the command line (``novel edit``) and the terminal review of a proposal in ``$EDITOR``
(issue 14 item 3): validated on return, stored in one transaction, recorded in the changelog."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.cli.prompter import TerminalResponder
from novel_desktop.domain.proposals import Proposal, parse_payload_text, review_spec
from novel_desktop.pipeline.interaction import AnswersFileResponder, InteractionRequest
from novel_desktop.storage.store import NovelStore

#: A fake editor: rewrites rule W-002's text (with --break-first, the first run breaks the JSON instead).
EDITOR = """
import json, pathlib, sys
path = pathlib.Path(sys.argv[-1])
count = pathlib.Path(sys.argv[0]).with_suffix(".count")
n = int(count.read_text()) if count.exists() else 0
count.write_text(str(n + 1))
if n == 0 and "--break-first" in sys.argv[1:-1]:
    path.write_text("{broken", encoding="utf-8")
else:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:  # the author's broken edit, opened again: rewritten whole
        data = {"rules": [{"id": "W-002", "category": "geography", "rule": "", "constraint_type": "soft"}]}
    for rule in data["rules"]:
        if rule["id"] == "W-002":
            rule["rule"] = "编辑器里改过的规则"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
"""


def _editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *flags: str) -> Path:
    script = tmp_path / "fake_editor.py"
    script.write_text(EDITOR, encoding="utf-8")
    monkeypatch.delenv("VISUAL", raising=False)
    # The file to edit is appended after the flags, so the script reads it as its last argument.
    monkeypatch.setenv("EDITOR", " ".join([sys.executable, str(script), *flags]))
    return script


def _world(novel: Path) -> dict[str, dict[str, str]]:
    with NovelStore.open(novel, write=False) as store:
        return {r["id"]: r for r in store.document_json("world/rules.json")["rules"]}


def test_edit_world_from_a_file(novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["edit", str(novel), "world", "--print"]) == 0
    payload = json.loads(capsys.readouterr().out)
    payload["rules"] = [r for r in payload["rules"] if r["id"] != "W-003"]
    payload["rules"][0]["rule"] = "作者改过的 W-001"
    edited = tmp_path / "world.json"
    edited.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
    assert main(["edit", str(novel), "world", "--file", str(edited), "--from", "5"]) == 0
    out = capsys.readouterr().out
    assert "自第 5 章起生效" in out and "world/rules.json" in out
    rules = _world(novel)
    assert "W-003" not in rules and rules["W-001"]["rule"] == "作者改过的 W-001"
    with NovelStore.open(novel, write=False) as store:
        line = (store.document("world/changelog.md") or "").strip().splitlines()[-1]
    assert "删除 W-003" in line and "修改 W-001" in line and "自第 5 章起生效" in line
    # The same file again changes nothing.
    assert main(["edit", str(novel), "world", "--file", str(edited), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["changed"] is False


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"rules": [{"id": "W-001"}]}', "rules.0.rule"),
        ("{not json", "不是有效的 JSON"),
        ("", "文件是空的"),
        (b"\xff\xfe\x00bad", "不是 UTF-8"),
    ],
)
def test_a_bad_file_exits_1_and_changes_nothing(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes, message: str
) -> None:
    before = _world(novel)
    bad = tmp_path / "bad.json"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    assert main(["edit", str(novel), "world", "--file", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("错误 / error:") or message in err
    assert message in err
    assert _world(novel) == before


def test_a_locked_novel_exits_3(novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edited = tmp_path / "chars.json"
    holder = NovelStore.open(novel, write=True)
    try:
        from novel_desktop.pipeline.approval import current_payload

        edited.write_text(json.dumps(current_payload(holder, "characters"), ensure_ascii=False), "utf-8")
        assert main(["edit", str(novel), "characters", "--file", str(edited)]) == 3
        assert "错误 / error:" in capsys.readouterr().err
    finally:
        holder.close()


def test_edit_in_the_editor(
    novel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _editor(tmp_path, monkeypatch)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["edit", str(novel), "world"]) == 0
    assert _world(novel)["W-002"]["rule"] == "编辑器里改过的规则"


def test_no_editor_and_no_terminal_is_a_clear_error(
    novel: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    before = _world(novel)
    assert main(["edit", str(novel), "world"]) == 1
    assert "EDITOR" in capsys.readouterr().err
    assert _world(novel) == before


def _proposal(novel: Path) -> Proposal:
    from novel_desktop.pipeline.approval import current_payload

    with NovelStore.open(novel, write=False) as store:
        payload = current_payload(store, "world")
    return Proposal(kind="world", title="快速起步：世界规则", payload=payload, note="WorldBuilder 轻量初始化")


def test_terminal_review_edits_in_the_editor_and_asks_again_on_invalid_json(
    novel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _editor(tmp_path, monkeypatch, "--break-first")
    proposal = _proposal(novel)
    request = InteractionRequest(
        1, review_spec(proposal), "staging/novel-ask/x.answers.json", proposal=proposal
    )
    out = io.StringIO()
    # 2 = 编辑 (接受 is recommended, listed first); the editor breaks the JSON; 1 = edit again.
    responder = TerminalResponder(stdin=io.StringIO("2\n1\n"), stdout=out)
    answer = asyncio.run(responder(request))
    assert answer is not None
    shown = out.getvalue()
    assert "规则 W-001 [hard]" in shown  # the readable summary
    assert "编辑后的内容有问题" in shown and "不是有效的 JSON" in shown
    assert answer.answers["review_action"] == "编辑"
    edited = parse_payload_text("world", str(answer.answers["edited"]))
    assert any(r.rule == "编辑器里改过的规则" for r in edited.rules)  # type: ignore[attr-defined]


def test_terminal_review_regenerate_asks_for_the_changes(novel: Path) -> None:
    proposal = _proposal(novel)
    request = InteractionRequest(1, review_spec(proposal), None, proposal=proposal)
    responder = TerminalResponder(stdin=io.StringIO("3\n多一条关于宗门的规则\n"), stdout=io.StringIO())
    answer = asyncio.run(responder(request))
    assert answer is not None
    assert answer.answers["review_action"] == "重新生成"
    assert answer.answers["changes"] == "多一条关于宗门的规则"


def test_answers_file_takes_edited_as_an_object(novel: Path) -> None:
    proposal = _proposal(novel)
    request = InteractionRequest(1, review_spec(proposal), None, proposal=proposal)
    edited = {**proposal.payload, "rules": proposal.payload["rules"][:1]}
    responder = AnswersFileResponder({"world review": {"review_action": "编辑", "edited": edited}})
    answer = asyncio.run(responder(request))
    assert answer is not None
    assert json.loads(str(answer.answers["edited"])) == edited
