"""Canned agent replies for the fake Messages API server: what a well-behaved model would answer."""

from __future__ import annotations

import json

from novel_desktop.domain.evaluation import DIMENSION_WEIGHTS

PARAGRAPHS = [
    "山门前的石阶湿得发亮，林枫背着药篓，一级一级往上数。数到第九十九级，他停下来喘气，回头看了一眼山下的雾。",
    "守门的弟子抱着胳膊，上下打量他，嘴角勾起一抹冷笑：“十七了？过线了，回去吧。”",
    "林枫没动。他从怀里摸出那块残玉，玉上的水云纹在阴天里也泛着一层淡光。",
    "弟子的脸色变了，转身进了门房，过了一盏茶的工夫，领出来一个穿灰袍的执事。",
    "执事接过残玉看了很久，又还给他，从袖子里抽出一块木牌：“明日辰时，问心阶。”",
    "木牌的背面刻着和残玉一样的纹路。林枫用指甲顺着纹路划了一遍，心里发紧，却没敢多问。",
]

#: The rest of the day, once, after the repeated scene: it brings writer_text() into the seed's default
#: 2,500-3,500 字, so a well-behaved draft needs no length pass.
ENDING = [
    "天色暗下来的时候，林枫在山脚的破庙里生了一小堆火。药篓里还剩半块干饼，他掰成两半，一半就着雪水咽下去，"
    "另一半用油纸包好，塞回篓底。庙里的神像缺了半边脸，火光一跳，那半张脸就像在笑。他不看它，只把残玉攥在手心，"
    "玉是凉的，攥久了才慢慢有一点温度。",
    "他想起出门那天，娘站在院门口，手里的针线没停，只说了一句早去早回。他那时候没回头，怕一回头就走不成了。"
    "现在想回头也看不见了，山下的雾把来路吞得干干净净，连村口那棵老槐树都找不到影子。",
    "半夜里起了风，庙门被吹得吱呀作响。林枫睡不踏实，索性坐起来，借着余火把木牌翻来覆去地看。木牌是新削的，"
    "边上还有毛刺，刻纹却很老，一道压着一道，像是照着什么旧物一笔一笔描下来的。他数了数，纹路一共九折，"
    "和残玉上的一样多。",
    "鸡叫头遍，他就收拾好东西往山上走。石阶上结了薄霜，他走得很慢，每一步都先用脚尖试一试。走到半山腰，"
    "雾散了一些，能看见山门前已经站了十几个人，有的背着剑，有的牵着马，也有和他一样只背一个篓子的。"
    "没人说话，只有呼出来的白气一团一团往上飘。",
    "辰时的钟响了三下。问心阶从山门一直铺到云里，看不见头。执事站在第一级台阶上，把名册卷起来插进袖子，"
    "说上去吧，能走多高走多高，走不动了就自己下来，没人拦你。人群动了，有人抢在前面，有人故意落在后面。"
    "林枫把篓子往上颠了颠，踩上了第一级。",
    "第一级没什么。第十级也没什么。到了第三十级，他忽然听见有人在耳边叫他的小名，声音很近，像是娘。"
    "他停住脚，攥紧了残玉，没有回头，又往上迈了一步。那声音就断了，像一根线被人从中间剪开。",
]


def writer_text(repeat: int = 6) -> str:
    """A chapter body (no heading: the program adds it) followed by the hints block."""
    body = "\n\n".join(PARAGRAPHS * repeat + ENDING * 2)
    hints = {
        "chapter": 0,
        "storyline_id": "main_arc",
        "hints": [{"op": "set", "path": "characters.lin-feng.location", "value": "苍梧宗山门"}],
        "notes": [],
    }
    return body + "\n\n```json\n" + json.dumps(hints, ensure_ascii=False) + "\n```\n"


def summarizer_json(location: str = "苍梧宗山门") -> str:
    return json.dumps(
        {
            "chapter": 0,
            "storyline_id": "main_arc",
            "summary": "林枫持残玉上山，守门弟子以年龄拒收，执事验玉后发给考核木牌，木牌背面与残玉同纹。",
            "patch": {
                "chapter": 0,
                "base_state_version": 0,
                "storyline_id": "main_arc",
                "ops": [
                    {"op": "set", "path": "characters.lin-feng.location", "value": location},
                    {"op": "add", "path": "characters.lin-feng.inventory", "value": "考核木牌"},
                ],
            },
            "foreshadowing": [],
            "storyline_memory": "林枫凭残玉获准参加问心阶考核；木牌与残玉同纹。",
            "cross_references": [],
            "leak_risk": "low",
        },
        ensure_ascii=False,
    )


def refiner_json() -> str:
    return json.dumps(
        {"edits": [{"original": "嘴角勾起一抹冷笑", "refined": "哼了一声", "reason": "黑名单：神态套话"}]},
        ensure_ascii=False,
    )


def judge_json(score: float, *, violation: bool = False) -> str:
    scores = {
        name: {
            "score": score,
            "weight": weight,
            "reason": "细节具体，推进清楚",
            "evidence": "木牌的背面刻着和残玉一样的纹路",
        }
        for name, weight in DIMENSION_WEIGHTS.items()
    }
    return json.dumps(
        {
            "chapter": 1,
            "contract_verification": {"W-001": "violation" if violation else "pass"},
            "scores": scores,
            "overall": score,
            "recommendation": "pass" if score >= 3.5 else "revise",
            "violations": [{"rule_id": "W-001", "confidence": "high", "description": "越级使用法术"}]
            if violation
            else [],
            "risk_flags": [],
            "required_fixes": [{"target": "第2段", "instruction": "守门弟子的态度写得更具体"}]
            if score < 4
            else [],
            "issues": ["守门弟子脸谱化"] if score < 4 else [],
            "strengths": ["细节扎实"],
        },
        ensure_ascii=False,
    )


