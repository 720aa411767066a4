"""The agents of 接续已有书稿 (issue 19 point 1): the book reader and the book synthesis.

``read`` turns one imported chapter (with a bounded synopsis of the chapters before it) into a
:class:`~novel_desktop.domain.adoption.ChapterNote` on the summarizer's model (the fast tier: a 500-chapter
book is read once, chapter by chapter); ``synthesize`` turns the folded notes into a
:class:`~novel_desktop.domain.adoption.BookSynthesis` on the world builder's model. Both templates' fixed
instructions are one cached system block, so every chapter after the first reads it from the prompt cache.
"""

from __future__ import annotations

from typing import Protocol

from novel_desktop.agents.calls import structured_call
from novel_desktop.agents.context import estimate_tokens, trim_to_tokens
from novel_desktop.agents.ports import AgentResult
from novel_desktop.agents.templates import load_template, render_template
from novel_desktop.domain.adoption import BookSynthesis, ChapterNote
from novel_desktop.llm.client import LLMClient
from novel_desktop.llm.roles import AgentRole

READER = "book_reader"
SYNTHESIS = "book_synthesis"
#: The role whose model reads the chapters (the fast tier) and the one that synthesises (the strong tier).
READER_ROLE = AgentRole.summarizer
SYNTHESIS_ROLE = AgentRole.world_builder
#: Budgets that keep every prompt small however long the book: the synopsis of the chapters before, one
#: chapter's text, and the digest of all notes.
SYNOPSIS_TOKENS = 2_000
CHAPTER_TOKENS = 12_000
DIGEST_TOKENS = 24_000
#: What a reply is expected to cost in output tokens (the estimate shown before anything starts).
NOTE_OUTPUT_TOKENS = 700
SYNTHESIS_OUTPUT_TOKENS = 5_000


def reader_context(chapter: int, synopsis: str, text: str) -> dict[str, str]:
    """Slots of prompts/book_reader.md."""
    return {
        "chapter_num": str(chapter),
        "synopsis": trim_to_tokens(synopsis, SYNOPSIS_TOKENS, keep="end"),
        "chapter_content": trim_to_tokens(text.strip(), CHAPTER_TOKENS, keep="start"),
    }


def synthesis_context(title: str, chapters: int, last: int, digest: str, request: str = "") -> dict[str, str]:
    """Slots of prompts/book_synthesis.md."""
    return {
        "book_title": title,
        "chapter_count": str(chapters),
        "last_chapter": str(last),
        "notes_digest": trim_to_tokens(digest, DIGEST_TOKENS, keep="end"),
        "update_request": request,
    }


def fixed_tokens(name: str) -> int:
    """The tokens of a template's text without its slots' values (for the estimate)."""
    template = load_template(name)
    return estimate_tokens("\n".join([*template.system_sections, template.user]))


class AdoptAgents(Protocol):
    """What the adoption pipeline needs from the agents (tests may implement it directly)."""

    async def read(self, context: dict[str, str]) -> AgentResult[ChapterNote]: ...

    async def synthesize(self, context: dict[str, str]) -> AgentResult[BookSynthesis]: ...


class LLMAdoptAgents:
    """The book reader and the book synthesis over the LLM client."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client

    async def read(self, context: dict[str, str]) -> AgentResult[ChapterNote]:
        prompt = render_template(READER, context)
        return await structured_call(
            self.client,
            READER_ROLE,
            prompt,
            ChapterNote,
            what=f"第 {context['chapter_num']} 章的读书笔记",
            chapter=context["chapter_content"],
        )

    async def synthesize(self, context: dict[str, str]) -> AgentResult[BookSynthesis]:
        prompt = render_template(SYNTHESIS, context)
        return await structured_call(self.client, SYNTHESIS_ROLE, prompt, BookSynthesis, what="全书设定")


__all__ = [
    "CHAPTER_TOKENS",
    "NOTE_OUTPUT_TOKENS",
    "READER",
    "READER_ROLE",
    "SYNOPSIS_TOKENS",
    "SYNTHESIS",
    "SYNTHESIS_OUTPUT_TOKENS",
    "SYNTHESIS_ROLE",
    "AdoptAgents",
    "LLMAdoptAgents",
    "fixed_tokens",
    "reader_context",
    "synthesis_context",
]
