"""The settings controller's saving side: the price table parsed with the author's mistakes named, and keys
written to the keyring only when they changed."""

from __future__ import annotations

import pytest

from novel_desktop.controllers import settings_controller
from novel_desktop.controllers.settings_controller import ModelPrice, parse_price_rows, save_keys

FIELDS = (("input", "输入"), ("output", "输出"), ("cache_write", "缓存写入"), ("cache_read", "缓存读取"))


def test_a_price_table_is_parsed_and_empty_rows_are_ignored() -> None:
    prices, problem, row = parse_price_rows([["m1", "3", "15", "", "0.3"], ["", "", "", "", ""]], FIELDS)
    assert problem is None and row == -1
    assert prices == {"m1": ModelPrice(input=3, output=15, cache_write=0, cache_read=0.3)}


@pytest.mark.parametrize(
    ("rows", "says", "bad_row"),
    [
        ([["", "1", "", "", ""]], "缺少模型名称", 0),
        ([["m", "1", "1", "1", "1"], ["m", "2", "2", "2", "2"]], "出现了两次", 1),
        ([["m", "贵", "1", "1", "1"]], "不是数字", 0),
        ([["m", "-1", "1", "1", "1"]], "不能为负数", 0),
    ],
)
def test_the_first_mistake_in_the_price_table_is_named(
    rows: list[list[str]], says: str, bad_row: int
) -> None:
    prices, problem, row = parse_price_rows(rows, FIELDS)
    assert prices == {} and problem is not None and says in problem and row == bad_row


def test_only_changed_keys_reach_the_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(settings_controller, "set_api_key", lambda p, k: calls.append(("set", p)))
    monkeypatch.setattr(settings_controller, "delete_api_key", lambda p: calls.append(("delete", p)))
    stored = {"anthropic": "sk-old", "deepseek": "sk-ds", "kimi": ""}
    save_keys({"anthropic": "sk-new", "deepseek": "", "kimi": ""}, stored)
    assert calls == [("set", "anthropic"), ("delete", "deepseek")]
    assert stored == {"anthropic": "sk-new", "deepseek": "", "kimi": ""}
