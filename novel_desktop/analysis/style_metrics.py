"""Style metrics of the seed's style profile (004 §5.6, §7, §9.2), computed without an LLM.

Average sentence length, dialogue ratio, paragraph length for mobile reading, rhetoric markers per 1,000 字
and sentence-pattern repetition (§7 Layer 4: fewer than 2 repeated patterns in any 5 adjacent sentences).
The same numbers make a :class:`~novel_desktop.domain.style.StyleProfile` from samples and measure drift
between chapters.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any

from novel_desktop.analysis import segment, text_measure
from novel_desktop.analysis.ai_phrases import load_default_phrases
from novel_desktop.analysis.sentences import (
    Sentence,
)
from novel_desktop.domain.style import StyleProfile

#: A paragraph longer than this fills more than a phone screen (about 8 lines of 20 字).
MOBILE_PARAGRAPH_LIMIT = 150
#: Sentences this short (字, punctuation not counted) read as the quick beats of 短句切换.
SHORT_SENTENCE = 8
#: The seed's window: fewer than 2 repeated patterns in any 5 adjacent sentences.
WINDOW = 5
MAX_REPEATS = 1
#: Sentences shorter than this ("好。" "嗯？") have no shape worth comparing.
MIN_SHAPED_LENGTH = 4

#: Every alternative starts with its character (像's look-behind comes after it), so a search skips the
#: text to the next of those characters in C instead of trying the alternatives at every position.
_SIMILE_RE = re.compile(
    r"仿佛|彷彿|如同|宛如|宛若|犹如|猶如|好似|恍若|似的|一般无二|像(?![素])(?<![图圖影想偶肖录錄画畫好]像)"
)
_RHETORICAL_RE = re.compile(
    r"难道|難道|岂|豈|何尝|何嘗|何必|怎能|怎么能|怎麼能|莫非|不是[^？?]*吗|不就[^？?]*吗"
)
_CLAUSE_MARKS = "，,；;。！？!?：:"
_CLAUSE_SPLIT_RE = re.compile(rf"[{_CLAUSE_MARKS}]")
#: What a clause's ends lose before its first two characters are compared.
_CLAUSE_TRIM = ' \u3000“”「」"'
#: Two clauses in a row on one line that start with the same two characters (group 1; the clauses' lengths
#: unchecked), the first after a mark or a line break: a paragraph without such a pair has no run of three.
#: It starts with a set of characters, so a search skips to the next of them in C.
_CLAUSE_PAIR_RE = re.compile(
    rf"[{_CLAUSE_MARKS}\n](?:(?<=\n)\s*)?[{_CLAUSE_TRIM}]*([^{_CLAUSE_MARKS}{_CLAUSE_TRIM}\n][^{_CLAUSE_MARKS}\n])"
    rf"[^{_CLAUSE_MARKS}\n]*[{_CLAUSE_MARKS}][{_CLAUSE_TRIM}]*\1"
)

_POS_NAMES = {
    "r": "代词",
    "v": "动词",
    "n": "名词",
    "a": "形容词",
    "d": "副词",
    "p": "介词",
    "c": "连词",
    "u": "助词",
    "m": "数词",
    "q": "量词",
    "t": "时间词",
    "f": "方位词",
    "s": "处所词",
    "y": "语气词",
    "e": "叹词",
    "o": "拟声词",
    "N": "新词",
    "x": "字",
}


@dataclass(frozen=True, slots=True)
class RepetitionFinding:
    """A stretch of adjacent sentences in which some 5 in a row repeat a sentence shape 2 or more times."""

    start: int
    end: int
    first_sentence: int
    sentence_count: int
    pattern: str
    repeats: int
    examples: tuple[str, ...]

    def describe(self) -> str:
        """One line for the author: which sentences share which shape."""
        sample = "」「".join(e[:14] for e in self.examples[:3])
        return f"第 {self.first_sentence + 1} 句起「{sample}」同为「{shape_label(self.pattern)}」句式"

    def to_json(self) -> dict[str, Any]:
        """The finding as a JSON object."""
        return {
            "start": self.start,
            "end": self.end,
            "first_sentence": self.first_sentence,
            "sentence_count": self.sentence_count,
            "pattern": self.pattern,
            "repeats": self.repeats,
            "examples": list(self.examples),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RepetitionFinding:
        """The finding :meth:`to_json` wrote."""
        return cls(
            int(data["start"]),
            int(data["end"]),
            int(data["first_sentence"]),
            int(data["sentence_count"]),
            str(data["pattern"]),
            int(data["repeats"]),
            tuple(str(e) for e in data["examples"]),
        )


@dataclass(frozen=True)
class StyleMetrics:
    """Raw counts of one text (or several, :meth:`combine`) and the ratios the style profile uses."""

    chars: int = 0
    sentence_count: int = 0
    sentence_chars: int = 0
    short_sentences: int = 0
    dialogue_chars: int = 0
    paragraph_count: int = 0
    paragraph_chars: int = 0
    long_paragraphs: int = 0
    max_paragraph_chars: int = 0
    similes: int = 0
    parallelisms: int = 0
    rhetorical_questions: int = 0
    exclamations: int = 0
    questions: int = 0
    windows: int = 0
    repeated_windows: int = 0
    #: Offsets refer to the measured text; :meth:`combine` drops them (they would mix texts).
    repetitions: tuple[RepetitionFinding, ...] = field(default=())

    # ------------------------------------------------------------------ ratios
    @property
    def avg_sentence_length(self) -> float:
        """Average sentence length in 字 (punctuation not counted)."""
        return self.sentence_chars / self.sentence_count if self.sentence_count else 0.0

    @property
    def dialogue_ratio(self) -> float:
        """Share of the text's 字数 inside quotation marks (0-1)."""
        return min(1.0, self.dialogue_chars / self.chars) if self.chars else 0.0

    @property
    def avg_paragraph_length(self) -> float:
        """Average paragraph length in 字."""
        return self.paragraph_chars / self.paragraph_count if self.paragraph_count else 0.0

    @property
    def long_paragraph_share(self) -> float:
        """Share of paragraphs longer than :data:`MOBILE_PARAGRAPH_LIMIT` 字 (hard to read on a phone)."""
        return self.long_paragraphs / self.paragraph_count if self.paragraph_count else 0.0

    @property
    def short_sentence_share(self) -> float:
        """Share of sentences of at most :data:`SHORT_SENTENCE` 字."""
        return self.short_sentences / self.sentence_count if self.sentence_count else 0.0

    def per_1k(self, count: int) -> float:
        """``count`` per 1,000 字 of this text."""
        return count * 1000.0 / self.chars if self.chars else 0.0

    @property
    def simile_per_1k(self) -> float:
        """比喻 markers (像/仿佛/如同/宛如 …) per 1,000 字."""
        return self.per_1k(self.similes)

    @property
    def parallelism_per_1k(self) -> float:
        """排比 (3 or more clauses in a row opening alike) per 1,000 字."""
        return self.per_1k(self.parallelisms)

    @property
    def rhetorical_question_per_1k(self) -> float:
        """反问 per 1,000 字."""
        return self.per_1k(self.rhetorical_questions)

    @property
    def exclamation_per_1k(self) -> float:
        """感叹句 per 1,000 字."""
        return self.per_1k(self.exclamations)

    @property
    def repetition_window_share(self) -> float:
        """Share of 5-sentence windows that repeat a sentence shape 2 or more times."""
        return self.repeated_windows / self.windows if self.windows else 0.0

    def summary(self) -> dict[str, float]:
        """The ratios, rounded, for JSON documents and the status view."""
        return {name: round(float(getattr(self, name)), 4) for name in SUMMARY_METRICS}

    # ------------------------------------------------------------------ (de)serialisation
    def to_json(self) -> dict[str, Any]:
        """Counts and findings as a JSON object (:meth:`from_json` reads it back)."""
        data: dict[str, Any] = {
            f.name: getattr(self, f.name) for f in fields(self) if f.name != "repetitions"
        }
        data["repetitions"] = [r.to_json() for r in self.repetitions]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StyleMetrics:
        """The metrics :meth:`to_json` wrote."""
        counts = {f.name: int(data.get(f.name, 0)) for f in fields(cls) if f.name != "repetitions"}
        reps = tuple(RepetitionFinding.from_json(r) for r in data.get("repetitions", []))
        return cls(**counts, repetitions=reps)

    @classmethod
    def combine(cls, parts: Iterable[StyleMetrics]) -> StyleMetrics:
        """The metrics of several texts read as one (counts summed, ratios recomputed, findings dropped)."""
        totals: dict[str, int] = {f.name: 0 for f in fields(cls) if f.name != "repetitions"}
        for part in parts:
            for name in totals:
                value = int(getattr(part, name))
                totals[name] = (
                    max(totals[name], value) if name == "max_paragraph_chars" else totals[name] + value
                )
        return cls(**totals, repetitions=())


