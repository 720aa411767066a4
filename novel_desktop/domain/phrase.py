"""A sentence the core says to the author, kept as a template and its values (a *phrase*): the CLI and the log
print it in Chinese (:func:`phrase_text`), the window in its language (``i18n.tr_phrase`` translates the
template and the values that are catalogue keys). A value may be a phrase itself (a model error inside an
adoption error), translated the same way.
"""

from __future__ import annotations

from typing import Any

#: ``template.format(**values)`` is the Chinese text.
Phrase = tuple[str, dict[str, Any]]


def say(template: str, **values: Any) -> Phrase:
    return template, values


def is_phrase(value: object) -> bool:
    if not isinstance(value, tuple) or len(value) != 2:
        return False
    return isinstance(value[0], str) and isinstance(value[1], dict)


def phrase_text(phrase: Phrase) -> str:
    """The phrase in Chinese (a template without values is the text as it is, braces and all)."""
    template, values = phrase
    if not values:
        return template
    return template.format(**{k: phrase_text(v) if is_phrase(v) else v for k, v in values.items()})


__all__ = ["Phrase", "is_phrase", "phrase_text", "say"]
