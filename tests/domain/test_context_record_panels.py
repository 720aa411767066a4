"""The context record keeps the ordinary judge's two panels as two entries (评审组 A / 评审组 B): a retried
panel replaces only its own prompt, and records written before panels existed read as before."""

from __future__ import annotations

from novel_desktop.domain.context_record import ContextEntry, ContextSection, entries_from_json, merge_entry


def _entry(agent: str, panel: str = "", tokens: int = 10, round_: int = 0) -> ContextEntry:
    section = ContextSection("template", "模板", tokens)
    return ContextEntry(agent, round_, "quality_judge", "quality_judge", "m", (section,), tokens, panel=panel)


def test_both_panels_are_kept_in_order_and_a_retry_replaces_only_its_own() -> None:
    entries = merge_entry([], _entry("judge", "B"))
    entries = merge_entry(entries, _entry("writer"))
    entries = merge_entry(entries, _entry("judge", "A"))
    entries = merge_entry(entries, _entry("judge", "B", tokens=99))  # panel B's prompt sent again
    assert [e.title for e in entries] == ["写作 writer", "评审 judge · 评审组 A", "评审 judge · 评审组 B"]
    assert [e.total_tokens for e in entries] == [10, 10, 99]


def test_the_panel_survives_json_and_old_records_have_none() -> None:
    a = _entry("judge", "A")
    [back] = entries_from_json([a.to_json()])
    assert back == a and back.title == "评审 judge · 评审组 A"
    old = a.to_json()
    del old["panel"]
    [legacy] = entries_from_json([old])
    assert legacy.panel == "" and legacy.title == "评审 judge"
    assert "panel" not in _entry("writer").to_json()


def test_the_summarizers_two_parts_are_two_entries_s_before_m() -> None:
    from novel_desktop.domain.context_record import ContextEntry, merge_entry

    def part(name: str) -> ContextEntry:
        return ContextEntry("summarizer", 0, "summarizer", "summarizer", "m", (), 10, panel=name)

    entries = merge_entry(merge_entry([], part("M")), part("S"))
    assert [e.title for e in entries] == ["摘要 summarizer · 摘要组 S", "摘要 summarizer · 摘要组 M"]
