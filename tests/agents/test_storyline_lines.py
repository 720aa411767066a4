"""Adjacent vs frozen storylines in the writer's context (seed 004 §6.6.7 Layer 1)."""

from __future__ import annotations

import dataclasses

from novel_desktop.agents.context import load_facts
from novel_desktop.storage.store import NovelStore


def test_convergence_partners_are_adjacent_and_the_rest_frozen(seed_store: NovelStore) -> None:
    facts = load_facts(seed_store, 3)
    facts = dataclasses.replace(
        facts,
        storylines=[
            {"id": "main_arc", "type": "main_arc"},
            {"id": "sect_war", "status": "dormant", "description": "两宗相争"},
            {"id": "old_feud", "status": "dormant", "description": "陈老的过去"},
        ],
        schedule={
            "active_storylines": [{"storyline_id": "main_arc"}],
            "convergence_events": [
                {"chapter_range": [3, 4], "involved_storylines": ["main_arc", "sect_war"]}
            ],
        },
        memories={"main_arc": "主线记忆", "sect_war": "- 使者携战书而来", "old_feud": "- 陈老是弃徒"},
    )
    assert facts.adjacent_lines() == ["sect_war"]
    assert "使者携战书而来" in facts.adjacent_memories()
    frozen = facts.concurrent_state()
    assert "sect_war" not in frozen and "old_feud" in frozen and "弃徒" in frozen  # its first memory line
    # Outside the event's chapters the partner is frozen again.
    later = dataclasses.replace(facts, chapter=5)
    assert later.adjacent_lines() == [] and "sect_war" in later.concurrent_state()
