"""The analysis side of the open novel as the views need it: AI-phrase underlines and AI-phrase density.

One :class:`AnalysisController` per :class:`ProjectController` (``project.analysis``) owns the one analysis
cache of the GUI (``user_data_dir()/analysis-cache.sqlite``, opened on first use, flushed after each scan and
closed with the novel). Views never open a cache or import ``novel_desktop.analysis`` themselves.

What runs here is per chapter and cheap (a regular-expression scan, milliseconds for a chapter; a cached
chapter costs a hash and a look-up); the quality panel calls it a slice of chapters per event-loop turn.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from novel_desktop.analysis.ai_phrases import PhraseEntry, PhraseHit, find_hits, phrases_for_novel
from novel_desktop.analysis.cache import AnalysisCache, text_hash
from novel_desktop.domain.text import count_chars

if TYPE_CHECKING:
    from novel_desktop.controllers.project_controller import ProjectController

# What makes an expression's match depend on where the scanned text starts or ends.
_EDGE_SENSITIVE = re.compile(r"[\^$]|\\[bBAZ]|\(\?<?[=!]")

__all__ = ["AiPhraseCounter", "AnalysisController", "PhraseHit", "PhraseMatcher"]


class PhraseMatcher:
    """Finds the AI phrases of one phrase list in a text (the editor underlines them paragraph-wise)."""

    def __init__(self, phrases: Sequence[PhraseEntry] = ()) -> None:
        self._phrases = list(phrases)

    def hits(self, text: str) -> list[PhraseHit]:
        return find_hits(text, self._phrases) if self._phrases and text else []

    def narrowed(self, text: str) -> PhraseMatcher:
        """A matcher with only the phrases that can match inside ``text``: those found in it, and those
        whose expression reads the edges of what it scans (an anchor, a word boundary, a lookaround), which
        a part of ``text`` may match though the whole does not. Any part of ``text`` (a paragraph) gets
        the same hits from it as from this matcher, from one scan of the whole instead of one scan of the
        whole list per paragraph (a chapter laid out in the editor: ~15 ms less on the event loop)."""
        if not self._phrases or not text:
            return self
        found = {hit.pattern for hit in find_hits(text, self._phrases)}
        return PhraseMatcher(
            [
                p
                for p in self._phrases
                if p.pattern in found or (p.regex and _EDGE_SENSITIVE.search(p.pattern))
            ]
        )

    def __len__(self) -> int:
        return len(self._phrases)


class AiPhraseCounter:
    """AI-phrase hits per 1,000 字 of a text, cached by text hash and phrase list.

    Only the regular-expression scan is needed, so this does not go through ``NovelAnalyzer`` (which also
    segments every chapter with jieba, seconds for a long novel); it shares its cache, with its own keys, so
    reopening a novel reads the counts instead of rescanning.
    """

    def __init__(self, phrases: Sequence[PhraseEntry], cache: AnalysisCache | None = None) -> None:
        self.phrases = list(phrases)
        raw = "\n".join(f"{p.regex}:{p.pattern}" for p in self.phrases)
        self._fingerprint = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]
        self.cache = cache if cache is not None else AnalysisCache()

    def per_1k(self, text: str) -> float:
        key = f"ai-hits:{self._fingerprint}:{text_hash(text)}"
        counts = self.cache.get(key, lambda data: (int(data[0]), int(data[1])))
        if counts is None:
            counts = (len(find_hits(text, self.phrases)), count_chars(text))
            self.cache.put(key, counts, list)
        hits, chars = counts
        return hits * 1000.0 / chars if chars else 0.0


class AnalysisController(QObject):
    """AI-phrase matching and density for the open novel, over the one analysis cache."""

    def __init__(self, project: ProjectController) -> None:
        super().__init__(project)
        self.project = project
        self._cache: AnalysisCache | None = None
        project.project_closed.connect(self.close)

    @property
    def cache(self) -> AnalysisCache:
        """The analysis cache (memory only when its file cannot be opened)."""
        if self._cache is None:
            self._cache = AnalysisCache.default()
        return self._cache

    def novel_phrases(self) -> list[PhraseEntry]:
        """The phrase list in force for this novel (the shipped list when its blacklist does not parse)."""
        if not self.project.is_open:
            return phrases_for_novel(None)
        try:
            return phrases_for_novel(self.project.document_json("ai-blacklist.json"))
        except ValueError:
            return phrases_for_novel(None)

    def phrase_matcher(self) -> PhraseMatcher:
        """A matcher for the editor's underlines, with the novel's phrase list."""
        return PhraseMatcher(self.project.ai_phrases())

    def ai_counter(self) -> AiPhraseCounter:
        """A density counter for the phrase list in force now, over the controller's cache."""
        return AiPhraseCounter(self.novel_phrases(), self.cache)

    def ai_density(self, counter: AiPhraseCounter, chapter: int) -> float | None:
        """AI-phrase hits per 1,000 字 of ``chapter``'s text (None when it has no text)."""
        text = self.project.chapter_text(chapter)
        return counter.per_1k(text) if text else None

    def flush(self) -> None:
        """Write the cache's pending results to disk (after a scan)."""
        if self._cache is not None:
            self._cache.flush()

    def close(self) -> None:
        """Flush and close the cache (the novel closed); the next use opens it again."""
        cache, self._cache = self._cache, None
        if cache is not None:
            cache.flush()
            cache.close()