#: The ratios :meth:`StyleMetrics.summary` reports and :func:`drift` compares.
SUMMARY_METRICS: tuple[str, ...] = (
    "avg_sentence_length",
    "dialogue_ratio",
    "avg_paragraph_length",
    "long_paragraph_share",
    "short_sentence_share",
    "simile_per_1k",
    "parallelism_per_1k",
    "rhetorical_question_per_1k",
    "exclamation_per_1k",
    "repetition_window_share",
)

METRIC_LABELS: dict[str, str] = {
    "avg_sentence_length": "平均句长",
    "dialogue_ratio": "对话占比",
    "avg_paragraph_length": "平均段长",
    "long_paragraph_share": "超长段落占比",
    "short_sentence_share": "短句占比",
    "simile_per_1k": "比喻（次/千字）",
    "parallelism_per_1k": "排比（次/千字）",
    "rhetorical_question_per_1k": "反问（次/千字）",
    "exclamation_per_1k": "感叹句（次/千字）",
    "repetition_window_share": "句式重复窗口占比",
}


# ====================================================================== sentence shapes
def _coarse(word: str, tag: str) -> str:
    if tag:
        return tag[0]
    # A word the HMM built is mostly a name or a new compound; a lone unknown character is just a 字.
    return "N" if len(word) > 1 else "x"


