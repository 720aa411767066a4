"""The judge's issues as concrete edits (issue 14, item 7): one call of prompts/fix_suggester.md.

The reviser's model (the stronger one, which already revises chapters from the judge's required fixes)
answers with :class:`~novel_desktop.domain.suggestions.SuggestionsReply`; locating the edits in the text and
applying the ones the author accepts is the pipeline's and the editor's business.
"""

from __future__ import annotations

from collections.abc import Sequence

from novel_desktop.agents.calls import structured_call
from novel_desktop.agents.context import NovelFacts, load_facts
from novel_desktop.agents.facts import blacklist_words
from novel_desktop.agents.ports import AgentResult
from novel_desktop.agents.templates import RenderedPrompt, render_template
from novel_desktop.domain.suggestions import SuggestionsReply
from novel_desktop.llm.client import LLMClient
from novel_desktop.llm.roles import AgentRole
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import NovelStore

TEMPLATE = "fix_suggester"


def suggester_context(facts: NovelFacts, text: str, issues: Sequence[str]) -> dict[str, str]:
    """Slots of prompts/fix_suggester.md."""
    return {
        "style_profile": facts.style_profile_text(),
        "ai_blacklist": facts.blacklist_text(blacklist_words(facts)),
        "chapter_num": str(facts.chapter),
        "chapter_outline": facts.chapter_outline,
        "chapter_contract": facts.chapter_contract_text(),
        "judge_issues": "\n".join(f"{i}. {line}" for i, line in enumerate(issues, 1)),
        "chapter_content": text,
    }


def suggester_prompt(store: NovelStore, chapter: int, text: str, issues: Sequence[str]) -> RenderedPrompt:
    """The rendered prompt for ``chapter`` (reads the novel: call it in a thread)."""
    return render_template(TEMPLATE, suggester_context(load_facts(store, chapter), text, issues))


async def suggest_fixes(
    client: LLMClient, store: NovelStore, chapter: int, text: str, issues: Sequence[str]
) -> AgentResult[SuggestionsReply]:
    """The suggestions for ``text`` (chapter ``chapter``) that address ``issues``; None when unparsable."""
    prompt = await db(suggester_prompt, store, chapter, text, list(issues))
    return await structured_call(client, AgentRole.reviser, prompt, SuggestionsReply, what="修改建议")


__all__ = ["TEMPLATE", "suggest_fixes", "suggester_context", "suggester_prompt"]
