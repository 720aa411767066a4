"""Target platforms and what their readers expect of a chapter (the writer and the judge follow it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PlatformProfile:
    id: str
    name: str
    min_chars: int
    max_chars: int
    hook: str
    pacing: str

    def describe(self) -> str:
        """The profile as the ChapterWriter and QualityJudge read it."""
        return (
            f"平台：{self.name}。每章 {self.min_chars}-{self.max_chars} 字。"
            f"章末要求：{self.hook}。节奏：{self.pacing}。"
        )


PLATFORMS: dict[str, PlatformProfile] = {
    "qidian": PlatformProfile(
        "qidian",
        "起点中文网",
        2500,
        4000,
        "每章结尾留悬念或爽点预告，让读者想点下一章",
        "主线推进稳，升级与打脸节点清楚，设定可以铺但不能连篇",
    ),
    "tomato": PlatformProfile(
        "tomato",
        "番茄小说",
        2000,
        3000,
        "强钩子收尾，最后三行必须抛出新冲突或反转",
        "开篇即冲突，短段落、快节奏，一章至少一个情绪高点",
    ),
    "jjwxc": PlatformProfile(
        "jjwxc",
        "晋江文学城",
        3000,
        5000,
        "情绪钩子收尾：关系的变化或未说出口的话",
        "人物关系和情感线是主轴，细节与对话要细腻",
    ),
    "web": PlatformProfile(
        "web",
        "自建站/博客",
        2500,
        3500,
        "自然收束并留一个让人想读下去的问题",
        "按作品自身节奏，不为平台数据牺牲文气",
    ),
}


def platform_profile(platform: str) -> PlatformProfile:
    """The profile of a platform id (``web`` for an unknown one)."""
    return PLATFORMS.get(platform, PLATFORMS["web"])
