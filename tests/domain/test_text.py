"""字数: the fast count equals the character-by-character definition on any text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from novel_desktop.domain.text import count_chars, is_fullwidth_punct, is_han


def count_chars_slow(text: str) -> int:
    """:func:`count_chars` spelled out character by character: the definition the fast count must match."""
    total = 0
    in_word = False
    for ch in text:
        if is_han(ch) or is_fullwidth_punct(ch):
            total += 1
            in_word = False
        elif ch.isalnum():
            if not in_word:
                total += 1
                in_word = True
        else:
            in_word = False
    return total


# Every kind of character the definition tells apart, plus anything at all.
_INTERESTING = st.sampled_from(
    [
        *"林风〇〡。，“”‘’…—·「」　 \n\tabcXYZ019_-ＡＢＣ１２３！？（）～﹏﹐",
        "\U00020000",
        "\U00030000",
        "\u3400",
    ]
)


@settings(max_examples=400)
@given(st.lists(st.one_of(_INTERESTING, st.characters()), max_size=80).map("".join))
def test_the_fast_count_is_the_definition(text: str) -> None:
    assert count_chars(text) == count_chars_slow(text)


def test_what_counts() -> None:
    assert count_chars("林风说：“走。”") == 8
    assert count_chars("Hello world, 2024年") == 4  # two words, a number, 年 (the comma is ASCII)
    assert count_chars("ＡＢＣ１２３") == 1  # a run of full-width letters and digits is one word
    assert count_chars("　　\n\n  ") == 0
