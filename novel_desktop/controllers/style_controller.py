"""Style samples and dropped files, for the style page and the window: what dropped files are, and the
style profile measured from samples.

The analysis is deterministic (``profile_from_samples``: sentence lengths, dialogue, rhetoric, the AI phrases
the samples never use) and needs no LLM. It segments the text with jieba, which takes a second on first use:
the window runs :func:`analyze_samples` and :func:`classify_drop` as jobs (worker threads).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from novel_desktop.analysis.manuscript import ManuscriptError, read_manuscript
from novel_desktop.analysis.style_metrics import profile_from_samples
from novel_desktop.domain.style import StyleProfile
from novel_desktop.domain.text import count_chars
from novel_desktop.i18n import tr

__all__ = ["ManuscriptError"]

STYLE_PROFILE_PATH = "style-profile.json"
SAMPLE_SUFFIXES = (".txt", ".md", ".markdown", ".docx")
MANUSCRIPT_SUFFIXES = (*SAMPLE_SUFFIXES, ".epub")
MAX_SAMPLE_FILES = 3
#: About three long chapters; more than this is a book, not a style sample.
MAX_SAMPLE_CHARS = 30_000
# No character takes more than 4 bytes in any supported encoding, so a text file this big holds more than
# MAX_SAMPLE_CHARS characters and need not be read to be classified.
_SURELY_BIG_BYTES = MAX_SAMPLE_CHARS * 4

DropKind = Literal["samples", "manuscript"]


def _chars_in(path: Path) -> int | None:
    """The 字数 of a file, or None when it cannot be read."""
    if path.suffix.lower() not in (".docx", ".epub") and path.stat().st_size > _SURELY_BIG_BYTES:
        return MAX_SAMPLE_CHARS + 1
    try:
        return count_chars(read_manuscript(path).text)
    except ManuscriptError:
        return None


def classify_drop(paths: Sequence[str | Path]) -> DropKind | None:
    """What dropped files are: ≤3 readable files under ~30,000 字 are style samples; one bigger file (or an
    .epub) is a manuscript to offer for import; anything else (no usable file, too many, several big ones)
    is None."""
    files = [Path(p) for p in paths]
    files = [f for f in files if f.is_file() and f.suffix.lower() in MANUSCRIPT_SUFFIXES]
    if not files:
        return None
    if any(f.suffix.lower() == ".epub" for f in files):
        return "manuscript" if len(files) == 1 else None
    if len(files) > MAX_SAMPLE_FILES:
        return None
    counts = [_chars_in(f) for f in files]
    if any(c is None for c in counts):
        return None
    total = sum(c or 0 for c in counts)
    if total <= MAX_SAMPLE_CHARS:
        return "samples"
    return "manuscript" if len(files) == 1 else None


@dataclass(frozen=True)
class SampleAnalysis:
    """A profile measured from sample files, with what it was measured on."""

    profile: StyleProfile
    files: list[str]
    chars: int


def analyze_samples(paths: Sequence[str | Path]) -> SampleAnalysis:
    """Read the samples and measure them (blocking: run it in a worker thread). Raises ManuscriptError."""
    texts = [read_manuscript(p).text for p in paths]
    if not any(t.strip() for t in texts):
        raise ManuscriptError(tr("样本文件里没有正文"))
    profile = profile_from_samples(texts)
    return SampleAnalysis(profile, [Path(p).name for p in paths], sum(count_chars(t) for t in texts))
