"""Character contract updates at a chapter's commit (seed 004 §6.5.3 契约变更协议).

The plot architect marks a breakthrough in the chapter contract's ``contract_updates``. When that chapter
commits, each named contract's current version is deprecated (``valid_until`` = the chapter) and the new
rule becomes the next version, in force from the following chapter, with a line in
``characters/changelog.md``.

The updated character files and the changelog are *staged* for the chapter just before the commit, and
:meth:`~novel_desktop.storage.commit.ChapterCommit.commit_chapter` moves them into the novel in the same
transaction as the chapter: a crash leaves either the old chapter and old contracts or both new. A rebuild
of the chapter applies the same updates again, which changes nothing when they are already in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from novel_desktop.domain.characters import Character
from novel_desktop.domain.common import iso_now
from novel_desktop.domain.contract_lifecycle import apply_contract_update, owner_of
from novel_desktop.domain.contracts import ChapterContract
from novel_desktop.pipeline.steps import character_files
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, dumps

CHARACTER_CHANGELOG = "characters/changelog.md"


@dataclass
class ContractChanges:
    """The documents a chapter's contract updates rewrite, and what to tell the author."""

    documents: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def chapter_contract(store: NovelStore, chapter: int) -> ChapterContract | None:
    """Chapter ``chapter``'s L3 contract, in whichever volume folder holds it (None when none parses)."""
    suffix = f"/chapter-contracts/chapter-{layout.num(chapter)}.json"
    for path in store.list_documents("volumes/"):
        if path.endswith(suffix):
            data = store.document_json(path)
            try:
                return ChapterContract.model_validate(data)
            except ValueError:
                return None
    return None


def contract_changes(store: NovelStore, chapter: int) -> ContractChanges:
    """What the contract updates of chapter ``chapter`` would write (nothing when none are marked or all are
    already in place)."""
    out = ContractChanges()
    contract = chapter_contract(store, chapter)
    if contract is None or not contract.contract_updates:
        return out
    characters = character_files(store)
    changed: dict[str, Character] = {}
    for update in contract.contract_updates:
        owner = owner_of(list(changed.values()) + characters, update.contract_id)
        if owner is None:
            out.warnings.append(f"第 {chapter} 章要更新的角色契约 {update.contract_id} 不存在，已跳过")
            continue
        owner = changed.get(owner.id, owner)
        updated, applied = apply_contract_update(owner, update, chapter)
        if applied.changed:
            changed[updated.id] = updated
            out.lines.append(applied.line)
        elif applied.line:
            out.warnings.append(f"第 {chapter} 章：{applied.line}")
    for slug, character in changed.items():
        out.documents[f"characters/active/{slug}.json"] = dumps(character.to_json_dict())
    if out.lines:
        old = store.document(CHARACTER_CHANGELOG) or "# 角色变更记录\n\n"
        prefix = old if old.endswith("\n") else old + "\n"
        stamp = iso_now()
        out.documents[CHARACTER_CHANGELOG] = prefix + "".join(f"- {stamp} {line}\n" for line in out.lines)
    return out


def stage_contract_updates(store: NovelStore, chapter: int) -> list[str]:
    """Stage the character files and changelog the chapter's contract updates rewrite, for the commit to
    move in with the chapter. Returns the warnings (updates that could not be applied)."""
    # What an earlier, interrupted attempt staged may be stale (the author edited a character since).
    for path in store.list_staging(chapter):
        if path.startswith("characters/"):
            store.delete_staging(path)
    changes = contract_changes(store, chapter)
    for path, content in changes.documents.items():
        store.put_staging(path, content, chapter=chapter)
    return changes.warnings


def apply_contract_updates(store: NovelStore, chapter: int) -> ContractChanges:
    """Apply the chapter's contract updates now, in one transaction (a rebuild of a committed chapter)."""
    changes = contract_changes(store, chapter)
    if changes.documents:
        store.put_documents(changes.documents)
    return changes
