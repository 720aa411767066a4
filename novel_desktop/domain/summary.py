"""A chapter summary, ``summaries/chapter-NNN-summary.md`` (seed 004 §5.5, §6.6.6, §6.6.7).

The file is the Summarizer's markdown, kept verbatim. Its metadata (storyline, cross-references, leak
risk) rides along as one HTML comment on the file's last line, which markdown viewers do not show and
which needs no front-matter parser::

    <!-- novel:summary {"chapter": 1, "storyline_id": "main_arc", "leak_risk": "low", ...} -->
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import Field

from novel_desktop.domain.common import SeedModel
from novel_desktop.domain.seed_fields import ChapterNo, Level

_META_LINE = re.compile(r"<!-- novel:summary (\{.*\}) -->\n?\Z")

#: The metadata keys carried in the comment line (everything but ``text``).
META_KEYS: tuple[str, ...] = ("chapter", "storyline_id", "cross_references", "leak_risk")


class ChapterSummary(SeedModel):
    """The ~300-character summary of a chapter plus what the anti-contamination checks need."""

    chapter: ChapterNo
    storyline_id: str | None = None
    #: Markdown as the Summarizer wrote it, byte for byte.
    text: str
    #: Entities of other storylines mentioned in the chapter (§6.6.7 Layer 3).
    cross_references: list[str] = Field(default_factory=list)
    #: How likely the chapter leaks another storyline's knowledge; "high" outside a convergence breaks LS-005.
    leak_risk: Level = "low"

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
