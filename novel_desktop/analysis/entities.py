"""The entity index: who and what appears in which chapter, and continuity findings (seed 004 §6.6).

Entities come from the novel's own records (characters with aliases and status, places, items and factions
named in the state, storyline POV characters and factions) plus proper nouns jieba finds in the text. Per
chapter the index knows which entities appear; per entity, its first and last chapter. Findings:

* ``cross_storyline``: an entity tied to another storyline appears in a chapter that is not inside a
  convergence event (LS-005's leak check, done by string search instead of an LLM);
* ``retired_speaking``: a retired character is attributed a line of speech;
* ``near_duplicate_name``: two names differ by one character and are not aliases of each other (林枫/林峰).

Scanning a chapter (:func:`scan_chapter`) depends only on its text and the names; building the index
(:func:`build_index`) combines the per-chapter scans, so an edit re-scans one chapter.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from novel_desktop.analysis import segment
from novel_desktop.domain.characters import Character
from novel_desktop.domain.storylines import ConvergenceEvent, StorylineSchedule, StorylinesFile

if TYPE_CHECKING:
    from novel_desktop.storage.store import NovelStore

#: A jieba-detected name must occur this often in the novel to enter the index (fewer is noise or a typo,
#: which the near-duplicate check still compares against the records).
MIN_DETECTED_COUNT = 3
#: A detected name this many times rarer than a name one character away from it looks like a typo of it.
TYPO_RATIO = 5
#: A typo of a detected name occurs at most this often (more is a second name, not a slip).
MAX_TYPO_COUNT = 2

_SURNAMES = set(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢"
    "姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
    "楚萧柳燕洛凌墨"
    "張劉陳楊黃趙吳孫羅鄭謝韓馮鄧蕭葉蘇呂蔣盧鍾譚陸閆賈顧龔錢嚴"
)
_COMPOUND_SURNAMES = {
    "慕容",
    "欧阳",
    "歐陽",
    "上官",
    "司马",
    "司馬",
    "诸葛",
    "諸葛",
    "东方",
    "東方",
    "南宫",
    "南宮",
    "独孤",
    "獨孤",
    "令狐",
}
_PLACE_SUFFIXES = set("山峰岭嶺谷河江湖海岛島城镇鎮村州府县縣国國洲宫宮殿寺庙廟观觀洞关關崖渊淵原")
_ORG_SUFFIXES = ("宗", "门", "門", "派", "帮", "幫", "会", "會", "教", "盟", "阁", "閣", "堂", "家族")
_HAN_WORD_RE = re.compile(r"^[\u3400-\u9fff]{2,4}$")
_HAN_RUN_RE = re.compile(r"^[\u3400-\u9fff]+$")

#: After a name: an optional short stretch, then a verb of speech ("林枫冷笑道", "陈老低声说").
_SPEECH_AFTER_RE = re.compile(
    r"[^，。！？\n“”「」]{0,6}?(?:(?<![知味霸难難厚公])道|(?<![听聽据據小传傳])说|說|问|問|答|喊|叫|吼|嚷|骂|罵|开口|開口)"
    r"|[：:]\s*[“「\"]"
)
_VERB_SOON_RE = re.compile(r".{0,4}?(说|道|說|问|問)")
#: Before a name: a closing quote just before it ("……”陈老说。").
_QUOTE_BEFORE_RE = re.compile(r"[”」\"]\s*$")

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
_DETECTED_KINDS = {"nr": "person", "ns": "place", "nt": "organization", "nz": "other"}


# ====================================================================== records
@dataclass(frozen=True)
class Entity:
    """A named thing of the novel. ``key`` is the record's slug (or ``kind:name``); ``source`` is "record" or
    "jieba"; ``storylines`` are the storylines it is tied to (POV characters, affiliated factions)."""

    key: str
    name: str
    kind: str
    aliases: tuple[str, ...] = ()
    source: str = "record"
    status: str = "active"
    storylines: tuple[str, ...] = ()
    #: The chapter from which a retired character should be silent, when the record says so.
    retired_since: int | None = None

    def names(self) -> tuple[str, ...]:
        """The name and every alias."""
        return (self.name, *self.aliases)


@dataclass
class EntityRecords:
    """What the novel's records say about its entities and storylines."""

    entities: list[Entity] = field(default_factory=list)
    #: Chapter number → the storyline it tells.
    chapter_storylines: dict[int, str] = field(default_factory=dict)
    convergence_events: list[ConvergenceEvent] = field(default_factory=list)
    #: Pairs of storylines → names of the characters their relationship declares shared.
    shared_characters: dict[frozenset[str], set[str]] = field(default_factory=dict)

    def name_map(self) -> dict[str, str]:
        """Every name and alias → the key of its entity (the first record wins a name two records share)."""
        mapping: dict[str, str] = {}
        for entity in self.entities:
            for name in entity.names():
                if name and name not in mapping:
                    mapping[name] = entity.key
        return mapping

    def fingerprint(self) -> str:
        """A hash of what a chapter scan depends on (names and which entities are characters)."""
        payload = sorted((name, key) for name, key in self.name_map().items())
        chars = sorted(e.key for e in self.entities if e.kind == "character")
        raw = json.dumps([payload, chars], ensure_ascii=False)
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]

    def get(self, key: str) -> Entity | None:
        """The entity with ``key``."""
        return next((e for e in self.entities if e.key == key), None)

    @classmethod
    def build(
        cls,
        characters: Iterable[Character] = (),
        state: Mapping[str, Any] | None = None,
        storylines: StorylinesFile | None = None,
        schedules: Iterable[StorylineSchedule] = (),
        chapter_storylines: Mapping[int, str] | None = None,
    ) -> EntityRecords:
        """Records from the novel's parsed documents (any of them may be missing)."""
        entities: dict[str, Entity] = {}
        by_name: dict[str, str] = {}

        def add(entity: Entity) -> None:
            if entity.key in entities:
                return
            entities[entity.key] = entity
            for name in entity.names():
                by_name.setdefault(name, entity.key)

        for ch in characters:
            extra = ch.model_extra or {}
            since = next(
                (extra[k] for k in ("retired_since", "retired_chapter", "retired_at_chapter") if k in extra),
                None,
            )
            add(
                Entity(
                    ch.id,
                    ch.name,
                    "character",
                    tuple(a for a in ch.aliases if a and a != ch.name),
                    status=ch.status,
                    retired_since=int(since) if isinstance(since, int) else None,
                )
            )
        for kind, section in (("location", "locations"), ("item", "items"), ("faction", "factions")):
            for slug, value in ((state or {}).get(section) or {}).items():
                if isinstance(value, dict) and isinstance(value.get("name"), str) and value["name"].strip():
                    aliases = tuple(a for a in value.get("aliases", []) if isinstance(a, str) and a)
                    add(Entity(str(slug), value["name"].strip(), kind, aliases))
        for value in ((state or {}).get("characters") or {}).values():
            if not isinstance(value, dict):
                continue
            where = value.get("location")
            if isinstance(where, str) and where.strip() and where.strip() not in by_name:
                add(Entity(f"location:{where.strip()}", where.strip(), "location"))
            for item in value.get("inventory") or []:
                if isinstance(item, str) and item.strip() and item.strip() not in by_name:
                    add(Entity(f"item:{item.strip()}", item.strip(), "item"))
        ties: dict[str, set[str]] = defaultdict(set)
        for line in storylines.storylines if storylines else []:
            for name in line.pov_characters:
                key = name if name in entities else by_name.get(name)
                if key is None:
                    key = f"character:{name}"
                    add(Entity(key, name, "character"))
                ties[key].add(line.id)
            for name in line.affiliated_factions:
                key = name if name in entities else by_name.get(name)
                if key is None:
                    key = f"faction:{name}"
                    add(Entity(key, name, "faction"))
                ties[key].add(line.id)
        shared: dict[frozenset[str], set[str]] = {}
        for rel in storylines.relationships if storylines else []:
            shared.setdefault(frozenset((rel.from_, rel.to)), set()).update(rel.bridges.shared_characters)
        final = [
            Entity(
                e.key,
                e.name,
                e.kind,
                e.aliases,
                e.source,
                e.status,
                tuple(sorted(ties[e.key])),
                e.retired_since,
            )
            if ties.get(e.key)
            else e
            for e in entities.values()
        ]
        events = [event for schedule in schedules for event in schedule.convergence_events]
        return cls(final, dict(chapter_storylines or {}), events, shared)

    @classmethod
    def from_store(cls, store: NovelStore) -> EntityRecords:
        """Records read from an open novel; documents that do not parse are skipped (checks run anyway)."""
        characters: list[Character] = []
        for path in store.list_documents("characters/"):
            parts = PurePosixPath(path).parts
            if len(parts) != 3 or parts[1] not in ("active", "retired") or not path.endswith(".json"):
                continue
            data = _json(store.document(path))
            if not isinstance(data, dict):
                continue
            data.setdefault("id", PurePosixPath(path).stem)
            if parts[1] == "retired":
                data["status"] = "retired"
            try:
                characters.append(Character.model_validate(data))
            except ValueError:
                continue
        storylines = None
        raw = _json(store.document("storylines/storylines.json"))
        if raw is not None:
            try:
                storylines = StorylinesFile.model_validate(raw)
            except ValueError:
                storylines = None
        schedules: list[StorylineSchedule] = []
        for path in store.list_documents("volumes/"):
            if path.endswith("/storyline-schedule.json"):
                try:
                    schedules.append(StorylineSchedule.model_validate(_json(store.document(path))))
                except ValueError:
                    continue
        chapter_lines = {c.number: c.storyline_id for c in store.list_chapters() if c.storyline_id}
        return cls.build(characters, store.current_state(), storylines, schedules, chapter_lines)


