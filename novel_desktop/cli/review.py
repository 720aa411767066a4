"""Reviewing an agent's proposal in the terminal, and editing a payload in ``$VISUAL`` / ``$EDITOR``.

The terminal prompter hands a request with a ``proposal`` here: a readable summary of what the agent made,
then 接受 / 编辑 / 重新生成 (and any extra option the question has, e.g. 调整章数). 编辑 opens the payload's
JSON in the author's editor, validates it on return (``domain.proposals.parse_payload_text``) and offers to
edit again or go back; the accepted text is the answer's ``edited`` field. ``novel edit`` uses the same
editor loop for later edits.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from novel_desktop.domain.proposals import (
    ACCEPT,
    ACTION_Q,
    CHANGES_Q,
    EDIT,
    EDITED_Q,
    KIND_NAMES,
    REGENERATE,
    Proposal,
    ProposalInvalid,
    parse_payload_text,
)


class NoEditor(Exception):
    """Neither ``$VISUAL`` nor ``$EDITOR`` is set and there is no terminal to fall back on."""


def _short(text: Any, limit: int = 60) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def payload_summary(kind: str, payload: dict[str, Any]) -> list[str]:
    """What a payload holds, a line per item, for the terminal."""
    lines: list[str] = []
    if kind == "world":
        for r in payload.get("rules") or []:
            lines.append(f"规则 {r.get('id')} [{r.get('constraint_type', '')}] {_short(r.get('rule'))}")
        for d in payload.get("documents") or []:
            lines.append(f"设定文档 world/{d.get('file')}（{len(str(d.get('content') or ''))} 字）")
    elif kind == "characters":
        for c in payload.get("characters") or []:
            contracts = "；".join(_short(k.get("rule"), 30) for k in c.get("contracts") or [])
            lines.append(
                f"角色 {c.get('name')}（{c.get('id')}，{c.get('role') or '—'}）契约：{contracts or '无'}"
            )
        for r in payload.get("relationships") or []:
            lines.append(f"关系 {r.get('from')} → {r.get('to')}：{r.get('type')}")
    elif kind == "storylines":
        for s in payload.get("storylines") or []:
            lines.append(f"故事线 {s.get('id')}「{s.get('name')}」{s.get('type')}，{s.get('status')}")
    elif kind == "volume_plan":
        outline = str(payload.get("outline") or "")
        lines.append(f"大纲 {len(outline)} 字：{_short(outline.splitlines()[0] if outline else '')}")
        for c in payload.get("chapter_contracts") or []:
            goals = "；".join(_short(o.get("description"), 30) for o in c.get("objectives") or [])
            lines.append(f"第 {c.get('chapter')} 章契约：{goals or '（无目标）'}")
    return lines


def proposal_summary(proposal: Proposal) -> str:
    name = KIND_NAMES.get(proposal.kind, proposal.kind)
    head = [f"══ {proposal.title}（{name}，自第 {proposal.effective_from} 章起生效）"]
    if proposal.note:
        head.append(proposal.note)
    return "\n".join([*head, *(f"  · {line}" for line in payload_summary(proposal.kind, proposal.payload))])


def editor_command(stdin_is_tty: bool) -> list[str]:
    """The author's editor: ``$VISUAL``, then ``$EDITOR``, then (on a terminal) nano or vi."""
    for var in ("VISUAL", "EDITOR"):
        value = os.environ.get(var, "").strip()
        if value:
            return shlex.split(value, posix=os.name != "nt")
    if stdin_is_tty:
        for name in ("nano", "vi", "notepad"):
            found = shutil.which(name)
            if found:
                return [found]
    raise NoEditor(
        "没有设置编辑器：请设置环境变量 VISUAL 或 EDITOR（如 export EDITOR=nano），"
        "或用 --answers-file / --file 直接给出编辑后的 JSON"
    )


def edit_text(text: str, *, stdin_is_tty: bool, suffix: str = ".json") -> str:
    """Open ``text`` in the author's editor and return what the file holds when the editor exits."""
    command = editor_command(stdin_is_tty)
    fd, name = tempfile.mkstemp(prefix="novel-edit-", suffix=suffix)
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            result = subprocess.run([*command, str(path)], check=False)
        except OSError as exc:
            raise NoEditor(f"无法启动编辑器 {command[0]}：{exc.strerror or exc}") from None
        if result.returncode != 0:
            raise NoEditor(f"编辑器 {command[0]} 以退出码 {result.returncode} 结束，内容未采用")
        return path.read_text(encoding="utf-8-sig")
    finally:
        path.unlink(missing_ok=True)


def edit_until_valid(
    kind: str,
    text: str,
    *,
    say: Callable[[str], None],
    read: Callable[[str], str],
    stdin_is_tty: bool,
) -> str | None:
    """Edit ``text`` until it validates as a ``kind`` payload; the valid text, or None when given up."""
    while True:
        try:
            text = edit_text(text, stdin_is_tty=stdin_is_tty)
        except NoEditor as exc:
            say(f"错误：{exc}")
            return None
        try:
            parse_payload_text(kind, text)
        except ProposalInvalid as exc:
            say("编辑后的内容有问题：")
            for problem in exc.problems[:20]:
                say(f"  - {problem}")
            choice = read("1. 再次编辑  2. 放弃编辑（回到选择）  请输入编号: ").strip()
            if choice != "1":
                return None
            continue
        return text


def ask_proposal(
    proposal: Proposal,
    questions: list[Any],
    *,
    ask: Callable[[Any], str | list[str] | None],
    say: Callable[[str], None],
    read: Callable[[str], str],
    stdin_is_tty: bool,
) -> dict[str, Any]:
    """The answers to a proposal's review question: the action, and ``edited`` or ``changes`` as it needs."""
    say(proposal_summary(proposal))
    by_id = {q.id: q for q in questions}
    edited_text = proposal.payload_text()
    while True:
        action = ask(by_id[ACTION_Q])
        answers: dict[str, Any] = {ACTION_Q: action}
        if action == EDIT:
            text = edit_until_valid(proposal.kind, edited_text, say=say, read=read, stdin_is_tty=stdin_is_tty)
            if text is None:
                continue
            edited_text = text
            answers[EDITED_Q] = text
        elif action == REGENERATE and CHANGES_Q in by_id:
            value = ask(by_id[CHANGES_Q])
            if value:
                answers[CHANGES_Q] = value
        elif action != ACCEPT:
            for q in questions:
                if q.id not in (ACTION_Q, EDITED_Q, CHANGES_Q):
                    value = ask(q)
                    if value is not None:
                        answers[q.id] = value
        return answers
