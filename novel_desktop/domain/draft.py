"""The staged chapter as the author reads it after 手动改 (built by :mod:`novel_desktop.pipeline.draft`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from novel_desktop.domain.text import count_chars


@dataclass(frozen=True)
class StagedDraft:
    """The chapter in staging and what the judge said about it."""

    chapter: int
    text: str
    #: The checkpoint's pipeline stage (``judged`` when the gate stopped for the author).
    stage: str | None
    #: The author chose 手动改 on exactly this text (a run stops until it is replaced or committed).
    awaiting_author: bool
    #: The text is the author's replacement (not yet re-judged when ``judged_text_changed``).
    author_edited: bool
    #: The judge's verdict is about an earlier text (the author replaced it since; it is re-judged next run).
    judged_text_changed: bool = False
    score: float | None = None
    issues: list[str] = field(default_factory=list)
    required_fixes: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    revisions: int = 0

    @property
    def chars(self) -> int:
        return count_chars(self.text)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "chapter": self.chapter,
            "stage": self.stage,
            "awaiting_author": self.awaiting_author,
            "author_edited": self.author_edited,
            "judged_text_changed": self.judged_text_changed,
            "score": self.score,
            "scores": self.scores,
            "revisions": self.revisions,
            "chars": self.chars,
            "issues": self.issues,
            "required_fixes": self.required_fixes,
            "violations": self.violations,
            "text": self.text,
        }
