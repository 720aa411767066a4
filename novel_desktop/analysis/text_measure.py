"""The counts behind a text's style metrics, measured in columns (no object per sentence or paragraph).

:func:`measure` is what :func:`~novel_desktop.analysis.style_metrics.compute_metrics` runs on every chapter:
a whole novel has tens of thousands of sentences, and making a :class:`~novel_desktop.analysis.sentences.
Sentence` for each (and counting each line's 字 twice) cost more than segmenting the words. It gives the same
numbers as measuring with :func:`~novel_desktop.analysis.sentences.split_sentences`,
:func:`~novel_desktop.analysis.style_metrics.sentence_shapes` and
:func:`~novel_desktop.analysis.style_metrics.find_repetitions` (the tests check both ways agree); those stay
the readable reference.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from novel_desktop.analysis import segment
from novel_desktop.analysis.sentences import (
    _CLOSERS,
    _DIALOGUE_RE,
    _FOLD,
    _FULLWIDTH_PUNCT,
    _HAN,
    _TERMINATORS,
    _WORD_HAN,
    line_spans,
)

#: A sentence as :data:`~novel_desktop.analysis.sentences._SENTENCE_RE` finds it, as (its leading whitespace,
#: the sentence, its run of final marks or ""). In a line, one match starts where the last ended.
_SENTENCE_BODY_RE = re.compile(
    rf"(\s*)([^{_TERMINATORS}\n]*(?:([{_TERMINATORS}]+)|(?=\n)|$)[{re.escape(_CLOSERS)}]*)"
)
#: The complement of :data:`~novel_desktop.analysis.sentences._UNIT_RE` (a unit of 字数: a Han character or
#: full-width mark, or a run of other letters and digits): where that finds a character, this finds nothing;
#: otherwise this finds the run it counts once (group 1) or the character it skips (group 1 empty). Counting
#: with it makes no string per 汉字 (a novel has 700,000), only per mark, space or run; see :func:`_count`.
_NOT_UNIT_RE = re.compile(rf"(?![{_HAN}{_FULLWIDTH_PUNCT}])(?:((?:(?![{_HAN}])[^\W_])+)|[\s\S])")
#: The same for :data:`~novel_desktop.analysis.sentences._WORD_CHAR_RE` (a sentence's length: Han characters
#: and runs of Latin letters or digits).
_NOT_WORD_CHAR_RE = re.compile(rf"(?![{_WORD_HAN}])(?:([A-Za-z0-9]+)|[\s\S])")
#: A run of final marks → the sentence's ending (its last mark, ASCII and small forms folded).
_ENDINGS = {mark: _FOLD.get(mark, mark) for mark in _TERMINATORS}


class Repetition(NamedTuple):
    """A flagged stretch of sentences, the fields of a
    :class:`~novel_desktop.analysis.style_metrics.RepetitionFinding` in its order."""

    start: int
    end: int
    first_sentence: int
    sentence_count: int
    pattern: str
    repeats: int
    examples: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Measured:
    """The raw counts :class:`~novel_desktop.analysis.style_metrics.StyleMetrics` is made of."""

    chars: int
    sentence_count: int
    sentence_chars: int
    short_sentences: int
    dialogue_chars: int
    paragraph_count: int
    paragraph_chars: int
    long_paragraphs: int
    max_paragraph_chars: int
    exclamations: int
    questions: int
    #: The text of each sentence ending in "？" (the rhetorical-question check reads them).
    question_texts: tuple[str, ...]
    windows: int
    repeated_windows: int
    repetitions: tuple[Repetition, ...]
    #: The paragraphs' spans (the parallelism check reads them).
    paragraphs: tuple[tuple[int, int], ...]


def measure(
    text: str,
    tokens: segment.Tokens,
    *,
    short: int,
    long_paragraph: int,
    min_shaped: int,
    window: int,
    max_repeats: int,
) -> Measured:
    """Count ``text``'s sentences, paragraphs and dialogue, and find its repeated sentence shapes."""
    prose, other = line_spans(text)
    not_units = _NOT_UNIT_RE.findall
    paragraph_chars = [_count(not_units(text, s, e), e - s) for s, e in prose]
    # A unit of 字数 never spans a line: the text's count is its lines' counts (headings counted too).
    chars = sum(paragraph_chars) + sum(_count(not_units(text, s, e), e - s) for s, e in other)
    dialogue = [(m.start(), m.end()) for m in _DIALOGUE_RE.finditer(text)]
    dialogue_chars = sum(_count(not_units(text, a, b), b - a) for a, b in dialogue)

    starts: list[int] = []
    ends: list[int] = []
    lengths: list[int] = []
    endings: list[str] = []
    not_words, sentences = _NOT_WORD_CHAR_RE.findall, _SENTENCE_BODY_RE.findall
    for line_start, line_end in prose:
        # Strings rather than match objects (a novel has 50,000 sentences): the offsets add up.
        end = line_start
        for space, sentence, marks in sentences(text, line_start, line_end):
            start = end + len(space)
            end = start + len(sentence)
            if not sentence:
                continue
            found = not_words(sentence)
            length = _count(found, len(sentence)) if found else len(sentence)
            if length == 0:
                continue
            starts.append(start)
            ends.append(end)
            lengths.append(length)
            endings.append(_ENDINGS[marks[-1]] if marks else "")
    inside = _inside(starts, ends, dialogue)
    shapes = _shapes(starts, ends, lengths, endings, inside, tokens, min_shaped)
    windows, flagged, repetitions = _repetitions(text, starts, ends, shapes, window, max_repeats)
    return Measured(
        chars=chars,
        sentence_count=len(lengths),
        sentence_chars=sum(lengths),
        short_sentences=sum(1 for n in lengths if n <= short),
        dialogue_chars=dialogue_chars,
        paragraph_count=len(prose),
        paragraph_chars=sum(paragraph_chars),
        long_paragraphs=sum(1 for n in paragraph_chars if n > long_paragraph),
        max_paragraph_chars=max(paragraph_chars, default=0),
        exclamations=endings.count("！"),
        questions=endings.count("？"),
        question_texts=tuple(text[starts[i] : ends[i]] for i, e in enumerate(endings) if e == "？"),
        windows=windows,
        repeated_windows=flagged,
        repetitions=tuple(repetitions),
        paragraphs=tuple(prose),
    )