def shape_label(pattern: str) -> str:
    """A sentence shape in words, e.g. "代词+动词…。" (对话 marks a quoted sentence)."""
    head, _, ending = pattern.partition("|")
    names = "+".join(_POS_NAMES.get(c, c) for c in head)
    mark = ending.rstrip("D") or "（无标点）"
    return f"{'对话：' if ending.endswith('D') else ''}{names}…{mark}"


def sentence_shapes(sentences: Sequence[Sentence], tokens: segment.Tokens) -> list[str | None]:
    """The coarse shape of each sentence: the tags of its first two words, its final mark and whether it is
    dialogue ("他走进房间。" and "他拿起了杯子。" share "rv|。"); None for sentences too short to compare.

    Coarse on purpose: what a reader hears as monotony is the same opening and cadence, not the same words.
    """
    starts, words, tags = tokens.starts, tokens.words, tokens.tags
    count = len(words)
    shapes: list[str | None] = []
    for s in sentences:
        if s.length < MIN_SHAPED_LENGTH:
            shapes.append(None)
            continue
        # ``starts`` has a final entry (the text's end), so bisect may land on ``count``: no word there.
        i = bisect.bisect_left(starts, s.start, 0, count)
        heads: list[str] = []
        while i < count and starts[i] < s.end and len(heads) < 2:
            word = words[i]
            if word[0].isalnum():
                heads.append(_coarse(word, tags[i]))
            i += 1
        if not heads:
            shapes.append(None)
            continue
        shapes.append(f"{''.join(heads)}|{s.ending or '-'}{'D' if s.dialogue else ''}")
    return shapes


