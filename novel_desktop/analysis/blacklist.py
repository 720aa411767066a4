"""The novel's AI-phrase list as the author manages it (seed 004 §7 黑名单维护): created from the shipped
list, per-phrase hit counts over the committed chapters, the author's additions and removals, and the
phrases the QualityJudge finds, proposed until the author accepts or rejects them (or taken in at once when
``auto_add`` is on).

The window's panel and ``novel blacklist`` both go through these functions; every change is one write of
``ai-blacklist.json``.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from novel_desktop.analysis.ai_phrases import (
    REGEX_PREFIX,
    PhraseEntry,
    find_hits,
    load_default_phrases,
    phrases_for_novel,
)
from novel_desktop.analysis.cache import AnalysisCache, text_hash
from novel_desktop.domain.style import AiBlacklist, BlacklistEdit, BlacklistReport, PhraseRow
from novel_desktop.storage import layout

if TYPE_CHECKING:
    from novel_desktop.storage.store import NovelStore

BLACKLIST = layout.AI_BLACKLIST
#: Where a phrase of the list came from.
SOURCE_BUILTIN = "内置"
SOURCE_AUTHOR = "作者"
SOURCE_JUDGE = "评审"


def display_form(entry: PhraseEntry) -> str:
    """How the author writes (and removes) the phrase: a literal as is, a pattern as ``re:<pattern>``."""
    return REGEX_PREFIX + entry.pattern if entry.regex else entry.pattern


def shipped_phrases() -> list[str]:
    """The shipped list in the author's notation, in file order."""
    return [display_form(e) for e in load_default_phrases()]


def initial_blacklist() -> AiBlacklist:
    """A new novel's ``ai-blacklist.json``: the shipped list as ``words``."""
    return AiBlacklist.model_validate({"version": 1, "words": shipped_phrases(), "auto_add": False})


def initial_blacklist_json() -> str:
    """:func:`initial_blacklist` as the file's text."""
    return dumps_blacklist(initial_blacklist())


def initial_documents() -> dict[str, str]:
    """The documents a new novel (new, imported manuscript, demo) starts with: the AI-phrase list."""
    return {BLACKLIST: initial_blacklist_json()}


def dumps_blacklist(model: AiBlacklist) -> str:
    return json.dumps(model.to_json_dict(), ensure_ascii=False, indent=2) + "\n"


def read_blacklist(store: NovelStore) -> AiBlacklist:
    """The novel's list; a novel from before the list was created at init starts from the shipped list."""
    raw = store.document(BLACKLIST)
    if raw is None:
        return initial_blacklist()
    try:
        return AiBlacklist.model_validate(json.loads(raw))
    except ValueError as exc:
        raise ValueError(f"{BLACKLIST} 无法解析，请先修复该文件：{exc}") from exc


def phrase_counts(
    texts: Iterable[str], phrases: list[PhraseEntry], cache: AnalysisCache | None = None
) -> Counter[str]:
    """Hits per phrase pattern over ``texts``; with a ``cache``, a chapter scanned before with the same list
    costs a hash and a look-up (what makes the counts cheap for 500 chapters)."""
    raw = "\n".join(f"{p.regex}:{p.pattern}" for p in phrases)
    fingerprint = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]
    counts: Counter[str] = Counter()
    for text in texts:
        key = f"phrase-counts:{fingerprint}:{text_hash(text)}"
        found = cache.get(key, dict) if cache is not None else None
        if found is None:
            found = dict(Counter(h.pattern for h in find_hits(text, phrases)))
            if cache is not None:
                cache.put(key, found, dict)
        counts.update(found)
    if cache is not None:
        cache.flush()
    return counts


def blacklist_report(store: NovelStore, cache: AnalysisCache | None = None) -> BlacklistReport:
    """Every phrase in force with its source and hits over the committed chapters, and the proposals."""
    model = read_blacklist(store)
    phrases = phrases_for_novel(model)
    texts = [t for info in store.list_chapters() if (t := store.chapter_text(info.number)) is not None]
    counts = phrase_counts(texts, phrases, cache)
    shipped = set(shipped_phrases())
    judged = set(model.from_judge)
    rows = []
    for entry in phrases:
        shown = display_form(entry)
        source = SOURCE_BUILTIN if shown in shipped else SOURCE_JUDGE if shown in judged else SOURCE_AUTHOR
        rows.append(PhraseRow(shown, source, entry.category, counts.get(entry.pattern, 0)))
    return BlacklistReport(
        rows,
        list(model.proposed),
        list(model.custom_removed),
        list(model.rejected),
        model.auto_add,
        len(texts),
    )


def apply_edit(model: AiBlacklist, edit: BlacklistEdit) -> AiBlacklist:
    """``model`` after ``edit``; raises ValueError (a Chinese message) for a request that makes no sense,
    before anything is changed."""
    for phrase in [*edit.add, *edit.remove, *edit.accept, *edit.reject]:
        if not phrase.strip():
            raise ValueError("短语不能为空 (empty phrase)")
    in_force = {display_form(e) for e in phrases_for_novel(model)}
    unknown = [p for p in edit.remove if p.strip() not in in_force]
    if unknown:
        raise ValueError(f"黑名单里没有：{'、'.join(unknown)} (not in the list)")
    pending = {p.phrase for p in model.proposed}
    stray = [p for p in [*edit.accept, *edit.reject] if p.strip() not in pending]
    if stray:
        raise ValueError(f"没有这条待审短语：{'、'.join(stray)} (not proposed)")
    out = model
    if edit.add:
        out = out.with_added(edit.add)
    if edit.remove:
        out = out.with_removed(edit.remove, set(shipped_phrases()))
    if edit.accept_all:
        out = out.with_accepted(None)
    elif edit.accept:
        out = out.with_accepted(edit.accept)
    if edit.reject:
        out = out.with_rejected(edit.reject)
    if edit.auto_add is not None and edit.auto_add != out.auto_add:
        out = AiBlacklist.model_validate({**out.to_json_dict(), "auto_add": edit.auto_add})
    return out


def edit_blacklist(store: NovelStore, edit: BlacklistEdit) -> bool:
    """Apply ``edit`` to the novel's list in one write; True when the list changed."""
    before = read_blacklist(store)
    after = apply_edit(before, edit)
    if after == before and store.document(BLACKLIST) is not None:
        return False
    store.put_document(BLACKLIST, dumps_blacklist(after))
    return True


def with_judge_findings(store: NovelStore, chapter: int, phrases: list[str]) -> str | None:
    """The list's new text after the judge of ``chapter`` found ``phrases`` (None when nothing changes)."""
    if not any(p.strip() for p in phrases):
        return None
    try:
        before = read_blacklist(store)
    except ValueError:
        return None  # a broken hand-edited file is the author's to fix; the chapter still commits
    entries = phrases_for_novel(before)
    in_force = {display_form(e) for e in entries}
    # A phrase an existing pattern already matches in full is not new.
    fresh = [p for p in phrases if not any(e.compiled.fullmatch(p.strip()) for e in entries)]
    after = before.with_findings(fresh, chapter, in_force)
    if after == before:
        return None
    return dumps_blacklist(after)