def _count(complement: list[str], size: int) -> int:
    """How many matches a pattern has in a stretch of ``size`` characters, from what its complement
    (:data:`_NOT_UNIT_RE`, :data:`_NOT_WORD_CHAR_RE`) found there: every character counts one, but a run
    (a non-empty string) counts one in all and a skipped character (an empty one) none."""
    if not complement:
        return size
    return size - sum(map(len, complement)) + len(complement) - 2 * complement.count("")


def _inside(starts: list[int], ends: list[int], spans: list[tuple[int, int]]) -> list[bool]:
    """Whether each sentence lies mostly (more than half) inside quotation marks (``spans``, in order, apart).

    As the readable reference (:func:`~novel_desktop.analysis.sentences.split_sentences`) does, a sentence
    that starts before the first quotation counts as outside."""
    result: list[bool] = []
    if not spans:
        return [False] * len(starts)
    append = result.append
    count = len(spans)
    first = spans[0][0]
    k = 0
    span_end = spans[0][1]
    for start, end in zip(starts, ends, strict=True):
        if start < first:
            append(False)
            continue
        # Sentences and quotations come in order: step over the quotations that end before this sentence.
        while span_end <= start:
            k += 1
            if k == count:
                return result + [False] * (len(starts) - len(result))
            span_end = spans[k][1]
        lo = spans[k][0]
        if lo >= end:
            append(False)
            continue
        covered = min(end, span_end) - max(start, lo)
        i = k + 1
        while i < count and spans[i][0] < end:
            covered += min(end, spans[i][1]) - spans[i][0]
            i += 1
        append(covered * 2 > end - start)
    return result


def _shapes(
    starts: list[int],
    ends: list[int],
    lengths: list[int],
    endings: list[str],
    inside: list[bool],
    tokens: segment.Tokens,
    min_shaped: int,
) -> list[str | None]:
    """Each sentence's shape: the coarse tags of its first two words, its mark, "D" for dialogue."""
    token_starts, words, tag_of = tokens.starts, tokens.words, tokens.tag_of
    count = len(words)
    shapes: list[str | None] = []
    append = shapes.append
    i = 0
    for start, end, length, ending, quoted in zip(starts, ends, lengths, endings, inside, strict=True):
        if length < min_shaped:
            append(None)
            continue
        # Sentences come in order: start looking where the last one's look-up began.
        i = bisect_left(token_starts, start, i, count)
        heads = ""
        j = i
        while j < count and token_starts[j] < end:
            word = words[j]
            if word[0].isalnum():
                tag = tag_of[word]
                heads += tag[0] if tag else "N" if len(word) > 1 else "x"
                if len(heads) == 2:
                    break
            j += 1
        if not heads:
            append(None)
            continue
        append(f"{heads}|{ending or '-'}{'D' if quoted else ''}")
    return shapes


def _repetitions(
    text: str,
    starts: list[int],
    ends: list[int],
    shapes: list[str | None],
    window: int,
    max_repeats: int,
) -> tuple[int, int, list[Repetition]]:
    """Windows of ``window`` adjacent sentences repeating a shape more than ``max_repeats`` times."""
    n = len(shapes)
    if n < window:
        return 0, 0, []
    windows = n - window + 1
    flagged: list[int] = []
    # A sliding count of the shapes in the window: repeats = shapes - distinct shapes.
    counts: dict[str, int] = {}
    shaped = 0
    for k in range(n):
        shape = shapes[k]
        if shape is not None:
            counts[shape] = counts.get(shape, 0) + 1
            shaped += 1
        if k >= window:
            gone = shapes[k - window]
            if gone is not None:
                left = counts[gone] - 1
                if left:
                    counts[gone] = left
                else:
                    del counts[gone]
                shaped -= 1
        if k >= window - 1 and shaped - len(counts) > max_repeats:
            flagged.append(k - window + 1)
    findings = [
        Repetition(
            starts[same[0]],
            ends[same[-1]],
            same[0],
            same[-1] - same[0] + 1,
            pattern,
            repeats,
            tuple(text[starts[k] : ends[k]] for k in same[:5]),
        )
        for same, pattern, repeats in stretches(flagged, shapes, window)
    ]
    return windows, len(flagged), findings


def stretches(
    flagged: Sequence[int], shapes: Sequence[str | None], window: int
) -> list[tuple[list[int], str, int]]:
    """Overlapping flagged windows merged into stretches: for each, the sentences sharing its most common
    shape (what the editor underlines), that shape, and the stretch's repeats."""
    found: list[tuple[list[int], str, int]] = []
    j = 0
    while j < len(flagged):
        first = last = flagged[j]
        while j + 1 < len(flagged) and flagged[j + 1] <= last + window - 1:
            j += 1
            last = flagged[j]
        j += 1
        stop = last + window
        stretch = [s for s in shapes[first:stop] if s is not None]
        pattern, _ = Counter(stretch).most_common(1)[0]
        same = [k for k in range(first, stop) if shapes[k] == pattern]
        found.append((same, pattern, len(stretch) - len(set(stretch))))
    return found
