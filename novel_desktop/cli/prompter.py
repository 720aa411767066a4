"""Asking NOVEL_ASK questions in the terminal (seed 002's TerminalPrompter, adapted).

Numbered options with the recommended ones first, an automatic "其他" (Other) where ``allow_other`` is set,
multi-select as ``1,3``, the default on an empty line, free text typed directly. End of input cancels.
A proposal's review (what an agent invented) shows a summary and edits the JSON in ``$EDITOR``
(``cli/review.py``).
"""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import dataclass, field
from typing import TextIO

from novel_desktop.cli.review import ask_proposal
from novel_desktop.domain.novel_ask import AnswerSpec, Question, QuestionOption
from novel_desktop.domain.novel_ask_answers import build_answer_spec
from novel_desktop.domain.proposals import ACTION_Q
from novel_desktop.pipeline.interaction import InteractionRequest

_SPLIT = re.compile(r"[,，、\s]+")


def is_recommended(option: QuestionOption) -> bool:
    text = f"{option.label} {option.description}"
    return "推荐" in text or "recommended" in text.lower()


def ordered_options(question: Question) -> list[QuestionOption]:
    """Recommended options first, otherwise in the spec's order."""
    return sorted(question.options, key=lambda o: not is_recommended(o))


class _EndOfInput(Exception):
    pass


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


@dataclass
class TerminalResponder:
    """Answers requests on a terminal; ``None`` (cancel) at end of input."""

    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    answered_by: str = "novel_cli"

    async def __call__(self, request: InteractionRequest) -> AnswerSpec | None:
        return await asyncio.to_thread(self._ask_all, request)

    # Blocking part, run in a worker thread so the event loop stays free.
    def _ask_all(self, request: InteractionRequest) -> AnswerSpec | None:
        spec = request.spec
        if request.context:
            self._say(request.context)
        answers: dict[str, str | list[str]] = {}
        try:
            if request.proposal is not None and any(q.id == ACTION_Q for q in spec.questions):
                answers = ask_proposal(
                    request.proposal,
                    list(spec.questions),
                    ask=self._ask,
                    say=self._say,
                    read=self._read,
                    stdin_is_tty=_isatty(self.stdin),
                )
                return build_answer_spec(spec, answers, answered_by=self.answered_by)
            for question in spec.questions:
                value = self._ask(question)
                if value is not None:
                    answers[question.id] = value
        except _EndOfInput:
            self._say("\n已取消 (cancelled)")
            return None
        return build_answer_spec(spec, answers, answered_by=self.answered_by)

    def _say(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def _read(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if line == "":
            raise _EndOfInput
        return line.strip()

    def _ask(self, q: Question) -> str | list[str] | None:
        self._say(f"\n┌─ {q.header}")
        self._say(f"│ {q.question}")
        if q.kind == "free_text":
            return self._ask_text(q)
        options = ordered_options(q)
        for i, opt in enumerate(options, start=1):
            mark = "（推荐）" if is_recommended(opt) and "推荐" not in opt.label else ""
            desc = f" —— {opt.description}" if opt.description else ""
            self._say(f"│  {i}. {opt.label}{mark}{desc}")
        if q.allow_other:
            self._say("│  0. 其他（自己填写） Other")
        self._say("└─")
        default = q.default
        hint = "输入编号，多选用逗号分隔（如 1,3）" if q.kind == "multi_choice" else "输入编号"
        if default not in (None, "", []):
            shown = "、".join(default) if isinstance(default, list) else str(default)
            hint += f"，直接回车选默认：{shown}"
        elif not q.required:
            hint += "，直接回车跳过"
        while True:
            raw = self._read(f"{hint}: ")
            if not raw:
                if default not in (None, "", []):
                    return list(default) if isinstance(default, list) else str(default)
                if not q.required:
                    return None
                self._say("这个问题必须回答。")
                continue
            picked = self._parse(raw, options, q)
            if picked is not None:
                return picked

    def _parse(self, raw: str, options: list[QuestionOption], q: Question) -> str | list[str] | None:
        parts = [p for p in _SPLIT.split(raw) if p]
        if not all(p.isdigit() for p in parts):
            self._say("请输入编号。")
            return None
        numbers = [int(p) for p in parts]
        if q.kind == "single_choice" and len(numbers) != 1:
            self._say("这是单选题，请只输入一个编号。")
            return None
        chosen: list[str] = []
        for n in numbers:
            if n == 0 and q.allow_other:
                other = self._read("请输入你的答案: ")
                if not other:
                    self._say("自定义答案不能为空。")
                    return None
                chosen.append(other)
            elif 1 <= n <= len(options):
                chosen.append(options[n - 1].label)
            else:
                self._say(f"没有编号 {n}。")
                return None
        unique = list(dict.fromkeys(chosen))
        return unique[0] if q.kind == "single_choice" else unique

    def _ask_text(self, q: Question) -> str | None:
        default = q.default if isinstance(q.default, str) else None
        hint = "请输入"
        if default:
            hint += f"（回车使用默认：{default}）"
        elif not q.required:
            hint += "（回车跳过）"
        while True:
            raw = self._read(f"{hint}: ")
            if raw:
                return raw
            if default:
                return default
            if not q.required:
                return None
            self._say("这个问题必须回答。")
