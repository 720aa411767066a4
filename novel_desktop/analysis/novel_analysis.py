"""Whole-novel analysis, incremental by chapter: AI-phrase hits, style metrics and the entity index.

Each chapter's results are cached by the hash of its text, in two layers: what depends on the text alone
(jieba segmentation, style metrics, proper-noun candidates; the expensive part) and what also depends on the
novel's phrase list and records (phrase hits, record mentions; regular-expression scans). Re-analysing a
500-chapter novel after one edit recomputes that one chapter and re-aggregates the rest from the cache;
editing the blacklist or a character re-runs only the cheap scans.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from novel_desktop.analysis import segment
from novel_desktop.analysis.ai_phrases import PhraseEntry, PhraseHit, find_hits, phrases_for_novel
from novel_desktop.analysis.cache import AnalysisCache, shared_cache, text_hash
from novel_desktop.analysis.continuity import ChapterEntityScan, EntityIndex, build_index
from novel_desktop.analysis.detected_names import DetectedNames
from novel_desktop.analysis.entities import (
    ChapterMentions,
    EntityRecords,
    NameMatcher,
    proper_noun_candidates,
)
from novel_desktop.analysis.style_metrics import (
    RepetitionFinding,
    StyleMetrics,
    compute_metrics,
)

if TYPE_CHECKING:
    from novel_desktop.storage.store import NovelStore

#: Bump when what is computed per chapter changes, so old cache rows are not reused.
ANALYSIS_VERSION = 1


@dataclass(frozen=True)
class ChapterFacts:
    """What depends on a chapter's text alone: its style metrics and proper-noun candidates."""

    metrics: StyleMetrics
    proper_nouns: dict[str, tuple[str, int, int]]

    def to_json(self) -> dict[str, Any]:
        """The facts as a JSON object."""
        return {
            "metrics": self.metrics.to_json(),
            "proper_nouns": {k: list(v) for k, v in self.proper_nouns.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChapterFacts:
        """The facts :meth:`to_json` wrote."""
        nouns = {str(k): (str(v[0]), int(v[1]), int(v[2])) for k, v in data["proper_nouns"].items()}
        return cls(StyleMetrics.from_json(data["metrics"]), nouns)


def compute_facts(text: str) -> ChapterFacts:
    """Segment ``text`` once and derive its metrics and proper-noun candidates."""
    tokens = segment.tokenize(text)
    return ChapterFacts(compute_metrics(text, tokens), proper_noun_candidates(tokens))


@dataclass(frozen=True)
class ChapterScan:
    """What depends on a chapter's text and the novel's phrase list and records."""

    hits: tuple[PhraseHit, ...]
    mentions: ChapterMentions

    def to_json(self) -> dict[str, Any]:
        """The scan as a JSON object."""
        return {"hits": [h.to_json() for h in self.hits], "mentions": self.mentions.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChapterScan:
        """The scan :meth:`to_json` wrote."""
        return cls(
            tuple(PhraseHit.from_json(h) for h in data["hits"]), ChapterMentions.from_json(data["mentions"])
        )


@dataclass(frozen=True)
class ChapterAnalysis:
    """The analysis of one chapter. Offsets (hits, repetitions, mentions) are into that chapter's text."""

    number: int
    text_hash: str
    metrics: StyleMetrics
    hits: tuple[PhraseHit, ...]
    mentions: ChapterMentions
    proper_nouns: Mapping[str, tuple[str, int, int]]

    @property
    def chars(self) -> int:
        """字数 of the chapter."""
        return self.metrics.chars

    @property
    def hits_per_1k(self) -> float:
        """AI-phrase hits per 1,000 字."""
        return len(self.hits) * 1000.0 / self.chars if self.chars else 0.0

    @property
    def repetitions(self) -> tuple[RepetitionFinding, ...]:
        """Stretches of repeated sentence shapes."""
        return self.metrics.repetitions


@dataclass
class NovelAnalysis:
    """The analysis of a whole novel: per chapter, in total, and its entity index."""

    chapters: list[ChapterAnalysis] = field(default_factory=list)
    metrics: StyleMetrics = field(default_factory=StyleMetrics)
    entities: EntityIndex = field(default_factory=EntityIndex)
    #: How many chapters this pass had to compute from scratch (the rest came from the cache).
    recomputed: int = 0

    @property
    def total_chars(self) -> int:
        """字数 of all chapters."""
        return self.metrics.chars

    @property
    def total_hits(self) -> int:
        """AI-phrase hits in all chapters."""
        return sum(len(c.hits) for c in self.chapters)

    @property
    def hits_per_1k(self) -> float:
        """AI-phrase hits per 1,000 字 over the whole novel."""
        return self.total_hits * 1000.0 / self.total_chars if self.total_chars else 0.0

    def chapter(self, number: int) -> ChapterAnalysis | None:
        """The analysis of chapter ``number``."""
        return next((c for c in self.chapters if c.number == number), None)

    def hits_by_category(self) -> dict[str, int]:
        """Hits per category over the whole novel, most first."""
        counts: dict[str, int] = {}
        for chapter in self.chapters:
            for hit in chapter.hits:
                counts[hit.category] = counts.get(hit.category, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def summary(self) -> dict[str, Any]:
        """Figures for ``novel status --json`` and the dashboard."""
        return {
            "chapters": len(self.chapters),
            "chars": self.total_chars,
            "ai_hits": self.total_hits,
            "ai_hits_per_1k": round(self.hits_per_1k, 3),
            "ai_hits_by_category": self.hits_by_category(),
            "metrics": self.metrics.summary(),
            "repetitions": sum(len(c.repetitions) for c in self.chapters),
            "entities": len(self.entities.appearances),
            "findings": [f.to_json() for f in self.entities.findings],
            "per_chapter": [
                {"number": c.number, "chars": c.chars, "ai_hits_per_1k": round(c.hits_per_1k, 3)}
                for c in self.chapters
            ],
        }


def _fingerprint(phrases: Sequence[PhraseEntry]) -> str:
    raw = json.dumps([[p.pattern, p.category, p.suggestion, p.regex] for p in phrases], ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


class NovelAnalyzer:
    """Analyses chapters with a phrase list and the novel's records, reusing cached per-chapter results.

    ``facts_computed`` and ``scans_computed`` count the chapters actually computed (not read from the cache),
    so callers and tests can see that an edit touched one chapter.
    """

    def __init__(
        self,
        phrases: Sequence[PhraseEntry] | None = None,
        records: EntityRecords | None = None,
        cache: AnalysisCache | None = None,
        *,
        min_detected: int | None = None,
    ) -> None:
        self.cache = cache if cache is not None else AnalysisCache()
        self.min_detected = min_detected
        self.facts_computed = 0
        self.scans_computed = 0
        self._detected = DetectedNames()
        self.set_phrases(phrases if phrases is not None else phrases_for_novel(None))
        self.set_records(records if records is not None else EntityRecords())

    def set_phrases(self, phrases: Sequence[PhraseEntry]) -> None:
        """Use another phrase list (the author edited the novel's blacklist)."""
        self.phrases = list(phrases)
        self._phrases_fp = _fingerprint(self.phrases)

    def set_records(self, records: EntityRecords) -> None:
        """Use other records (characters, storylines or the state changed)."""
        self.records = records
        self._matcher = NameMatcher(records)
        self._records_fp = records.fingerprint()

    def _facts(self, digest: str, text: str) -> ChapterFacts:
        key = f"facts:{ANALYSIS_VERSION}:{digest}"
        facts = self.cache.get(key, ChapterFacts.from_json)
        if facts is None:
            facts = compute_facts(text)
            self.facts_computed += 1
            self.cache.put(key, facts, ChapterFacts.to_json)
        return facts

    def _all_facts(self, chapters: Sequence[tuple[int, str, str]]) -> dict[str, ChapterFacts]:
        """The facts of ``(number, text, digest)`` chapters by digest: from the cache, the rest computed.

        One thread on purpose: rjieba (0.2.2) lets go of the GIL while it segments (a thread spinning beside
        ``cut`` keeps running), but that is a fifth of the work and the rest is Python, so more threads would
        run little at once; they would only make the window's event loop wait longer.
        """
        ready: dict[str, ChapterFacts] = {}
        missing: dict[str, str] = {}
        for _, text, digest in chapters:
            if digest in ready or digest in missing:
                continue
            facts = self.cache.get(f"facts:{ANALYSIS_VERSION}:{digest}", ChapterFacts.from_json)
            if facts is None:
                missing[digest] = text
            else:
                ready[digest] = facts
        computed = {digest: compute_facts(text) for digest, text in missing.items()}
        for digest, facts in computed.items():
            self.cache.put(f"facts:{ANALYSIS_VERSION}:{digest}", facts, ChapterFacts.to_json)
        self.facts_computed += len(computed)
        ready.update(computed)
        return ready

    def _scan(self, digest: str, text: str) -> ChapterScan:
        key = f"scan:{ANALYSIS_VERSION}:{digest}:{self._phrases_fp}:{self._records_fp}"
        scan = self.cache.get(key, ChapterScan.from_json)
        if scan is None:
            scan = ChapterScan(tuple(find_hits(text, self.phrases)), self._matcher.scan(text))
            self.scans_computed += 1
            self.cache.put(key, scan, ChapterScan.to_json)
        return scan

    def analyze_chapter(self, number: int, text: str) -> ChapterAnalysis:
        """The analysis of one chapter (from the cache when its text was analysed before)."""
        digest = text_hash(text)
        return self._chapter(number, text, digest, self._facts(digest, text))

    def _chapter(self, number: int, text: str, digest: str, facts: ChapterFacts) -> ChapterAnalysis:
        scan = self._scan(digest, text)
        return ChapterAnalysis(number, digest, facts.metrics, scan.hits, scan.mentions, facts.proper_nouns)

    def analyze(self, chapters: Iterable[tuple[int, str]]) -> NovelAnalysis:
        """Analyse ``(number, text)`` pairs and aggregate them; cached chapters cost a hash and a look-up."""
        before = self.facts_computed
        items = [(n, t, text_hash(t)) for n, t in chapters]
        facts = self._all_facts(items)
        results = sorted((self._chapter(n, t, d, facts[d]) for n, t, d in items), key=lambda c: c.number)
        self.cache.flush()
        scans = [ChapterEntityScan(c.number, c.mentions, c.proper_nouns) for c in results]
        kwargs = {} if self.min_detected is None else {"min_detected": self.min_detected}
        return NovelAnalysis(
            chapters=results,
            metrics=StyleMetrics.combine(c.metrics for c in results),
            entities=build_index(self.records, scans, detected=self._detected, **kwargs),
            recomputed=self.facts_computed - before,
        )


# ====================================================================== reading a novel
def chapters_from_store(store: NovelStore) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of every chapter that has text, in order."""
    for info in store.list_chapters():
        text = store.chapter_text(info.number)
        if text is not None:
            yield info.number, text


def analyzer_for_store(store: NovelStore, cache: AnalysisCache | None = None) -> NovelAnalyzer:
    """An analyzer with the novel's own phrase list (``ai-blacklist.json``) and records, over ``cache`` (by
    default the process's shared on-disk cache, :func:`~novel_desktop.analysis.cache.shared_cache`)."""
    raw = store.document("ai-blacklist.json")
    blacklist: Any = None
    if raw is not None:
        try:
            blacklist = json.loads(raw)
        except ValueError:
            blacklist = None
    try:
        phrases = phrases_for_novel(blacklist)
    except ValueError:
        # A hand-edited blacklist that does not parse must not stop the analysis: use the shipped list.
        phrases = phrases_for_novel(None)
    return NovelAnalyzer(
        phrases, EntityRecords.from_store(store), cache if cache is not None else shared_cache()
    )


def analyze_store(store: NovelStore, analyzer: NovelAnalyzer | None = None) -> NovelAnalysis:
    """Analyse every chapter of an open novel; chapters analysed before (by their text) come from the shared
    cache, so only new or edited chapters are computed."""
    if analyzer is None:
        analyzer = analyzer_for_store(store)
    else:
        analyzer.set_records(EntityRecords.from_store(store))
    return analyzer.analyze(chapters_from_store(store))
