"""A chapter summary, ``summaries/chapter-NNN-summary.md`` (seed 004 §5.5, §6.6.6, §6.6.7).

The file is the Summarizer's markdown, kept verbatim. Its metadata (storyline, cross-references, leak
risk) rides along as one HTML comment on the file's last line, which markdown viewers do not show and
which needs no front-matter parser::

    <!-- novel:summary {"chapter": 1, "storyline_id": "main_arc", "leak_risk": "low", ...} -->
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from pydantic import Field

from novel_desktop.domain.common import SLUG_RE, SeedModel
from novel_desktop.domain.seed_fields import ChapterNo, Level

_META_LINE = re.compile(r"<!-- novel:summary (\{.*\}) -->\n?\Z")

#: The metadata keys carried in the comment line (everything but ``text``).
META_KEYS: tuple[str, ...] = ("chapter", "storyline_id", "cross_references", "leak_risk")


class CrossReference(NamedTuple):
    """One entry of ``cross_references``: the entity's display name and, when the Summarizer named it, the
    storyline the entity belongs to."""

    storyline_id: str | None
    entity: str

    def to_text(self) -> str:
        """The stored form: ``storyline_id:entity``, or just the entity when its line is unknown."""
        return f"{self.storyline_id}:{self.entity}" if self.storyline_id else self.entity


def cross_reference(value: Any) -> CrossReference | None:
    """Read a cross-reference as the Summarizer writes it: ``{"storyline_id": …, "entity": …}`` (or
    ``name``), ``"storyline_id:entity"``, or a bare entity name (older replies and files). None when empty."""
    if isinstance(value, dict):
        entity = str(value.get("entity") or value.get("name") or "").strip()
        line = str(value.get("storyline_id") or value.get("storyline") or "").strip() or None
        return CrossReference(line, entity) if entity else None
    text = str(value).strip()
    head, sep, rest = text.partition(":")
    if sep and SLUG_RE.match(head.strip()) and rest.strip():
        return CrossReference(head.strip(), rest.strip())
    return CrossReference(None, text) if text else None


class ChapterSummary(SeedModel):
    """The ~300-character summary of a chapter plus what the anti-contamination checks need."""

    chapter: ChapterNo
    storyline_id: str | None = None
    #: Markdown as the Summarizer wrote it, byte for byte.
    text: str
    #: Entities of other storylines mentioned in the chapter (§6.6.7 Layer 3), each ``storyline_id:entity``
    #: or a bare entity name (see :func:`cross_reference`).
    cross_references: list[str] = Field(default_factory=list)
    #: How likely the chapter leaks another storyline's knowledge; "high" outside a convergence breaks LS-005.
    leak_risk: Level = "low"

    def references(self) -> list[CrossReference]:
        """``cross_references`` read into (storyline, entity) pairs."""
        return [ref for ref in map(cross_reference, self.cross_references) if ref is not None]

    @classmethod
    def from_markdown(cls, markdown: str, chapter: int | None = None) -> ChapterSummary:
        """Read a summary file: the text before the metadata line, and the metadata in it.

        A file without the line (written by hand or by the seed plugin) is all text; ``chapter`` must then be
        given (from the file name). When both are present, the line wins.
        """
        match = _META_LINE.search(markdown)
        meta: dict[str, Any] = {}
        text = markdown
        if match:
            meta = json.loads(match.group(1))
            text = markdown[: match.start()]
        if "chapter" not in meta and chapter is not None:
            meta["chapter"] = chapter
        return cls.model_validate({**meta, "text": text})

    def to_markdown(self) -> str:
        """The file content: the text verbatim, then the metadata line."""
        data = self.to_json_dict()
        meta = {key: data[key] for key in data if key != "text"}
        # Defaults that were never set still belong in the file, so that a reader needs no defaults.
        meta.setdefault("storyline_id", self.storyline_id)
        meta.setdefault("cross_references", self.cross_references)
        meta.setdefault("leak_risk", self.leak_risk)
        ordered = {key: meta[key] for key in META_KEYS} | {
            k: v for k, v in meta.items() if k not in META_KEYS
        }
        text = self.text if self.text.endswith("\n") or not self.text else self.text + "\n"
        return f"{text}<!-- novel:summary {json.dumps(ordered, ensure_ascii=False)} -->\n"