def find_repetitions(
    sentences: Sequence[Sentence], shapes: Sequence[str | None]
) -> tuple[int, int, list[RepetitionFinding]]:
    """Windows of 5 adjacent sentences that repeat a shape 2 or more times: (windows, flagged, findings).

    Overlapping flagged windows merge into one finding covering the whole stretch.
    """
    n = len(sentences)
    if n < WINDOW:
        return 0, 0, []
    windows = n - WINDOW + 1
    flagged: list[int] = []
    for i in range(windows):
        window = [s for s in shapes[i : i + WINDOW] if s is not None]
        if len(window) - len(set(window)) > MAX_REPEATS:
            flagged.append(i)
    # The finding spans the sentences that share the pattern, which is what the editor should underline.
    findings = [
        RepetitionFinding(
            sentences[same[0]].start,
            sentences[same[-1]].end,
            same[0],
            same[-1] - same[0] + 1,
            pattern,
            repeats,
            tuple(sentences[k].text for k in same[:5]),
        )
        for same, pattern, repeats in text_measure.stretches(flagged, shapes, WINDOW)
    ]
    return windows, len(flagged), findings


# ====================================================================== metrics
def _parallelisms(text: str, paragraphs: Sequence[tuple[int, int]]) -> int:
    """Runs of three or more clauses of a paragraph (``[start, end)`` spans of ``text``'s lines, in order)
    that start with the same two characters."""
    # One scan of the text finds the few paragraphs with two such clauses in a row; only those are split
    # (and the first, which may have no line break before it).
    firsts = [start for start, _ in paragraphs]
    maybe = {bisect.bisect_right(firsts, m.start(1)) - 1 for m in _CLAUSE_PAIR_RE.finditer(text)}
    maybe.add(0)
    count = 0
    for start, end in (paragraphs[i] for i in sorted(maybe) if 0 <= i < len(paragraphs)):
        clauses = [c.strip(_CLAUSE_TRIM) for c in _CLAUSE_SPLIT_RE.split(text[start:end])]
        run, prev = 1, ""
        for clause in clauses:
            head = clause[:2] if len(clause) >= 3 else ""
            if head and head == prev:
                run += 1
                if run == 3:
                    count += 1
            else:
                run = 1
            prev = head
    return count


def compute_metrics(text: str, tokens: segment.Tokens | None = None) -> StyleMetrics:
    """The style metrics of ``text``; ``tokens`` (from :func:`segment.tokenize`) may be passed when the caller
    already segmented the text, so the segmenter runs once per chapter.

    Without ``tokens`` the last few texts' metrics are remembered (they are immutable): the refiner's and the
    judge's context measure the same chapter text, and an unchanged text is not measured twice.
    """
    if tokens is None:
        return _remembered_metrics(text)
    return _measure(text, tokens)


@lru_cache(maxsize=16)
def _remembered_metrics(text: str) -> StyleMetrics:
    return _measure(text, segment.tokenize(text))


def _measure(text: str, tokens: segment.Tokens) -> StyleMetrics:
    m = text_measure.measure(
        text,
        tokens,
        short=SHORT_SENTENCE,
        long_paragraph=MOBILE_PARAGRAPH_LIMIT,
        min_shaped=MIN_SHAPED_LENGTH,
        window=WINDOW,
        max_repeats=MAX_REPEATS,
    )
    return StyleMetrics(
        chars=m.chars,
        sentence_count=m.sentence_count,
        sentence_chars=m.sentence_chars,
        short_sentences=m.short_sentences,
        dialogue_chars=m.dialogue_chars,
        paragraph_count=m.paragraph_count,
        paragraph_chars=m.paragraph_chars,
        long_paragraphs=m.long_paragraphs,
        max_paragraph_chars=m.max_paragraph_chars,
        similes=len(_SIMILE_RE.findall(text)),
        parallelisms=_parallelisms(text, m.paragraphs),
        rhetorical_questions=sum(1 for q in m.question_texts if _RHETORICAL_RE.search(q) is not None),
        exclamations=m.exclamations,
        questions=m.questions,
        windows=m.windows,
        repeated_windows=m.repeated_windows,
        repetitions=tuple(RepetitionFinding(*r) for r in m.repetitions),
    )


