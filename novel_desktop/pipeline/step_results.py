"""What an external executor wrote for a step (seed 000), checked and taken in.

:func:`validate` checks the files of a step's ``expected_outputs`` against the domain models and the gate's
AnswerSpec against its QuestionSpec; :func:`advance` imports them into staging and moves the checkpoint — a
commit goes through :meth:`NovelStore.commit_chapter`, one transaction, exactly as ``novel continue`` commits.
The steps themselves and their instruction packets are :mod:`novel_desktop.pipeline.executor`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.domain.gate import GateAction
from novel_desktop.domain.novel_ask import (
    InstructionPacket,
    ValidationProblem,
)
from novel_desktop.domain.novel_ask_answers import evaluate_gate, validate_answer_path
from novel_desktop.domain.refine import MAX_CHANGE_RATIO
from novel_desktop.domain.text import count_chars
from novel_desktop.domain.validate import model_for
from novel_desktop.pipeline.commit_documents import stage_commit_documents
from novel_desktop.pipeline.executor import (
    FolderReader,
    Step,
    StepInvalid,
    StepRefused,
    answer_choice,
    changed_chars,
    chapter_facts,
    gate_decision,
    parse_step,
    staged_gate,
)
from novel_desktop.pipeline.executor_lifecycle import (
    answers_of,
    apply_lifecycle,
    import_prefixes,
    style_missing,
)
from novel_desktop.pipeline.executor_packets import instructions, polishing
from novel_desktop.pipeline.executor_steps import next_step
from novel_desktop.pipeline.quick_start import QUICK_START_META
from novel_desktop.pipeline.verdict import SECONDARY_EVAL, save_staged_notes, staged_notes
from novel_desktop.pipeline.volume_plan import volume_range
from novel_desktop.storage import layout
from novel_desktop.storage.store import CommitResult, NovelStore, dumps

_CONTRACT_FILE = re.compile(r"/chapter-contracts/chapter-(\\d{3,})\\.json$")


def _check_output(path: str, text: str, step: Step) -> list[ValidationProblem]:
    if not text.strip():
        return [ValidationProblem(path, "文件是空的 (empty file)")]
    if not path.endswith(".json"):
        if path.endswith(".md") and "/chapters/" in f"/{path}" and count_chars(text) < 1:
            return [ValidationProblem(path, "正文没有文字 (no text)")]
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [ValidationProblem(path, f"不是合法的 JSON：第 {exc.lineno} 行 {exc.msg}")]
    model = Evaluation if path.endswith("-eval-secondary.json") else model_for(path)
    problems: list[ValidationProblem] = []
    if model is not None:
        try:
            model.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors(include_url=False)[:10]:
                where = ".".join(str(p) for p in err["loc"]) or "(根 root)"
                problems.append(ValidationProblem(path, f"{where}：{err['msg']}"))
    if (
        step.kind == "chapter"
        and isinstance(data, dict)
        and "chapter" in data
        and data["chapter"] != step.number
    ):
        problems.append(ValidationProblem(path, f"chapter 应为 {step.number}，实际为 {data['chapter']!r}"))
    contract = _CONTRACT_FILE.search(path)
    if contract and isinstance(data, dict) and data.get("chapter") != int(contract.group(1)):
        problems.append(
            ValidationProblem(
                path, f"chapter 应为 {int(contract.group(1))}（文件名），实际为 {data.get('chapter')!r}"
            )
        )
    return problems


def validate(store: NovelStore, step: str, folder: str | Path | None = None) -> list[ValidationProblem]:
    """Every reason ``step``'s outputs are not ready to advance; empty when they are.

    Reads from ``folder`` (an exported project folder the executor wrote into) or, without one, from the
    novel's staging. A gated step needs a valid AnswerSpec at its ``answer_path`` first: a missing one is
    named, an invalid one blocks the step with the reasons (seed 000).
    """
    parsed = parse_step(step)
    packet = instructions(store, parsed.id)
    root = Path(folder) if folder is not None else None
    reader = FolderReader(store, root)
    problems: list[ValidationProblem] = []
    if packet.has_gate and packet.answer_path is not None and packet.novel_ask is not None:
        path_problems = validate_answer_path(packet.answer_path, root)
        if path_problems:
            return path_problems
        raw = reader.read(packet.answer_path)
        if raw is None:
            problems.append(
                ValidationProblem(
                    packet.answer_path,
                    f"缺少 AnswerSpec：先向作者提问（topic: {packet.novel_ask.topic}）并写入此文件 "
                    "(the gate's answer is missing)",
                )
            )
        else:
            try:
                data: Any = json.loads(raw)
            except json.JSONDecodeError as exc:
                problems.append(
                    ValidationProblem(packet.answer_path, f"AnswerSpec 不是合法的 JSON：{exc.msg}")
                )
            else:
                outcome = evaluate_gate(packet.novel_ask, data)
                problems.extend(
                    ValidationProblem(
                        packet.answer_path, f"AnswerSpec 无效，该步骤已阻塞（修复或删除后重试）：{p}"
                    )
                    for p in outcome.problems
                )
    for output in packet.expected_outputs:
        if output.path == packet.answer_path:
            continue
        text = reader.read(output.path)
        if text is None:
            if output.required:
                problems.append(
                    ValidationProblem(output.path, "缺少必需的输出文件 (required output missing)")
                )
            continue
        problems.extend(_check_output(output.path, text, parsed))
    if root is not None and parsed.kind in ("novel", "volume"):
        # Every document the advance would import is checked like an output: nothing invalid gets in.
        listed = {o.path for o in packet.expected_outputs}
        for rel in _documents_under(root, import_prefixes(parsed)):
            if rel not in listed and rel.endswith(".json"):
                problems.extend(_check_output(rel, (root / rel).read_text(encoding="utf-8"), parsed))
    answers = answers_of(reader.read(packet.answer_path), packet.novel_ask) if packet.answer_path else {}
    if (
        parsed.id == "novel:style"
        and not problems
        and style_missing(reader.read("style-profile.json"), answers)
    ):
        problems.append(
            ValidationProblem(
                "style-profile.json", "选了样本或参考作者时必须写出风格指纹 (style profile missing)"
            )
        )
    if parsed.kind == "chapter" and parsed.action == "refine":
        problems.extend(_refine_budget(store, parsed.number, reader))
    return problems


def _refine_budget(store: NovelStore, n: int, reader: FolderReader) -> list[ValidationProblem]:
    """The refiner changes at most 15% of the chapter across its two passes (the pipeline's budget)."""
    path = f"staging/{layout.chapter_path(n)}"
    before = store.staging(layout.chapter_path(n))
    after = reader.read(path)
    if before is None or after is None or before == after:
        return []
    used = int(staged_notes(store, n).get("refine_changed") or 0) if polishing(store, n) else 0
    changed = changed_chars(before, after)
    allowed = int(len(before) * MAX_CHANGE_RATIO)
    if used + changed <= allowed:
        return []
    return [
        ValidationProblem(
            path,
            f"润色改动 {changed} 字（此前已改 {used} 字），超过全文 15% 的上限 {allowed} 字；"
            "只改文风问题，不要重写 (the refiner's 15% budget is spent)",
        )
    ]


# ---------------------------------------------------------------------------- advance
@dataclass
class AdvanceResult:
    """What ``advance`` did, in words for the author, and the step that comes next."""

    step: str
    message: str
    next_step: str
    commit: CommitResult | None = None
    imported: list[str] = field(default_factory=list)


def _import(store: NovelStore, root: Path, paths: list[str]) -> list[str]:
    """Copy the executor's files from the folder into the novel (staging, answers or documents)."""
    done: list[str] = []
    for path in paths:
        target = root / path
        if not target.is_file():
            continue
        text = target.read_text(encoding="utf-8")
        kind, _ = layout.classify(path)
        if kind is layout.Kind.ANSWER:
            store.put_answer(path, text)
        elif kind is layout.Kind.STAGING:
            store.put_staging(path.removeprefix("staging/"), text)
        elif kind is layout.Kind.DOCUMENT:
            store.put_document(path, text)
        else:
            continue
        done.append(path)
    return done


def _documents_under(root: Path, prefixes: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for prefix in prefixes:
        base = root / prefix
        files = [base] if base.is_file() else sorted(base.rglob("*")) if base.is_dir() else []
        for file in files:
            rel = file.relative_to(root).as_posix()
            if file.is_file() and layout.classify(rel)[0] is layout.Kind.DOCUMENT:
                found.append(rel)
    return found


def advance(store: NovelStore, step: str, folder: str | Path | None = None) -> AdvanceResult:
    """Import ``step``'s validated outputs and move the checkpoint (a commit for ``chapter:N:commit``).

    Raises :class:`StepInvalid` when :func:`validate` finds problems and :class:`StepRefused` when the step
    is not the one the checkpoint expects, or the author's answer says not to go on. With ``folder``, the
    folder's ``.checkpoint.json`` is brought up to date, and a commit also writes the committed files back
    and clears the chapter's staging there, so the executor and the window keep seeing one novel.
    """
    parsed = parse_step(step)
    expected = next_step(store)
    if parsed.id != expected:
        raise StepRefused(f"现在应执行的步骤是 {expected}，不是 {parsed.id} (the next step is {expected})")
    problems = validate(store, parsed.id, folder)
    if problems:
        raise StepInvalid(parsed.id, problems)
    packet = instructions(store, parsed.id)
    root = Path(folder) if folder is not None else None
    imported: list[str] = []
    before = store.staging(layout.chapter_path(parsed.number)) if parsed.kind == "chapter" else None
    if root is not None:
        paths = [o.path for o in packet.expected_outputs]
        if parsed.kind != "chapter":
            paths += _documents_under(root, import_prefixes(parsed))
        imported = _import(store, root, list(dict.fromkeys(paths)))

    result = _apply(store, parsed, packet, before)
    result.imported = imported
    result.next_step = next_step(store)
    if root is not None:
        (root / layout.CHECKPOINT).write_text(dumps(store.checkpoint()), encoding="utf-8")
        if result.commit is not None:
            _sync_committed(store, root, parsed.number)
    return result


def _answer(store: NovelStore, packet: InstructionPacket, question: str) -> str | None:
    if packet.answer_path is None or packet.novel_ask is None:
        return None
    return answer_choice(store, packet.answer_path, packet.novel_ask, question)


def _apply(store: NovelStore, step: Step, packet: InstructionPacket, before: str | None) -> AdvanceResult:
    sid = step.id
    if step.kind != "chapter":
        return AdvanceResult(sid, apply_lifecycle(store, step, packet), "")

    n = step.number
    text_key = layout.chapter_path(n)
    if step.action in ("draft", "revise"):
        text = store.staging(text_key) or ""
        notes = staged_notes(store, n)
        for stale in (layout.summary_path(n), layout.delta_path(n), layout.evaluation_path(n)):
            store.delete_staging(stale)
        store.delete_staging(SECONDARY_EVAL.format(n=layout.num(n)))
        if step.action == "draft":
            store.put_staging(layout.draft_path(n), text, chapter=n, kind="draft")
            store.put_staging(text_key, text, chapter=n, kind="draft")
        else:
            notes["revisions"] = int(notes["revisions"]) + 1
            store.put_staging(text_key, text, chapter=n, kind="revision")
        notes["polished"] = False
        notes["refine_changed"] = 0
        notes["executor"] = "external"
        notes.pop("author_edited", None)  # a new text from the writer is no longer the author's
        save_staged_notes(store, n, notes)
        state = "WRITING" if step.action == "draft" else "CHAPTER_REWRITE"
        store.update_checkpoint(inflight_chapter=n, pipeline_stage="drafted", orchestrator_state=state)
        return AdvanceResult(sid, f"第 {n} 章正文已放入暂存区（{count_chars(text)} 字）", "")
    if step.action == "summarize":
        return AdvanceResult(sid, f"第 {n} 章摘要与状态补丁已暂存", "")
    if step.action == "refine":
        text = store.staging(text_key) or ""
        polish = polishing(store, n)
        notes = staged_notes(store, n)
        changed = changed_chars(before, text) if before is not None else 0
        notes["refine_changed"] = (int(notes.get("refine_changed") or 0) if polish else 0) + changed
        store.put_staging(text_key, text, chapter=n, kind="refined")
        if polish:
            # The gate's second polish (3.5-3.9): once, and the verdict stands; the commit comes next.
            notes["polished"] = True
            save_staged_notes(store, n, notes)
            return AdvanceResult(sid, f"第 {n} 章二次润色已暂存（改动 {changed} 字）", "")
        save_staged_notes(store, n, notes)
        store.update_checkpoint(inflight_chapter=n, pipeline_stage="refined")
        return AdvanceResult(sid, f"第 {n} 章润色稿已暂存", "")
    if step.action == "judge":
        gate = gate_decision(store, n)
        notes = staged_notes(store, n)
        if gate is not None:
            _, evaluation = gate
            score = evaluation.overall if evaluation.overall is not None else evaluation.computed_overall()
            notes["scores"].append(round(float(score), 2))
        save_staged_notes(store, n, notes)
        store.update_checkpoint(inflight_chapter=n, pipeline_stage="judged")
        reason = gate[0].reason if gate else ""
        return AdvanceResult(sid, f"第 {n} 章评审已暂存：{reason}", "")
    return _commit(store, n, packet)


def _commit(store: NovelStore, n: int, packet: InstructionPacket) -> AdvanceResult:
    sid = f"chapter:{layout.num(n)}:commit"
    verdict = staged_gate(store, n)
    if verdict is None:
        raise StepRefused(f"第 {n} 章还没有评审结果，先执行 chapter:{layout.num(n)}:judge")
    if not (store.staging(layout.chapter_path(n)) or "").strip():
        raise StepRefused(
            f"第 {n} 章暂存区里没有正文，不能提交；先执行 chapter:{layout.num(n)}:draft (no staged text)"
        )
    decision = verdict.decision
    flagged = decision.flagged
    if decision.action is GateAction.ASK_USER:
        choice = _answer(store, packet, "low_score_action")
        if choice == "接受":
            flagged = True
        else:
            nxt = "revise" if choice == "自动修订" else "judge"
            raise StepRefused(
                f"作者选择了“{choice}”，本章不提交；下一步 chapter:{layout.num(n)}:{nxt} (not committed)"
            )
    elif not decision.commits:
        raise StepRefused(f"门控要求修订：{decision.reason}；先执行 chapter:{layout.num(n)}:revise")
    notes = staged_notes(store, n)
    volume, storyline, _ = chapter_facts(store, n)
    log = {
        "chapter": n,
        "storyline_id": storyline,
        "started_at": notes["started_at"],
        "stages": notes["stages"],
        "gate_decision": "force_pass" if flagged else decision.action.value,
        "revisions": int(notes["revisions"]),
        "scores": notes["scores"],
        # The same findings the built-in pipeline logs: the checks in code and the judge's violations.
        "gate_issues": [i.to_json() for i in verdict.issues],
        "gate_violations": verdict.judge_violation_lines(),
        "executor": "external",
        "total_duration_ms": 0,
        "total_cost_usd": 0.0,
    }
    store.put_staging(layout.log_path(n), json.dumps(log, ensure_ascii=False, indent=2), chapter=n)
    warnings = stage_commit_documents(store, n)
    commit = store.commit_chapter(n, volume=volume, storyline_id=storyline)
    if store.meta().get(QUICK_START_META) == "trial":
        state = "QUICK_START"  # a trial chapter belongs to the quick start (the orchestrator's rule)
    else:
        rng = volume_range(store, volume)
        state = "VOL_REVIEW" if rng is not None and n >= rng[1] else "WRITING"
    store.update_checkpoint(orchestrator_state=state)
    mark = "（已标记质量问题）" if flagged else ""
    message = f"第 {n} 章已提交，状态版本 {commit.state_version}{mark}"
    if state == "VOL_REVIEW":
        message += f"；第 {volume} 卷已写完，进入卷末回顾"
    skipped = [f"状态补丁未能应用：{commit.ops_skipped}"] if commit.ops_skipped else []
    for line in [*warnings, *skipped]:
        message += f"\n  ⚠ {line}"
    return AdvanceResult(sid, message, "", commit=commit)


def _sync_committed(store: NovelStore, root: Path, n: int) -> None:
    """Write what the commit produced into the folder and clear the chapter's staging files there."""
    files: dict[str, str | None] = {
        layout.chapter_path(n): store.chapter_text(n),
        layout.summary_path(n): store.summary(n),
        layout.CURRENT_STATE: dumps(store.current_state()),
        layout.GLOBAL_FORESHADOWING: store.document(layout.GLOBAL_FORESHADOWING),
    }
    ev = store.evaluation(n)
    files[layout.evaluation_path(n)] = dumps(ev) if ev is not None else None
    plog = store.pipeline_log(n)
    files[layout.log_path(n)] = dumps(plog) if plog is not None else None
    entries = store.changelog()
    files[layout.CHANGELOG] = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries) or None
    for path in store.list_documents("storylines/"):
        if path.endswith("/memory.md"):
            files[path] = store.document(path)
    for rel, text in files.items():
        if text is None:
            continue
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    staging = root / "staging"
    tag = f"chapter-{layout.num(n)}"
    for file in sorted(staging.rglob("*")) if staging.is_dir() else []:
        rel = file.relative_to(root).as_posix()
        if not file.is_file() or rel.startswith(layout.NOVEL_ASK_DIR):
            continue
        if tag in file.name or (rel.startswith("staging/storylines/") and rel.endswith("/memory.md")):
            file.unlink()


__all__ = ["AdvanceResult", "advance", "validate"]