def script_defaults(server, *, score: float = 4.2) -> None:  # type: ignore[no-untyped-def]
    """Every role answers well by default."""
    from tests.fakes.anthropic_server import Reply

    server.set_default("chapter_writer", Reply(writer_text(), chunk_size=40))
    server.set_default("reviser", Reply(writer_text(), chunk_size=40))
    server.set_default("summarizer", summarizer_json())
    server.set_default("style_refiner", refiner_json())
    server.set_default("quality_judge", judge_json(score))
    server.set_default("judge_secondary", judge_json(score))


# --- replies of realistic size, for the benchmarks (a real judge writes ~1.7K tokens, a summary ~0.7K) ---
_REASON = (
    "本章围绕林枫上山求入宗门展开，守门弟子的拒绝与执事验玉构成完整的因果链，残玉与木牌同纹的细节把伏笔"
    "压在了动作里，没有直接点破；不足之处是中段等候的笔墨略多，人物的心理变化主要靠动作暗示，读者需要自己补全"
)
_EVIDENCE = "执事接过残玉看了很久，又还给他，从袖子里抽出一块木牌：“明日辰时，问心阶。”"


def realistic_judge_json(score: float) -> str:
    """A judge reply of about 1.7K tokens: every dimension with a full reason and evidence, fixes, issues."""
    reply = json.loads(judge_json(score))
    for entry in reply["scores"].values():
        entry["reason"] = _REASON
        entry["evidence"] = _EVIDENCE
    reply["contract_verification"].update({f"OBJ-{i:03d}-1": "pass" for i in range(1, 6)})
    reply["issues"] = [f"第{i}段：{_REASON[:60]}" for i in range(1, 4)]
    reply["strengths"] = [_REASON[:80], _EVIDENCE]
    reply["risk_flags"] = []
    return json.dumps(reply, ensure_ascii=False)


def panel_json(full: str, panel: str) -> str:
    """One judge panel's part of the judge reply ``full`` (agents/judge_panels.py): its dimensions, and
    compliance for panel A / new AI phrases for panel C; the lists shared out one item each (C the rest)."""
    from novel_desktop.agents.judge_panels import PANEL_DIMENSIONS, PANELS

    reply = json.loads(full)
    at = PANELS.index(panel)
    share = slice(at, None) if panel == PANELS[-1] else slice(at, at + 1)
    part = {
        "chapter": reply["chapter"],
        "scores": {k: v for k, v in reply["scores"].items() if k in PANEL_DIMENSIONS[panel]},
        "risk_flags": reply.get("risk_flags", []),
        "contract_verification": reply["contract_verification"] if panel == "A" else {},
        "violations": reply["violations"] if panel == "A" else [],
        "required_fixes": reply["required_fixes"][share],
        "issues": reply["issues"][share],
        "strengths": reply["strengths"][share],
    }
    if panel == PANELS[-1]:
        part["new_ai_phrases"] = reply.get("new_ai_phrases", [])
    return json.dumps(part, ensure_ascii=False)


def summary_part_json(full: str, part: str) -> str:
    """One summarizer part's share of the summary reply ``full`` (agents/summary_parts.py): the storyline
    memory for part M, everything else for part S."""
    reply = json.loads(full)
    head = {"chapter": reply["chapter"], "storyline_id": reply["storyline_id"]}
    if part == "M":
        return json.dumps({**head, "storyline_memory": reply.get("storyline_memory")}, ensure_ascii=False)
    return json.dumps({**reply, "storyline_memory": None}, ensure_ascii=False)


def realistic_summarizer_json() -> str:
    """A summary reply of about 0.7K tokens: a 300-字 summary, a patch of several ops, a new memory."""
    reply = json.loads(summarizer_json())
    reply["summary"] = (_REASON + "。" + _EVIDENCE)[:300]
    reply["patch"]["ops"] += [
        {"op": "set", "path": "characters.lin-feng.emotional_state", "value": "忐忑"},
        {"op": "set", "path": "items.kaohe-mupai.name", "value": "考核木牌"},
        {"op": "set", "path": "world_state.time_marker", "value": "开山日次日辰时"},
    ]
    memory = (_REASON + _EVIDENCE) * 3
    reply["storyline_memory"] = "# 主线记忆\n\n" + "\n".join(
        f"- {memory[i : i + 50]}" for i in range(0, 500, 50)
    )
    return json.dumps(reply, ensure_ascii=False)


def realistic_refiner_json() -> str:
    """A handful of edits, each on a phrase of writer_text()."""
    edits = [
        ("嘴角勾起一抹冷笑", "哼了一声", "黑名单：神态套话"),
        ("心里发紧，却没敢多问", "指甲掐进了木纹里", "风格：直接写情绪"),
        ("过了一盏茶的工夫", "过了好一阵", "风格：贴近指纹"),
        ("他不看它，只把残玉攥在手心", "他别开脸，攥紧了残玉", "句式：长句拆短"),
        ("没人说话，只有呼出来的白气一团一团往上飘", "谁也不吭声，白气一团团往上飘", "风格：贴近指纹"),
    ]
    return json.dumps(
        {"edits": [{"original": o, "refined": r, "reason": why} for o, r, why in edits]}, ensure_ascii=False
    )