def _json(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


# ====================================================================== per-chapter scans
@dataclass(frozen=True)
class ChapterMentions:
    """Record entities found in one chapter: mention counts, first offsets, and offsets of speech
    attributed to each character."""

    counts: dict[str, int] = field(default_factory=dict)
    first_offset: dict[str, int] = field(default_factory=dict)
    speaking: dict[str, list[int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The scan as a JSON object."""
        return {"counts": self.counts, "first_offset": self.first_offset, "speaking": self.speaking}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChapterMentions:
        """The scan :meth:`to_json` wrote."""
        return cls(
            {str(k): int(v) for k, v in data.get("counts", {}).items()},
            {str(k): int(v) for k, v in data.get("first_offset", {}).items()},
            {str(k): [int(x) for x in v] for k, v in data.get("speaking", {}).items()},
        )


class NameMatcher:
    """Finds every record name in a text with one regular expression (longest name first)."""

    def __init__(self, records: EntityRecords) -> None:
        self.names = records.name_map()
        self.characters = {e.key for e in records.entities if e.kind == "character"}
        ordered = sorted(self.names, key=lambda n: (-len(n), n))
        self.pattern = re.compile("|".join(re.escape(n) for n in ordered)) if ordered else None

    def scan(self, text: str) -> ChapterMentions:
        """The mentions of record entities in ``text``."""
        counts: dict[str, int] = {}
        first: dict[str, int] = {}
        speaking: dict[str, list[int]] = {}
        if self.pattern is None:
            return ChapterMentions()
        for m in self.pattern.finditer(text):
            key = self.names[m.group()]
            counts[key] = counts.get(key, 0) + 1
            first.setdefault(key, m.start())
            if key in self.characters and _is_speaker(text, m.start(), m.end()):
                speaking.setdefault(key, []).append(m.start())
        return ChapterMentions(counts, first, speaking)


def _is_speaker(text: str, start: int, end: int) -> bool:
    if _SPEECH_AFTER_RE.match(text, end):
        return True
    before = text[max(0, start - 3) : start]
    return bool(_QUOTE_BEFORE_RE.search(before)) and bool(
        re.match(r".{0,4}?(说|道|說|问|問)", text[end : end + 6])
    )


def scan_chapter(text: str, records: EntityRecords) -> ChapterMentions:
    """The record entities ``text`` mentions (see :class:`NameMatcher` to reuse the compiled names)."""
    return NameMatcher(records).scan(text)


def proper_noun_candidates(tokens: Sequence[segment.Token]) -> dict[str, tuple[str, int, int]]:
    """Proper nouns jieba finds in a chapter: word → (kind tag "nr"/"ns"/"nt"/"nz", count, first offset).

    Dictionary words keep their tag; words jieba built by HMM (not in its dictionary, so likely invented
    names) count as a person when they start with a common surname, a place or an organisation by their last
    character, and are skipped otherwise.
    """
    found: dict[str, tuple[str, int, int]] = {}
    for i, tok in enumerate(tokens):
        word = tok.word
        if len(word) < 2:
            name = _surname_plus_given(tok, tokens[i + 1] if i + 1 < len(tokens) else None)
            if name:
                prev = found.get(name)
                found[name] = ("nr", 1, tok.start) if prev is None else (prev[0], prev[1] + 1, prev[2])
            continue
        tag = tok.tag
        if tag:
            kind = tag[:2] if tag[:2] in _DETECTED_KINDS else ""
        elif _HAN_WORD_RE.match(word):
            kind = _guess_kind(word)
        else:
            kind = ""
        if not kind:
            continue
        prev = found.get(word)
        found[word] = (kind, 1, tok.start) if prev is None else (prev[0], prev[1] + 1, prev[2])
    return found


def _surname_plus_given(tok: segment.Token, nxt: segment.Token | None) -> str:
    # jieba splits an invented name whose given name is a dictionary word ("萧" + "无尘"); join them back.
    if nxt is None or tok.word not in _SURNAMES or nxt.start != tok.end or not tok.tag.startswith("nr"):
        return ""
    given = nxt.word
    if not 1 <= len(given) <= 2 or not _HAN_RUN_RE.match(given):
        return ""
    return tok.word + given if nxt.tag[:1] in ("", "n", "a") and not nxt.tag.startswith("nr") else ""


def _guess_kind(word: str) -> str:
    if word[0] in _SURNAMES or word[:2] in _COMPOUND_SURNAMES:
        return "nr"
    if word[-1] in _PLACE_SUFFIXES:
        return "ns"
    if word.endswith(_ORG_SUFFIXES):
        return "nt"
    return ""


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
    def first_chapter(self) -> int | None:
        """The first chapter the entity appears in."""
        return self.chapters[0] if self.chapters else None

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

    def in_chapter(self, chapter: int) -> list[Entity]:
        """The entities appearing in ``chapter``, most mentioned first."""
        counts = self.by_chapter.get(chapter, {})
        return [
            self.entities[k] for k, _ in sorted(counts.items(), key=lambda kv: -kv[1]) if k in self.entities
        ]

    def findings_for(self, chapter: int) -> list[ContinuityFinding]:
        """The findings located in ``chapter``."""
        return [f for f in self.findings if f.chapter == chapter]


@dataclass(frozen=True)
class ChapterEntityScan:
    """The per-chapter input of :func:`build_index`."""

    number: int
    mentions: ChapterMentions
    proper_nouns: Mapping[str, tuple[str, int, int]]


def build_index(
    records: EntityRecords, chapters: Sequence[ChapterEntityScan], *, min_detected: int = MIN_DETECTED_COUNT
) -> EntityIndex:
    """Combine per-chapter scans into the index and its findings."""
    index = EntityIndex(entities={e.key: e for e in records.entities})
    record_names = records.name_map()
    per_entity: dict[str, list[int]] = defaultdict(list)
    totals: dict[str, int] = defaultdict(int)
    detected_totals: dict[str, int] = defaultdict(int)
    detected_kind: dict[str, str] = {}
    detected_first: dict[str, tuple[int, int]] = {}
    ordered = sorted(chapters, key=lambda c: c.number)
    for scan in ordered:
        counts = dict(scan.mentions.counts)
        for word, (tag, count, offset) in scan.proper_nouns.items():
            if word in record_names:
                continue
            detected_totals[word] += count
            detected_kind.setdefault(word, tag)
            detected_first.setdefault(word, (scan.number, offset))
        index.by_chapter[scan.number] = counts
        for key, count in counts.items():
            per_entity[key].append(scan.number)
            totals[key] += count
    for word, total in detected_totals.items():
        if total < min_detected:
            continue
        key = f"detected:{word}"
        index.entities[key] = Entity(
            key, word, _DETECTED_KINDS[detected_kind[word]], source="jieba", status=""
        )
        totals[key] = total
    for scan in ordered:
        for word, (_, count, _) in scan.proper_nouns.items():
            key = f"detected:{word}"
            if key in index.entities:
                index.by_chapter[scan.number][key] = count
                per_entity[key].append(scan.number)
    for key, chapter_list in per_entity.items():
        entity = index.entities[key]
        index.appearances[key] = EntityAppearance(
            key, entity.name, entity.kind, entity.source, tuple(chapter_list), totals[key]
        )
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
    typo_like: dict[str, list[ContinuityFinding]] = defaultdict(list)

    def pair(anchor: str, name: str) -> ContinuityFinding | None:
        key = (anchor, name) if anchor < name else (name, anchor)
        if anchor == name or key in seen or names[anchor][0] == names[name][0]:
            return None
        seen.add(key)
        return _near_pair(anchor, name, names, detected_first, min_detected)

    for name in [n for n in names if len(n) >= 2]:
        count = names[name][1]
        rare_person = count is not None and count <= MAX_TYPO_COUNT and detected[name][0] == "nr"
        for wildcard in _wildcards(name):
            for anchor in record_anchors.get(wildcard, ()):
                finding = pair(anchor, name)
                if finding is not None:
                    findings.append(finding)
            if not rare_person:
                continue
            for anchor in common_anchors.get(wildcard, ()):
                finding = pair(anchor, name)
                if finding is not None:
                    typo_like[finding.entity].append(finding)
    # A rare word one character away from several frequent names is a word of its own, not a slip of one.
    findings.extend(group[0] for group in typo_like.values() if len(group) == 1)
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
