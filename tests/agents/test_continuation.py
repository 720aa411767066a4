"""Joining a cut-off chapter text with its continuation: no repeated sentence, no second heading, one
seamless stream in the window (issue 16 point 1)."""

from __future__ import annotations

from novel_desktop.agents.continuation import LiveJoin, continue_message, join_continuation, last_sentence

SO_FAR = "# 第3章 开山\n\n林枫推开门。院子里站着一个人，背对着他，手里提着一盏灯。他走"


def test_an_echo_of_the_last_sentence_is_added_once() -> None:
    more = "院子里站着一个人，背对着他，手里提着一盏灯。他走过去，那人回过头来。"
    joined = join_continuation(SO_FAR, more)
    assert joined.endswith("手里提着一盏灯。他走过去，那人回过头来。")
    assert joined.count("院子里站着一个人") == 1


def test_a_repeated_heading_is_dropped() -> None:
    joined = join_continuation(SO_FAR, "# 第3章 开山\n\n过去，那人回过头来。")
    assert joined.count("# 第3章") == 1
    assert joined.endswith("他走过去，那人回过头来。")


def test_a_plain_continuation_is_appended_as_it_is() -> None:
    assert join_continuation(SO_FAR, "过去。") == SO_FAR + "过去。"
    # A new paragraph stays a new paragraph.
    assert join_continuation("第一段。", "\n\n第二段。") == "第一段。\n\n第二段。"


def test_the_request_quotes_the_last_sentence() -> None:
    assert last_sentence(SO_FAR).endswith("手里提着一盏灯。他走")
    message = continue_message(SO_FAR)
    assert "接着写" in message and "不要重复" in message
    assert "他走" in message


def test_the_window_sees_one_seamless_text() -> None:
    shown: list[str] = []
    resets: list[int] = []
    live = LiveJoin(shown.append, lambda: (resets.append(1), shown.clear()))
    for piece in (SO_FAR[:10], SO_FAR[10:]):
        live.delta(piece)
    live.finish_part(SO_FAR)
    # The continuation first repeats the end: nothing of the echo is shown twice.
    for piece in ("院子里站着", "一个人，背对着他，手里提着一盏灯。他走", "过去，那人", "回过头来。"):
        live.delta(piece)
    whole = live.finish_part("院子里站着一个人，背对着他，手里提着一盏灯。他走过去，那人回过头来。")
    assert "".join(shown) == whole
    assert whole.count("院子里站着一个人") == 1
    assert not resets


def test_a_restarted_continuation_shows_the_parts_before_it_again() -> None:
    shown: list[str] = []
    live = LiveJoin(shown.append, shown.clear)
    live.delta(SO_FAR)
    live.finish_part(SO_FAR)
    live.delta("过去，作废的")
    live.restart()
    live.delta("过去，那人回过头来。")
    whole = live.finish_part("过去，那人回过头来。")
    assert "".join(shown) == whole == SO_FAR + "过去，那人回过头来。"
