"""Entities of a novel and finding them in a chapter (seed 004 §6.6).

Entities come from the novel's own records (characters with aliases and status, places, items and factions
named in the state, storyline POV characters and factions) plus proper nouns jieba finds in the text.
Scanning a chapter (:class:`NameMatcher`) depends only on its text and the names; the index over the whole
novel and its continuity findings are :mod:`novel_desktop.analysis.continuity`.
"""

from __future__ import annotations

import hashlib
import json
import operator
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import compress
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from novel_desktop.analysis import segment
from novel_desktop.domain.characters import Character
from novel_desktop.domain.storylines import ConvergenceEvent, StorylineSchedule, StorylinesFile

if TYPE_CHECKING:
    from novel_desktop.storage.store import NovelStore

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
_HAN_RUN_RE = re.compile(r"^[\u3400-\u9fff]+$")

#: After a name: an optional short stretch, then a verb of speech ("林枫冷笑道", "陈老低声说").
_SPEECH_AFTER_RE = re.compile(
    r"[^，。！？\n“”「」]{0,6}?(?:(?<![知味霸难難厚公])道|(?<![听聽据據小传傳])说|說|问|問|答|喊|叫|吼|嚷|骂|罵|开口|開口)"
    r"|[：:]\s*[“「\"]"
)
_VERB_SOON_RE = re.compile(r".{0,4}?(说|道|說|问|問)")
#: Before a name: a closing quote just before it ("……”陈老说。").
_QUOTE_BEFORE_RE = re.compile(r"[”」\"]\s*$")

#: jieba's proper-noun tags and the entity kind each stands for.
DETECTED_KINDS = {"nr": "person", "ns": "place", "nt": "organization", "nz": "other"}
#: The tags of words that may be proper nouns: the dictionary's proper-noun tags (and their refinements
#: nrt, nrfg) and "" (a word the dictionary lacks).
_CANDIDATE_TAGS = frozenset({"", "nr", "nrt", "nrfg", "ns", "nt", "nz"})
_PERSON_TAGS = frozenset({"nr", "nrt", "nrfg"})
_PROPER_TAGS = _CANDIDATE_TAGS - {""}
_HAN = "\u3400-\u9fff"
#: A line that is a word of 2-4 汉字 looking like a name, by :func:`_guess_kind`'s rules in its order:
#: a person (group 1: a surname or compound surname first), else a place (group 2), else an organisation
#: (group 3).
_GUESS_RE = re.compile(
    rf"^(?=[{_HAN}]{{2,4}}$)"
    rf"(?:((?:[{''.join(sorted(_SURNAMES))}]|{'|'.join(sorted(_COMPOUND_SURNAMES))})[{_HAN}]*)"
    rf"|([{_HAN}]*[{''.join(sorted(_PLACE_SUFFIXES))}])"
    rf"|([{_HAN}]*(?:{'|'.join(_ORG_SUFFIXES)})))$",
    re.MULTILINE,
)


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


def proper_noun_candidates(tokens: segment.Tokens) -> dict[str, tuple[str, int, int]]:
    """Proper nouns the segmenter finds in a chapter: word → (kind tag "nr"/"ns"/"nt"/"nz", count, first
    offset).

    Dictionary words keep their tag; words the HMM built (not in the dictionary, so likely invented names)
    count as a person when they start with a common surname, a place or an organisation by their last
    character, and are skipped otherwise.
    """
    words, starts = tokens.words, tokens.starts
    # A word's tag is the same wherever it stands, so the work is per distinct word (a third as many), and
    # what runs over every word loops in C: a novel has half a million words.
    tag_of = tokens.tag_of
    kinds = _guessed_kinds(list(compress(tag_of, map(operator.not_, tag_of.values()))))
    surnames: set[str] = set()
    for word, tag in compress(tag_of.items(), map(_PROPER_TAGS.__contains__, tag_of.values())):
        if len(word) > 1:
            kinds[word] = tag[:2]
        elif tag in _PERSON_TAGS and word in _SURNAMES:
            surnames.add(word)
    found: dict[str, tuple[str, int, int]] = {}
    joined: dict[str, tuple[str, int, int]] = {}
    last = len(words) - 1
    # The places of the candidates and of the surnames (a few in a hundred words), in order.
    for i in compress(range(len(words)), map((kinds.keys() | surnames).__contains__, words)):
        word = words[i]
        kind = kinds.get(word)
        if kind is not None:
            prev = found.get(word)
            found[word] = (kind, 1, starts[i]) if prev is None else (kind, prev[1] + 1, prev[2])
        elif i < last:
            given = words[i + 1]
            name = _surname_plus_given(word, tag_of[word], given, tag_of[given])
            if name:
                prev = joined.get(name)
                joined[name] = ("nr", 1, starts[i]) if prev is None else (prev[0], prev[1] + 1, prev[2])
    # A joined name that is also a word of its own elsewhere ("萧远" once cut whole, once as 萧 + 远): the
    # counts add up, the kind and first offset are the earlier one's.
    for name, (kind, count, first) in joined.items():
        prev = found.get(name)
        if prev is None:
            found[name] = (kind, count, first)
        elif first < prev[2]:
            found[name] = (kind, prev[1] + count, first)
        else:
            found[name] = (prev[0], prev[1] + count, prev[2])
    return dict(sorted(found.items(), key=lambda item: item[1][2]))


def _guessed_kinds(unknown: list[str]) -> dict[str, str]:
    """The kind of each word of 2-4 汉字 among ``unknown`` (words the dictionary lacks) that looks like a name
    (:func:`_guess_kind`), found by one scan of the words, one per line (a chapter has thousands of them and
    few look like names)."""
    kinds: dict[str, str] = {}
    # No word has a line break in it but whitespace (the segmenter never joins a word across one).
    for person, place, organization in _GUESS_RE.findall("\n".join(unknown)):
        if person:
            kinds[person] = "nr"
        elif place:
            kinds[place] = "ns"
        else:
            kinds[organization] = "nt"
    return kinds


def _surname_plus_given(word: str, tag: str, given: str, given_tag: str) -> str:
    # The segmenter splits an invented name whose given name is a dictionary word ("萧" + "无尘"); join them.
    if word not in _SURNAMES or not tag.startswith("nr"):
        return ""
    if not 1 <= len(given) <= 2 or not _HAN_RUN_RE.match(given):
        return ""
    return word + given if given_tag[:1] in ("", "n", "a") and not given_tag.startswith("nr") else ""


def _guess_kind(word: str) -> str:
    """The kind a word the dictionary lacks looks like: "nr" (a surname first), "ns" (a place's last
    character), "nt" (an organisation's ending) or ""; the readable twin of :data:`_GUESS_RE`."""
    if word[0] in _SURNAMES or word[:2] in _COMPOUND_SURNAMES:
        return "nr"
    if word[-1] in _PLACE_SUFFIXES:
        return "ns"
    if word.endswith(_ORG_SUFFIXES):
        return "nt"
    return ""
