"""Style samples for the style page and the window: the style profile measured from sample files or text.

The analysis is deterministic (``profile_from_samples``: sentence lengths, dialogue, rhetoric, the AI phrases
the samples never use) and needs no LLM. It segments the text with jieba, which takes a second on first use:
the window runs :func:`analyze_samples` as a job (a worker thread); what a drop is, is controllers/drops.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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


def analyze_text(text: str, name: str) -> SampleAnalysis:
    """Measure dragged text as one sample called ``name`` (blocking). Raises ManuscriptError when empty."""
    if not text.strip():
        raise ManuscriptError(tr("样本文件里没有正文"))
    return SampleAnalysis(profile_from_samples([text]), [name], count_chars(text))
