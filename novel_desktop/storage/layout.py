"""The seed's project folder layout (004 §9.1): file names and what each path is.

Both the staging keys inside the database and the exported folder use these names, so a path means the same
thing everywhere.
"""

from __future__ import annotations

import re
from enum import StrEnum

CHECKPOINT = ".checkpoint.json"
CURRENT_STATE = "state/current-state.json"
CHANGELOG = "state/changelog.jsonl"
GLOBAL_FORESHADOWING = "foreshadowing/global.json"
AI_BLACKLIST = "ai-blacklist.json"
NOVEL_ASK_DIR = "staging/novel-ask/"


def num(n: int) -> str:
    """Chapter numbers are zero-padded to three digits (``chapter-048``); 1000 and above keep all digits."""
    return f"{n:03d}"


def chapter_path(n: int) -> str:
    return f"chapters/chapter-{num(n)}.md"


def draft_path(n: int) -> str:
    """Staging key of the writer's first draft (kept as a revision at commit)."""
    return f"chapters/chapter-{num(n)}.draft.md"


def version_path(n: int, k: int) -> str:
    """Staging key of the ``k``-th intermediate text of a chapter (the judged text a revision replaced, then
    the revision), kept as revisions at commit so the history shows every text the pipeline produced."""
    return f"chapters/chapter-{num(n)}.v{k:02d}.md"


_VERSION = re.compile(r"^chapters/chapter-(\d{3,})\.v(\d{2,})\.md$")


def version_of(path: str) -> tuple[int, int] | None:
    """``(chapter, k)`` of a :func:`version_path` key, else None."""
    m = _VERSION.match(path)
    return (int(m.group(1)), int(m.group(2))) if m else None


def summary_path(n: int) -> str:
    return f"summaries/chapter-{num(n)}-summary.md"


def delta_path(n: int) -> str:
    return f"state/chapter-{num(n)}-delta.json"


def evaluation_path(n: int) -> str:
    return f"evaluations/chapter-{num(n)}-eval.json"


def log_path(n: int) -> str:
    return f"logs/chapter-{num(n)}-log.json"


def context_path(n: int) -> str:
    """Staging key of what each agent's prompt held for the chapter in flight (the context inspector); the
    commit keeps it in the chapter's pipeline log under ``context``."""
    return f"logs/chapter-{num(n)}-context.json"


def memory_path(storyline_id: str) -> str:
    return f"storylines/{storyline_id}/memory.md"


def volume_dir(volume: int) -> str:
    return f"volumes/vol-{volume:02d}"


def volume_info_path(volume: int) -> str:
    return f"{volume_dir(volume)}/volume.json"


def contract_path(volume: int, chapter: int) -> str:
    return f"{volume_dir(volume)}/chapter-contracts/chapter-{num(chapter)}.json"


class Kind(StrEnum):
    """What a project-relative path holds, and so where it is stored."""

    CHECKPOINT = "checkpoint"
    CHAPTER = "chapter"
    SUMMARY = "summary"
    EVALUATION = "evaluation"
    LOG = "log"
    CURRENT_STATE = "current_state"
    CHANGELOG = "changelog"
    ANSWER = "answer"
    STAGING = "staging"
    DOCUMENT = "document"
    EXTRA = "extra"


_NUMBERED = {
    Kind.CHAPTER: re.compile(r"^chapters/chapter-(\d{3,})\.md$"),
    Kind.SUMMARY: re.compile(r"^summaries/chapter-(\d{3,})-summary\.md$"),
    Kind.EVALUATION: re.compile(r"^evaluations/chapter-(\d{3,})-eval\.json$"),
    Kind.LOG: re.compile(r"^logs/chapter-(\d{3,})-log\.json$"),
}

_SLUG = r"[a-z0-9]+(?:[-_][a-z0-9]+)*"
_VOL = r"volumes/vol-\d{2,}"
#: Project documents the seed names (§9.1, §6.5, §6.6, §7 and the style-drift file of §6 Layer 3).
_DOCUMENTS = [
    re.compile(p)
    for p in (
        r"^brief\.md$",
        r"^style-profile\.json$",
        r"^style-drift\.json$",
        r"^ai-blacklist\.json$",
        r"^research/[^/]+\.md$",
        r"^prompts/[^/]+\.md$",
        r"^world/[^/]+\.(md|json)$",
        r"^characters/(active|retired)/[^/]+\.(md|json)$",
        r"^characters/relationships\.json$",
        r"^characters/changelog\.md$",
        r"^storylines/storylines\.json$",
        r"^storylines/storyline-spec\.json$",
        # Our addition: what the author approved or edited, with the chapter it takes effect from.
        r"^storylines/changelog\.md$",
        rf"^storylines/{_SLUG}/memory\.md$",
        rf"^{_VOL}/(outline\.md|storyline-schedule\.json|foreshadowing\.json|review\.md|changelog\.md)$",
        # Our addition to the seed layout: {"volume": N, "title": "…"} for a volume's name (imported
        # manuscripts have them before any outline exists).
        rf"^{_VOL}/volume\.json$",
        rf"^{_VOL}/chapter-contracts/chapter-\d{{3,}}\.json$",
        r"^state/history/[^/]+\.json$",
        r"^foreshadowing/global\.json$",
    )
]


def classify(path: str) -> tuple[Kind, int | None]:
    """The kind of a project-relative POSIX path and, for chapter files, the chapter number."""
    if path == CHECKPOINT:
        return Kind.CHECKPOINT, None
    if path == CURRENT_STATE:
        return Kind.CURRENT_STATE, None
    if path == CHANGELOG:
        return Kind.CHANGELOG, None
    for kind, pattern in _NUMBERED.items():
        m = pattern.match(path)
        if m:
            return kind, int(m.group(1))
    if path.startswith(NOVEL_ASK_DIR) and path.endswith(".json") and "/" not in path[len(NOVEL_ASK_DIR) :]:
        return Kind.ANSWER, None
    if path.startswith("staging/"):
        return Kind.STAGING, None
    if any(p.match(path) for p in _DOCUMENTS):
        return Kind.DOCUMENT, None
    return Kind.EXTRA, None


_STAGED_CHAPTER = re.compile(r"chapter-(\d{3,})")


def staged_chapter(path: str) -> int | None:
    """The chapter a staging key belongs to, read from its name (``chapter-048``), if any."""
    m = _STAGED_CHAPTER.search(path)
    return int(m.group(1)) if m else None


def is_safe_relpath(path: str) -> bool:
    """Whether ``path`` is a relative POSIX path that stays inside its folder.

    Refused: empty names, absolute paths (``/x``, ``\\x``, ``C:x``), ``..`` or ``.`` components, empty
    components, backslashes (a separator on Windows) and NUL. Every stored name a folder export writes and
    every name a folder import keeps passes this check.
    """
    if not path or "\x00" in path or "\\" in path or path.startswith("/"):
        return False
    if len(path) >= 2 and path[1] == ":":
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))
