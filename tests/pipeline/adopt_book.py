"""A small imported book of six chapters and the fake model's replies for 接续已有书稿 (shared by the
pipeline, CLI and window tests of the adoption)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from novel_desktop.analysis.manuscript import split_manuscript
from novel_desktop.storage.manuscript_import import import_manuscript

NAMES = ["山门", "问心阶", "外门", "灵田", "夜雨", "残玉"]
CHAPTERS = 6


def manuscript() -> str:
    parts = ["《青石问道》\n"]
    for n, name in enumerate(NAMES, start=1):
        body = "\n\n".join(
            f"林枫在{name}前站了很久。陈老说：“第{n}回，别急。”他点点头，握紧了怀里的残玉，第{k}次抬头看天。"
            for k in range(1, 6)
        )
        parts.append(f"第{n}章 {name}\n\n{body}\n")
    return "\n".join(parts)


def imported_book(tmp_path: Path, name: str = "青石问道") -> Path:
    """The six chapters imported as a new novel (as 导入书稿 / novel import-text make it)."""
    path = tmp_path / f"{name}.novel"
    import_manuscript(split_manuscript(manuscript()), path, title=name, source_name="青石问道.txt")
    return path


def note_json(n: int) -> str:
    return json.dumps(
        {
            "chapter": n,
            "summary": f"第{n}章摘要：林枫来到{NAMES[n - 1]}，陈老叮嘱他别急。",
            "characters": [
                {
                    "name": "林枫",
                    "aliases": ["小枫"],
                    "role": "protagonist",
                    "traits": ["倔强"],
                    "status_change": "",
                },
                {"name": "陈老", "aliases": [], "role": "mentor", "traits": ["寡言"], "status_change": ""},
            ],
            "world_facts": [f"{NAMES[n - 1]}属于苍梧宗"],
            "threads": [
                {"id": "broken_jade", "action": "planted" if n == 1 else "advanced", "description": "残玉"}
            ],
            "storylines": ["main_arc"],
            "end_state": f"林枫在{NAMES[n - 1]}。",
        },
        ensure_ascii=False,
    )


def synthesis(**override: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "world": {
            "rules": [
                {
                    "id": "W-001",
                    "category": "magic_system",
                    "rule": "残玉只认林枫",
                    "constraint_type": "hard",
                },
                {
                    "id": "W-002",
                    "category": "social",
                    "rule": "外门弟子不得擅入灵田",
                    "constraint_type": "soft",
                },
            ],
            "documents": [{"file": "setting.md", "content": "# 苍梧宗\n\n宗门在青石镇北。"}],
        },
        "characters": {
            "characters": [
                {
                    "id": "lin-feng",
                    "name": "林枫",
                    "aliases": ["小枫"],
                    "role": "protagonist",
                    "contracts": [
                        {"id": "C-LINFENG-001", "type": "capability", "rule": "只会粗浅拳脚"},
                        {"id": "C-LINFENG-002", "type": "personality", "rule": "倔强，不低头求人"},
                    ],
                },
                {
                    "id": "chen-lao",
                    "name": "陈老",
                    "role": "mentor",
                    "contracts": [
                        {"id": "C-CHENLAO-001", "type": "capability", "rule": "深藏不露"},
                        {"id": "C-CHENLAO-002", "type": "personality", "rule": "寡言，不讲旧事"},
                    ],
                },
            ],
            "relationships": [{"from": "lin-feng", "to": "chen-lao", "type": "师徒", "value": 60}],
        },
        "storylines": {
            "storylines": [
                {
                    "id": "main_arc",
                    "name": "林枫问道",
                    "type": "main_arc",
                    "scope": "novel",
                    "pov_characters": ["林枫"],
                    "status": "active",
                    "description": "林枫入宗求道",
                }
            ]
        },
        "foreshadowing": [
            {"id": "broken_jade", "description": "残玉的来历", "status": "advanced", "planted_chapter": 1}
        ],
        "state": {
            "characters": {"lin-feng": {"location": "残玉", "realm": "炼气一层"}},
            "world_state": {"time_marker": "永安三年冬"},
        },
    }
    data.update(override)
    return data


STYLE = json.dumps(
    {
        "source_type": "original",
        "avg_sentence_length": 99,
        "dialogue_ratio": 0.9,
        "rhetoric_preferences": ["短句"],
        "forbidden_words": [],
        "character_speech_patterns": {},
        "writing_directives": ["句子短，动作推进"],
    },
    ensure_ascii=False,
)


def script_adoption(server: Any, chapters: range = range(1, CHAPTERS + 1)) -> None:
    """The reader's notes for ``chapters``, then the synthesis and the style."""
    server.script("summarizer", *(note_json(n) for n in chapters))
    server.script("world_builder", json.dumps(synthesis(), ensure_ascii=False))
    server.script("style_analyzer", STYLE)


def accept_all() -> dict[str, Any]:
    """An answers file that accepts every proposal of the adoption."""
    return {
        "world review": {"review_action": "接受"},
        "characters review": {"review_action": "接受"},
        "storylines review": {"review_action": "接受"},
        "adopt state": {"state_action": "接受"},
        "adopt style": {"style_action": "接受"},
    }