# ====================================================================== profile
def _preferences(m: StyleMetrics) -> list[str]:
    prefs: list[str] = []
    if m.short_sentence_share >= 0.35:
        prefs.append("短句为主")
    elif m.short_sentence_share <= 0.12:
        prefs.append("长句铺陈")
    else:
        prefs.append("长短句交替")
    if m.simile_per_1k < 0.5:
        prefs.append("少用比喻")
    elif m.simile_per_1k > 3:
        prefs.append("比喻较多")
    else:
        prefs.append("比喻适度")
    if m.parallelism_per_1k >= 0.5:
        prefs.append("常用排比")
    if m.rhetorical_question_per_1k >= 0.8:
        prefs.append("常用反问")
    if m.exclamation_per_1k >= 3:
        prefs.append("感叹句较多")
    elif m.exclamation_per_1k < 0.5:
        prefs.append("少用感叹")
    if m.dialogue_ratio >= 0.45:
        prefs.append("对话推进")
    elif m.dialogue_ratio <= 0.15:
        prefs.append("叙述为主")
    return prefs


def _directives(m: StyleMetrics) -> list[str]:
    rhythm = (
        "多用短句推进动作"
        if m.short_sentence_share >= 0.35
        else "句子可以写长，但一句只讲一件事"
        if m.short_sentence_share <= 0.12
        else "长短句交替，紧张处切短句"
    )
    lines = [f"平均句长约 {m.avg_sentence_length:.0f} 字，{rhythm}"]
    if m.dialogue_ratio >= 0.45:
        lines.append(f"对话约占 {m.dialogue_ratio:.0%}，用对话推动情节，叙述只交代必要的动作")
    elif m.dialogue_ratio <= 0.15:
        lines.append(f"对话约占 {m.dialogue_ratio:.0%}，以叙述为主，对话要少而精")
    else:
        lines.append(f"对话约占 {m.dialogue_ratio:.0%}，对话与叙述穿插")
    limit = max(60, min(MOBILE_PARAGRAPH_LIMIT, round(m.avg_paragraph_length * 2)))
    lines.append(f"段落平均 {m.avg_paragraph_length:.0f} 字，单段不超过 {limit} 字，适合手机阅读")
    if m.simile_per_1k < 0.5:
        lines.append("几乎不用比喻，用具体细节代替形容")
    else:
        lines.append(f"比喻每千字约 {m.simile_per_1k:.1f} 处，一处只用一个，不要堆叠")
    lines.append("相邻五句不要重复同一句式")
    return lines


def profile_from_samples(
    texts: Iterable[str],
    *,
    source_type: str = "original",
    reference_author: str | None = None,
    max_forbidden: int = 20,
) -> StyleProfile:
    """A style profile measured from the author's samples (or a reference author's chapters) without an LLM.

    Forbidden words are shipped AI phrases the samples never use (only literal ones, the most typical first).
    The measured ratios are kept under the extra key ``metrics`` so that :func:`drift` can compare them all.
    """
    samples = [t for t in texts if t.strip()]
    metrics = StyleMetrics.combine(compute_metrics(t) for t in samples)
    joined = "\n".join(samples)
    forbidden = [e.pattern for e in load_default_phrases() if not e.regex and e.pattern not in joined]
    return StyleProfile.model_validate(
        {
            "avg_sentence_length": round(metrics.avg_sentence_length, 1),
            "dialogue_ratio": round(metrics.dialogue_ratio, 2),
            "rhetoric_preferences": _preferences(metrics),
            "forbidden_words": forbidden[:max_forbidden],
            "character_speech_patterns": {},
            "source_type": source_type,
            "writing_directives": _directives(metrics),
            "reference_author": reference_author,
            "metrics": metrics.summary(),
        }
    )


# ====================================================================== drift
@dataclass(frozen=True, slots=True)
class DriftItem:
    """One metric that moved away from the baseline: ``direction`` is "up" or "down"."""

    metric: str
    baseline: float
    current: float
    direction: str
    message: str

    def to_json(self) -> dict[str, Any]:
        """The item as written into ``style-drift.json``."""
        return {
            "metric": self.metric,
            "baseline": round(self.baseline, 3),
            "current": round(self.current, 3),
            "direction": self.direction,
            "message": self.message,
        }


