"""The entity index: who and what appears in which chapter, and continuity findings (seed 004 §6.6).

Per chapter the index knows which entities appear; per entity, the chapters it appears in. Findings:

* ``cross_storyline``: an entity tied to another storyline appears in a chapter that is not inside a
  convergence event (LS-005's leak check, done by string search instead of an LLM);
* ``retired_speaking``: a retired character is attributed a line of speech;
* ``near_duplicate_name``: two names differ by one character and are not aliases of each other (林枫/林峰).

:func:`build_index` combines the per-chapter scans (:mod:`novel_desktop.analysis.entities`), so an edit
re-scans one chapter.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat
from operator import itemgetter
from typing import Any

from novel_desktop.analysis.detected_names import DetectedNames
from novel_desktop.analysis.entities import DETECTED_KINDS, ChapterMentions, Entity, EntityRecords

#: A jieba-detected name must occur this often in the novel to enter the index (fewer is noise or a typo,
#: which the near-duplicate check still compares against the records).
MIN_DETECTED_COUNT = 3
#: A detected name this many times rarer than a name one character away from it looks like a typo of it.
TYPO_RATIO = 5
#: A typo of a detected name occurs at most this often (more is a second name, not a slip).
MAX_TYPO_COUNT = 2

ENTITY_KIND_LABELS = {
    "character": "人物",
    "location": "地点",
    "item": "物品",
    "faction": "势力",
    "person": "人名（自动识别）",
    "place": "地名（自动识别）",
    "organization": "组织（自动识别）",
    "other": "专名（自动识别）",
}


# ====================================================================== the index
@dataclass(frozen=True)
class EntityAppearance:
    """Where an entity appears: the chapters in order, its total mentions, first and last chapter."""

    key: str
    name: str
    kind: str
    source: str
    chapters: tuple[int, ...]
    mentions: int

    @property
    def last_chapter(self) -> int | None:
        """The last chapter the entity appears in."""
        return self.chapters[-1] if self.chapters else None


@dataclass(frozen=True)
class ContinuityFinding:
    """Something for the author to check. ``offset`` is a character offset into ``chapter``'s text."""

    kind: str
    chapter: int | None
    entity: str
    message: str
    offset: int | None = None
    other: str | None = None
    storyline: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The finding as a JSON object."""
        return {
            "kind": self.kind,
            "chapter": self.chapter,
            "entity": self.entity,
            "message": self.message,
            "offset": self.offset,
            "other": self.other,
            "storyline": self.storyline,
        }


@dataclass
class EntityIndex:
    """Entities, their appearances per chapter, and continuity findings of a whole novel (or a part)."""

    entities: dict[str, Entity] = field(default_factory=dict)
    appearances: dict[str, EntityAppearance] = field(default_factory=dict)
    #: Chapter → entity key → mentions in that chapter.
    by_chapter: dict[int, dict[str, int]] = field(default_factory=dict)
    findings: list[ContinuityFinding] = field(default_factory=list)


@dataclass(frozen=True)
class ChapterEntityScan:
    """The per-chapter input of :func:`build_index`."""

    number: int
    mentions: ChapterMentions
    proper_nouns: Mapping[str, tuple[str, int, int]]


def _record_names_and_parts(record_names: Iterable[str]) -> set[str]:
    """Every record name and every stretch of two or more 字 inside one.

    The segmenter does not know the novel's names: it may cut 天剑宗 into 天 + 剑宗 or 萧无尘 into 萧 + 无尘.
    The records' names are counted by the name matcher, so a detected piece of one is not a new entity.
    """
    parts: set[str] = set()
    for name in record_names:
        parts.add(name)
        for i in range(len(name) - 1):
            parts.update(name[i:j] for j in range(i + 2, len(name) + 1))
    return parts


def _detected(
    ordered: Sequence[ChapterEntityScan], known_names: set[str]
) -> tuple[dict[str, int], dict[str, str], dict[str, tuple[int, int]]]:
    """Proper nouns over the chapters (in order), records' names and their pieces left out: total count,
    kind and first place (chapter, offset) of each, in the order they first occur.

    A novel has tens of thousands of them, so the work is done with dict operations that loop in C.
    """
    kind: dict[str, str] = {}
    first: dict[str, tuple[int, int]] = {}
    count_lists: list[dict[str, int]] = []
    for scan in reversed(ordered):  # later chapters first, so that the earliest chapter's values stay
        nouns = scan.proper_nouns
        values = list(nouns.values())
        kind.update(zip(nouns, map(itemgetter(0), values), strict=True))
        first.update(
            zip(nouns, zip(repeat(scan.number), map(itemgetter(2), values), strict=False), strict=True)
        )
        count_lists.append(dict(zip(nouns, map(itemgetter(1), values), strict=True)))
    for word in known_names.intersection(first):
        del kind[word], first[word]
    totals = dict.fromkeys(sorted(first, key=first.__getitem__), 0)
    for counts in count_lists:
        for word in counts.keys() & totals.keys():
            totals[word] += counts[word]
    return totals, kind, first


def build_index(
    records: EntityRecords,
    chapters: Sequence[ChapterEntityScan],
    *,
    min_detected: int = MIN_DETECTED_COUNT,
    detected: DetectedNames | None = None,
) -> EntityIndex:
    """Combine per-chapter scans into the index and its findings.

    ``detected`` keeps the detected names' totals from the previous call (an analyzer passes the same one
    each time), so that only the chapters that changed since are combined again.
    """
    index = EntityIndex(entities={e.key: e for e in records.entities})
    record_names = records.name_map()
    known_names = _record_names_and_parts(record_names)
    per_entity: dict[str, list[int]] = defaultdict(list)
    totals: dict[str, int] = defaultdict(int)
    ordered = sorted(chapters, key=lambda c: c.number)
    for scan in ordered:
        counts = dict(scan.mentions.counts)
        index.by_chapter[scan.number] = counts
        for key, count in counts.items():
            per_entity[key].append(scan.number)
            totals[key] += count
    if detected is None:
        detected_totals, detected_kind, detected_first = _detected(ordered, known_names)
    else:
        detected.update(ordered)
        detected_totals, detected_kind, detected_first = detected.totals(known_names)
    # In the order the names first occur, as the appearances list them.
    kept = {word: f"detected:{word}" for word, total in detected_totals.items() if total >= min_detected}
    # The previous pass's entities and appearances are reused where nothing changed (most, after an edit):
    # fewer objects made and dropped per pass, so fewer garbage collections land in it.
    reused = detected.reused if detected is not None else {}
    for word, key in kept.items():
        kind = DETECTED_KINDS[detected_kind[word]]
        entity = reused.get(key)
        if entity is None or entity.kind != kind:
            entity = reused[key] = Entity(key, word, kind, source="jieba", status="")
        index.entities[key] = entity
        totals[key] = detected_totals[word]
    detected_chapters: dict[str, list[int]] = {key: [] for key in kept.values()}
    for scan in ordered:
        nouns = scan.proper_nouns
        for word in kept.keys() & nouns.keys():
            key = kept[word]
            index.by_chapter[scan.number][key] = nouns[word][1]
            detected_chapters[key].append(scan.number)
    per_entity.update(detected_chapters)
    appeared = detected.appeared if detected is not None else {}
    for key, chapter_list in per_entity.items():
        entity = index.entities[key]
        shown = tuple(chapter_list)
        appearance = appeared.get(key)
        if (
            appearance is None
            or appearance.chapters != shown
            or appearance.mentions != totals[key]
            or (appearance.name, appearance.kind, appearance.source)
            != (entity.name, entity.kind, entity.source)
        ):
            appearance = EntityAppearance(key, entity.name, entity.kind, entity.source, shown, totals[key])
            if detected is not None:
                appeared[key] = appearance
        index.appearances[key] = appearance
    index.findings = [
        *_cross_storyline(records, ordered),
        *_retired_speaking(records, ordered),
        *_near_duplicates(
            records,
            {w: (detected_kind[w], t) for w, t in detected_totals.items()},
            detected_first,
            min_detected,
        ),
    ]
    index.findings.sort(key=lambda f: (f.chapter if f.chapter is not None else 0, f.offset or 0, f.kind))
    return index


def _cross_storyline(
    records: EntityRecords, chapters: Sequence[ChapterEntityScan]
) -> list[ContinuityFinding]:
    tied = {e.key: e for e in records.entities if e.storylines}
    findings: list[ContinuityFinding] = []
    if not tied:
        return findings
    for scan in chapters:
        line = records.chapter_storylines.get(scan.number)
        if not line:
            continue
        events = [e for e in records.convergence_events if e.covers(scan.number)]
        for key in scan.mentions.counts:
            entity = tied.get(key)
            if entity is None or line in entity.storylines:
                continue
            for other in entity.storylines:
                if any(
                    not e.involved_storylines or {line, other} <= set(e.involved_storylines) for e in events
                ):
                    continue
                shared = records.shared_characters.get(frozenset((line, other)), set())
                if shared & {entity.key, *entity.names()}:
                    continue
                findings.append(
                    ContinuityFinding(
                        "cross_storyline",
                        scan.number,
                        entity.name,
                        f"第 {scan.number} 章属于故事线「{line}」，却出现了「{other}」线的"
                        f"{ENTITY_KIND_LABELS.get(entity.kind, '实体')}「{entity.name}」，"
                        "且本章不在交汇事件内",
                        scan.mentions.first_offset.get(key),
                        storyline=other,
                    )
                )
                break
    return findings


def _retired_speaking(
    records: EntityRecords, chapters: Sequence[ChapterEntityScan]
) -> list[ContinuityFinding]:
    retired = {e.key: e for e in records.entities if e.kind == "character" and e.status == "retired"}
    findings: list[ContinuityFinding] = []
    for scan in chapters:
        for key, offsets in scan.mentions.speaking.items():
            entity = retired.get(key)
            if entity is None or (entity.retired_since is not None and scan.number < entity.retired_since):
                continue
            findings.append(
                ContinuityFinding(
                    "retired_speaking",
                    scan.number,
                    entity.name,
                    f"已退场的角色「{entity.name}」在第 {scan.number} 章有台词（共 {len(offsets)} 处），"
                    "确认是回忆、转述还是失误",
                    offsets[0],
                )
            )
    return findings


@lru_cache(maxsize=65536)
def _wildcards(name: str) -> tuple[str, ...]:
    # Cached: a re-analysis after one edit sees the same few thousand names again.
    return tuple(f"{name[:i]}\0{name[i + 1 :]}" for i in range(len(name)))


def _near_duplicates(
    records: EntityRecords,
    detected: Mapping[str, tuple[str, int]],
    detected_first: Mapping[str, tuple[int, int]],
    min_detected: int,
) -> list[ContinuityFinding]:
    """Names one character apart: record against record, record against any detected name (a typo may occur
    once), and a rare detected person name against a frequent one. Bucketing by "name with one character
    wildcarded" keeps this linear in the number of names.

    Two detected names can only be a typo pair when the rare one occurs at most ``MAX_TYPO_COUNT`` times and
    the common one at least ``max(min_detected, 2 * TYPO_RATIO)`` times (see :func:`_near_pair`), so only
    those are paired: on a whole classical novel this skips thousands of pairs that could never be reported.
    """
    owner: dict[str, str] = {}
    for entity in records.entities:
        for name in entity.names():
            owner.setdefault(name, entity.key)
    names: dict[str, tuple[str, int | None]] = {
        name: (key, None) for name, key in owner.items() if len(name) >= 2
    }
    common_at = max(min_detected, 2 * TYPO_RATIO)
    record_anchors: dict[str, list[str]] = defaultdict(list)
    for name in names:
        for wildcard in _wildcards(name):
            record_anchors[wildcard].append(name)
    common_anchors: dict[str, list[str]] = defaultdict(list)
    for word, (tag, total) in detected.items():
        if tag == "nr" and total >= common_at and len(word) >= 2:
            for wildcard in _wildcards(word):
                common_anchors[wildcard].append(word)
    for word, (_, total) in detected.items():
        names.setdefault(word, (f"detected:{word}", total))
    seen: set[tuple[str, str]] = set()
    findings: list[ContinuityFinding] = []
    #: Rare detected person name → the frequent ones it could be a slip of.
    typo_like: dict[str, list[str]] = {}

    def pair(anchor: str, name: str) -> ContinuityFinding | None:
        key = (anchor, name) if anchor < name else (name, anchor)
        if anchor == name or key in seen or names[anchor][0] == names[name][0]:
            return None
        seen.add(key)
        return _near_pair(anchor, name, names, detected_first, min_detected)

    for name in [n for n in names if len(n) >= 2]:
        count = names[name][1]
        rare_person = count is not None and count <= MAX_TYPO_COUNT and detected[name][0] == "nr"
        if not rare_person and not record_anchors:
            continue  # nothing to pair it with (most names of a novel without records)
        for wildcard in _wildcards(name):
            for anchor in record_anchors.get(wildcard, ()):
                finding = pair(anchor, name)
                if finding is not None:
                    findings.append(finding)
            needed = count * TYPO_RATIO if rare_person and count is not None else 0
            anchors = common_anchors.get(wildcard) if needed else None
            if not anchors:
                continue
            # Two detected names share one wildcard at most and are never a record's, so no pair repeats;
            # the frequent anchor is common enough by construction: only the ratio decides (_near_pair's
            # rule), and a finding is built only for a name with one such anchor (most have several).
            for anchor in anchors:
                if needed <= (names[anchor][1] or 0):
                    typo_like.setdefault(name, []).append(anchor)
    # A rare word one character away from several frequent names is a word of its own, not a slip of one.
    for name, group in typo_like.items():
        if len(group) == 1:
            finding = _near_pair(group[0], name, names, detected_first, min_detected)
            if finding is not None:
                findings.append(finding)
    return findings


def _near_pair(
    a: str,
    b: str,
    names: Mapping[str, tuple[str, int | None]],
    detected_first: Mapping[str, tuple[int, int]],
    min_detected: int,
) -> ContinuityFinding | None:
    count_a, count_b = names[a][1], names[b][1]
    if count_a is None and count_b is None:
        # Two records: the author named them; still worth a look because readers mix them up.
        message = f"「{a}」与「{b}」只差一个字，又不是同一角色的别名，读者容易混淆"
        return ContinuityFinding("near_duplicate_name", None, a, message, other=b)
    if count_a is None or count_b is None:
        record, text_name = (a, b) if count_a is None else (b, a)
    else:
        # Two detected names: only a rare variant (a slip or two) of a frequent name looks like a typo.
        rare, common = min(count_a, count_b), max(count_a, count_b)
        if rare > MAX_TYPO_COUNT or rare * TYPO_RATIO > common or common < max(min_detected, 2 * TYPO_RATIO):
            return None
        record, text_name = (a, b) if count_a > count_b else (b, a)
    chapter, offset = detected_first.get(text_name, (None, None))
    where = f"第 {chapter} 章起" if chapter is not None else "正文中"
    message = f"{where}出现的「{text_name}」与「{record}」只差一个字，是否笔误？"
    return ContinuityFinding("near_duplicate_name", chapter, text_name, message, offset, other=record)
