"""Generate a long novel (hundreds of chapters, a growing state) quickly, for benchmarks."""

from __future__ import annotations

import json
import random
from pathlib import Path

from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json

SURNAMES = "林陈苏叶秦萧顾沈韩楚云江白孟赵周吴郑王冯"
GIVEN = "枫岚雪尘羽寒月青衡远清川烟安宁墨辰瑶霜歌"
PLACES = [
    "青石镇",
    "苍梧山",
    "落霞谷",
    "洛阳城",
    "北冥海",
    "天机阁",
    "断魂崖",
    "玄武门",
    "白鹿书院",
    "寒山寺",
]
LINES = ["main_arc", "sect_intrigue", "old_secret"]

PARA = (
    "{who}沿着{where}的石阶往上走，雨后的青苔滑得很，他走一步停一步。山风里有松脂的味道，"
    "远处传来钟声，一下，两下，他数到第七下的时候，{other}从檐下走出来，手里拎着一盏没点的灯。"
    "“你来得比我想的早。”{other}说。{who}没接话，把怀里那封信又按了按。"
)


def _name(rng: random.Random) -> str:
    return rng.choice(SURNAMES) + rng.choice(GIVEN) + rng.choice(GIVEN)


def chapter_text(n: int, rng: random.Random, cast: list[str]) -> str:
    who, other = rng.sample(cast, 2)
    paras = [PARA.format(who=who, other=other, where=rng.choice(PLACES)) for _ in range(14)]
    return f"# 第{n}章 {rng.choice(PLACES)}夜话\n\n" + "\n\n".join("　　" + p for p in paras) + "\n"


def outline(volume: int, first: int, last: int, rng: random.Random) -> str:
    parts = [f"# 第{volume}卷\n\n本卷 {last - first + 1} 章。\n"]
    for n in range(first, last + 1):
        parts.append(
            f"## 第{n}章 {rng.choice(PLACES)}\n- **Storyline**: {LINES[n % 3]}\n- **POV**: 林枫\n"
            f"- **Location**: {rng.choice(PLACES)}\n- **Conflict**: 一场关于信的争执\n- **Arc**: 由疑到信\n"
            f"- **Foreshadowing**: 推进 clue-{n % 40}\n- **StateChanges**: 林枫到达{rng.choice(PLACES)}\n"
        )
    return "\n".join(parts)


def generate(path: Path, chapters: int, *, per_volume: int = 50, seed: int = 7) -> Path:
    """A novel with ``chapters`` committed chapters, summaries, a state that grows with them, storylines,
    characters with contracts, and an outline for the volume after the last chapter."""
    rng = random.Random(seed)
    store = NovelStore.create(path, title="长篇基准", genre="玄幻", platform="qidian")
    try:
        cast_ids = [f"char-{i:03d}" for i in range(120)]
        cast_names = [_name(rng) for _ in cast_ids]
        for cid, name in list(zip(cast_ids, cast_names, strict=True))[:40]:
            doc = {
                "id": cid,
                "name": name,
                "aliases": [],
                "speech_pattern": "说话短，爱反问",
                "contracts": [
                    {"id": f"C-{cid.upper()}-001", "type": "capability", "rule": "筑基后期，不能御剑"}
                ],
            }
            store.put_document(f"characters/active/{cid}.json", json.dumps(doc, ensure_ascii=False))
        store.put_document(
            "world/rules.json",
            json.dumps(
                {
                    "rules": [
                        {
                            "id": f"W-{i:03d}",
                            "category": "magic",
                            "rule": f"规则{i}：修炼有代价",
                            "constraint_type": "hard" if i < 4 else "soft",
                        }
                        for i in range(1, 9)
                    ]
                },
                ensure_ascii=False,
            ),
        )
        store.put_document(
            "storylines/storylines.json",
            json.dumps(
                {
                    "storylines": [
                        {
                            "id": s,
                            "name": s,
                            "type": "main_arc" if s == "main_arc" else "conspiracy",
                            "status": "active",
                        }
                        for s in LINES
                    ]
                },
                ensure_ascii=False,
            ),
        )
        store.put_document(
            "style-profile.json",
            json.dumps(
                {
                    "avg_sentence_length": 18,
                    "dialogue_ratio": 0.35,
                    "writing_directives": ["短句推进", "对话带口头禅"],
                },
                ensure_ascii=False,
            ),
        )
        for n in range(1, chapters + 1):
            volume = (n - 1) // per_volume + 1
            version = store.state_version()
            who = rng.randrange(len(cast_ids))
            ops = [
                {"op": "set", "path": f"characters.{cast_ids[who]}.location", "value": rng.choice(PLACES)},
                {
                    "op": "set",
                    "path": f"characters.{cast_ids[who]}.emotional_state",
                    "value": rng.choice(["警觉", "平静", "愤怒"]),
                },
                {"op": "add", "path": f"characters.{cast_ids[who]}.inventory", "value": f"信物{n}"},
                {"op": "set", "path": f"locations.loc-{n % 60:02d}.status", "value": f"第{n}章后有变"},
                {
                    "op": "foreshadow",
                    "path": f"clue-{n % 40}",
                    "value": "advanced" if n > 40 else "planted",
                    "detail": f"第{n}章",
                },
            ]
            store.put_staging(layout.chapter_path(n), chapter_text(n, rng, cast_names[:30]), kind="refined")
            store.put_staging(
                layout.summary_path(n),
                f"第{n}章：{cast_names[who]}在{rng.choice(PLACES)}与人争执，信的下落仍不明。" * 3,
            )
            store.put_staging(
                layout.delta_path(n),
                json.dumps({"chapter": n, "base_state_version": version, "ops": ops}, ensure_ascii=False),
            )
            # A whole verdict (eight scored dimensions with reasons and evidence), as the judge writes it: the
            # window's quality panel builds its report from it when the novel opens.
            verdict = json.loads(judge_json(round(rng.uniform(3.5, 4.5), 2)))
            verdict["chapter"] = n
            store.put_staging(layout.evaluation_path(n), json.dumps(verdict, ensure_ascii=False))
            store.put_staging(
                layout.memory_path(LINES[n % 3]),
                f"{LINES[n % 3]} 线记忆：到第{n}章为止的关键事实。" * 8,
                chapter=n,
            )
            store.commit_chapter(n, volume=volume, storyline_id=LINES[n % 3])
        nxt = chapters + 1
        volume = (nxt - 1) // per_volume + 1
        first = (volume - 1) * per_volume + 1
        store.put_document(
            f"{layout.volume_dir(volume)}/outline.md", outline(volume, first, first + per_volume - 1, rng)
        )
        store.update_checkpoint(current_volume=volume, orchestrator_state="WRITING")
    finally:
        store.close()
    return path