#: metric → (absolute change, relative change) both of which must be exceeded to count as drift.
DRIFT_THRESHOLDS: dict[str, tuple[float, float]] = {
    "avg_sentence_length": (3.0, 0.25),
    "dialogue_ratio": (0.15, 0.0),
    "avg_paragraph_length": (20.0, 0.4),
    "long_paragraph_share": (0.15, 0.0),
    "short_sentence_share": (0.15, 0.0),
    "simile_per_1k": (1.5, 0.5),
    "parallelism_per_1k": (1.0, 0.5),
    "rhetorical_question_per_1k": (1.0, 0.5),
    "exclamation_per_1k": (2.0, 0.5),
    "repetition_window_share": (0.1, 0.0),
}

_DRIFT_ADVICE: dict[str, tuple[str, str]] = {
    "avg_sentence_length": ("句子变长了，拆成短句", "句子变短了，适当合并"),
    "dialogue_ratio": ("对话变多了，补回必要的叙述", "对话变少了，让人物开口推进情节"),
    "avg_paragraph_length": ("段落变长了，按动作或视线切段", "段落变碎了，相关内容并段"),
    "long_paragraph_share": ("超长段落变多，手机上难读，拆段", "超长段落变少"),
    "short_sentence_share": ("短句变多了，注意节奏别太碎", "短句变少了，紧张处切短句"),
    "simile_per_1k": ("比喻变多了，删去可有可无的", "比喻变少了"),
    "parallelism_per_1k": ("排比变多了，删去堆砌的", "排比变少了"),
    "rhetorical_question_per_1k": ("反问变多了", "反问变少了"),
    "exclamation_per_1k": ("感叹句变多了，情绪靠情节而非标点", "感叹句变少了"),
    "repetition_window_share": ("句式重复变多了，变换句子开头和结构", "句式重复变少了"),
}


def _baseline_values(baseline: StyleMetrics | StyleProfile | dict[str, Any]) -> dict[str, float]:
    if isinstance(baseline, StyleMetrics):
        return baseline.summary()
    if isinstance(baseline, StyleProfile):
        data: dict[str, Any] = dict(baseline.model_extra or {}).get("metrics") or {}
        values = {k: float(v) for k, v in data.items() if k in DRIFT_THRESHOLDS}
        values["avg_sentence_length"] = float(baseline.avg_sentence_length)
        values["dialogue_ratio"] = float(baseline.dialogue_ratio)
        return values
    return {k: float(v) for k, v in baseline.items() if k in DRIFT_THRESHOLDS and isinstance(v, int | float)}


def drift(baseline: StyleMetrics | StyleProfile | dict[str, Any], current: StyleMetrics) -> list[DriftItem]:
    """The metrics of ``current`` that moved past their threshold (:data:`DRIFT_THRESHOLDS`) from
    ``baseline``.

    ``baseline`` may be the metrics of earlier chapters, a style profile (its ``metrics`` extra when present,
    else its sentence length and dialogue ratio) or a plain ``{metric: value}`` mapping.
    """
    base = _baseline_values(baseline)
    now = current.summary()
    items: list[DriftItem] = []
    for metric, (abs_limit, rel_limit) in DRIFT_THRESHOLDS.items():
        if metric not in base:
            continue
        before, after = base[metric], now[metric]
        change = after - before
        relative = abs(change) / before if before else float("inf") if change else 0.0
        if abs(change) <= abs_limit or relative <= rel_limit:
            continue
        direction = "up" if change > 0 else "down"
        advice = _DRIFT_ADVICE[metric][0 if change > 0 else 1]
        label = METRIC_LABELS[metric]
        message = f"{label}由 {_fmt(metric, before)} 变为 {_fmt(metric, after)}：{advice}"
        items.append(DriftItem(metric, before, after, direction, message))
    return items


def _fmt(metric: str, value: float) -> str:
    if metric in (
        "dialogue_ratio",
        "long_paragraph_share",
        "short_sentence_share",
        "repetition_window_share",
    ):
        return f"{value:.0%}"
    if metric in ("avg_sentence_length", "avg_paragraph_length"):
        return f"{value:.1f} 字"
    return f"{value:.1f}"
