"""接续已有书稿, phase 2: the book's notes synthesised and offered for approval (pipeline/adopt.py phase 1).

One synthesis call (the world builder's model) over the folded notes, staged so that a kill or a cancel
during the questions never pays for it again. Then, each through the ordinary review (接受 / 编辑 /
重新生成, :func:`~novel_desktop.pipeline.approval.propose`): the world rules, the characters with their L2
contracts, the storylines; then one question for the open foreshadowing and the story state at the last
chapter; then the style profile measured on the book's own chapters and read by the StyleAnalyzer. Nothing is
stored before the author accepts it. Once all of it is answered the novel is marked adopted.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from novel_desktop.agents.adopt import AdoptAgents, synthesis_context
from novel_desktop.agents.context import trim_to_tokens
from novel_desktop.agents.planning import style_context
from novel_desktop.agents.ports import CallRecord, PlanningAgents
from novel_desktop.analysis.style_metrics import StyleMetrics, compute_metrics, profile_from_samples
from novel_desktop.domain.adoption import BookSynthesis, foreshadowing_items, notes_digest, state_ops
from novel_desktop.domain.ledger import for_purpose
from novel_desktop.domain.proposals import KIND_NAMES, Proposal, ProposalInvalid, parse_payload
from novel_desktop.llm.errors import LLMError
from novel_desktop.pipeline.adopt import (
    ADOPT_META,
    ADOPT_PURPOSE,
    STYLE_SAMPLE_TOKENS,
    STYLE_SAMPLES,
    AdoptError,
    stored_notes,
)
from novel_desktop.pipeline.approval import propose, with_changes
from novel_desktop.pipeline.interaction import InteractionManager
from novel_desktop.pipeline.quick_start import (
    ensure_storylines,
    known_characters,
    merge_profile,
    metrics_text,
)
from novel_desktop.pipeline.steps import ask, question, spec
from novel_desktop.storage import layout
from novel_desktop.storage.adoption import store_book_state
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import NovelStore, dumps

SYNTHESIS_KEY = "adopt/synthesis.json"
STATE_ANSWER = f"{layout.NOVEL_ASK_DIR}adopt-state.answers.json"
STYLE_ANSWER = f"{layout.NOVEL_ASK_DIR}adopt-style.answers.json"
ACCEPT, SKIP = "接受", "不保存"


@dataclass
class SettleReport:
    messages: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _digest_key(digest: str, changes: str) -> str:
    return hashlib.sha256(f"{digest}\n{changes}".encode()).hexdigest()[:16]


async def _synthesis(
    store: NovelStore, agents: AdoptAgents, report: SettleReport, changes: str = ""
) -> BookSynthesis:
    """The staged synthesis of these notes (and these notes of the author's), or a new one."""
    notes = await db(stored_notes, store)
    if not notes:
        raise AdoptError("还没有分析过任何章节，无法归纳设定")
    digest = notes_digest(notes)
    key = _digest_key(digest, changes)
    raw = await db(store.staging, SYNTHESIS_KEY)
    staged: dict[str, Any] = json.loads(raw) if raw else {}
    if key in staged:
        return BookSynthesis.model_validate(staged[key])
    title = (await db(store.meta)).get("title", "")
    request = with_changes("", changes).strip()
    context = synthesis_context(title, len(notes), notes[-1].chapter, digest, request)
    try:
        result = await agents.synthesize(context)
    except LLMError as exc:
        raise AdoptError(
            "归纳全书设定失败：{why}。各章分析已保存，再次运行会从归纳设定继续", why=exc.phrase
        ) from None
    report.calls += result.calls
    report.warnings += result.warnings
    if result.value is None:
        raise AdoptError("归纳全书设定的输出无法解析；各章分析已保存，再次运行即可重试")
    # Every version is kept until the end: the parts after a regenerated one still read the first version.
    staged[key] = result.value.to_json_dict()
    await db(store.put_staging, SYNTHESIS_KEY, json.dumps(staged, ensure_ascii=False))
    return result.value


def _part(synthesis: BookSynthesis, kind: str) -> dict[str, Any]:
    part: dict[str, Any] = getattr(synthesis, kind)
    return part


async def _offer(
    store: NovelStore, agents: AdoptAgents, interaction: InteractionManager, kind: str, report: SettleReport
) -> None:
    """One part of the synthesis (world / characters / storylines) through the review."""
    last = max((await db(store.checkpoint)).get("last_completed_chapter") or 1, 1)
    name = KIND_NAMES[kind]

    async def generate(changes: str) -> Proposal:
        synthesis = await _synthesis(store, agents, report, changes)
        payload = _part(synthesis, kind)
        try:
            parse_payload(kind, payload)
        except ProposalInvalid as exc:
            # One more try with what was wrong, then a clear error.
            synthesis = await _synthesis(store, agents, report, f"{changes}\n上一版的{name}无效：{exc}")
            payload = _part(synthesis, kind)
            try:
                parse_payload(kind, payload)
            except ProposalInvalid as again:
                invalid = "归纳出的{name}无效：{why}；再次运行即可重试"
                raise AdoptError(invalid, name=name, why=str(again)) from None
        return Proposal(
            kind=kind,
            title=f"接续已有书稿：{name}",
            payload=payload,
            effective_from=last + 1,
            note=f"从已导入的 {last} 章归纳",
        )

    approved = await propose(store, interaction, name=f"adopt-{kind}", generate=generate)
    report.written += approved.written
    how = "（按你的编辑）" if approved.decision.action == "edit" else ""
    report.messages.append(f"{name}已保存{how}")


def state_spec(threads: int, entities: int, last: int, preview: str) -> Any:
    return spec(
        "adopt state",
        question(
            "state_action",
            "伏笔与状态",
            f"从全书归纳出 {threads} 条未回收的伏笔、{entities} 项第 {last} 章结束时的状态。"
            f"保存？\n{preview}",
            options=[(ACCEPT, "推荐：续写时作为当前状态和待回收伏笔"), (SKIP, "不保存，之后由续写逐章建立")],
            default=ACCEPT,
        ),
    )


async def _state(
    store: NovelStore, agents: AdoptAgents, interaction: InteractionManager, report: SettleReport
) -> None:
    synthesis = await _synthesis(store, agents, report)
    last = int((await db(store.checkpoint)).get("last_completed_chapter") or 1)
    threads = foreshadowing_items(synthesis.foreshadowing, last)
    ops = state_ops(synthesis.state)
    preview = "\n".join(
        [f"- 伏笔 {t['id']}：{t['description']}" for t in threads[:10]]
        + [f"- {o['path']} = {json.dumps(o['value'], ensure_ascii=False)}" for o in ops[:15]]
    )
    answer = await ask(store, interaction, state_spec(len(threads), len(ops), last, preview), STATE_ANSWER)
    if answer.answers.get("state_action") == SKIP:
        report.messages.append("伏笔与故事状态：未保存")
        return
    version = await db(store_book_state, store, last, ops, threads)
    report.written += ["state/current-state.json", layout.GLOBAL_FORESHADOWING]
    report.messages.append(f"伏笔与故事状态已保存：{len(threads)} 条伏笔，状态版本 {version}")


def book_samples(store: NovelStore) -> list[tuple[int, str]]:
    """Style samples from the book's own chapters: the first, the middle and the last (each cut)."""
    numbers = [c.number for c in store.list_chapters()]
    if not numbers:
        return []
    picks = sorted({numbers[0], numbers[len(numbers) // 2], numbers[-1]})[:STYLE_SAMPLES]
    return [
        (n, trim_to_tokens(store.chapter_text(n) or "", STYLE_SAMPLE_TOKENS, keep="start")) for n in picks
    ]


def style_question(chapters: list[int], avg: float, dialogue: float, directives: list[str]) -> Any:
    shown = "；".join(directives[:5])
    where = "、".join(str(n) for n in chapters)
    return spec(
        "adopt style",
        question(
            "style_action",
            "文风",
            f"从本书第 {where} 章提取的文风：平均句长 {avg}，对话占比 {dialogue}。"
            f"写作指令：{shown}。保存为本书的文风？",
            options=[(ACCEPT, "推荐：续写按本书自己的文风写"), (SKIP, "不保存，之后在文风页另选")],
            default=ACCEPT,
        ),
    )


async def _style(
    store: NovelStore, planning: PlanningAgents, interaction: InteractionManager, report: SettleReport
) -> None:
    samples = await db(book_samples, store)
    if not samples:
        return
    texts = [t for _, t in samples]
    raw = await db(store.staging, "adopt/style.json")
    if raw:
        data = json.loads(raw)
    else:
        measured = await db(profile_from_samples, texts)
        combined = await db(lambda: StyleMetrics.combine(compute_metrics(t) for t in texts))
        context = style_context(
            texts,
            source_type="original",
            reference_author=None,
            known_characters=await db(known_characters, store),
            metrics=metrics_text(combined),
        )
        try:
            result = await planning.style(context)
        except LLMError as exc:
            raise AdoptError(
                "分析本书文风失败：{why}。其余已保存，再次运行会从文风继续", why=exc.phrase
            ) from None
        report.calls += result.calls
        report.warnings += result.warnings
        profile = merge_profile(result.value, measured, "original", None)
        if profile is None:
            raise AdoptError("StyleAnalyzer 的输出无法解析，文风未写入；再次运行即可重试")
        data = profile.to_json_dict()
        await db(store.put_staging, "adopt/style.json", json.dumps(data, ensure_ascii=False))
    question_spec = style_question(
        [n for n, _ in samples],
        float(data.get("avg_sentence_length") or 0),
        float(data.get("dialogue_ratio") or 0),
        [str(d) for d in data.get("writing_directives") or []],
    )
    answer = await ask(store, interaction, question_spec, STYLE_ANSWER)
    if answer.answers.get("style_action") == SKIP:
        report.messages.append("文风：未保存")
    else:
        await db(store.put_document, "style-profile.json", dumps(data))
        report.written.append("style-profile.json")
        report.messages.append(f"文风已保存（平均句长 {data.get('avg_sentence_length')}）")
    await db(store.delete_staging, "adopt/style.json")


@for_purpose(ADOPT_PURPOSE)
async def settle_book(
    store: NovelStore, agents: AdoptAgents, planning: PlanningAgents, interaction: InteractionManager
) -> SettleReport:
    """Phase 2: world, characters, storylines, foreshadowing and state, style; then mark the novel adopted.
    A part already answered is not asked again (its answer is stored), so a stopped run resumes."""
    report = SettleReport()
    if (await db(store.meta)).get(ADOPT_META) == "done":
        return report
    for kind in ("world", "characters", "storylines"):
        await _offer(store, agents, interaction, kind, report)
    report.written += await db(ensure_storylines, store)
    await _state(store, agents, interaction, report)
    await _style(store, planning, interaction, report)
    await db(store.delete_staging, SYNTHESIS_KEY)
    await db(store.set_meta, ADOPT_META, "done")
    return report


__all__ = ["SYNTHESIS_KEY", "SettleReport", "book_samples", "settle_book"]
