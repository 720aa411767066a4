"""Property tests: state ops hold their invariants for arbitrary, mostly broken, Summarizer output."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from novel_desktop.domain.state_ops import apply_patch, replay_changelog
from novel_desktop.domain.state_patch import PATH_TOP_LEVEL, PatchRejected, parse_patch, validate_op

PROPERTY_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Generating a whole sequence of patches costs more; fewer examples keep the file at a few seconds.
SEQUENCE_SETTINGS = settings(PROPERTY_SETTINGS, max_examples=100)

# A small alphabet of ids so that generated ops often hit the same paths as the state and each other.
SLUGS = st.sampled_from(["lin-feng", "chen_lao", "mo-du", "sword", "hp", "inventory", "a", "b2"])
CATEGORIES = st.sampled_from(sorted(PATH_TOP_LEVEL))

# A few values shared by states and ops, so remove/inc/add meet what is already there.
ATOMS = st.sampled_from([0, 1, 1.0, True, False, None, "a", "密信", "lin-feng"])
scalars = st.one_of(
    ATOMS,
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(SLUGS, st.text(max_size=4)), children, max_size=4),
    ),
    max_leaves=12,
)


def _wrap(depth: int) -> Any:
    value: Any = "leaf"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


# Nesting around the 32-level limit, either side of it.
deeply_nested = st.integers(min_value=20, max_value=60).map(_wrap)

# Values an LLM (or a bug) might put in an op: JSON, plus things no JSON document holds.
garbage_values = st.one_of(
    deeply_nested,
    st.sampled_from([float("nan"), float("inf"), 2**80, "\ud800", (1, 2), {1: "x"}, {"k": {2: 3}}, b"bytes"]),
)

valid_paths = st.builds(
    lambda category, rest: ".".join([category, *rest]), CATEGORIES, st.lists(SLUGS, min_size=1, max_size=3)
)
garbage_paths = st.one_of(
    st.text(max_size=20),
    st.builds(".".join, st.lists(st.one_of(SLUGS, CATEGORIES, st.text(max_size=4)), max_size=6)),
    st.sampled_from(["characters.林枫.location", "characters..x", "spells.fire", "characters", "上古预言"]),
    st.integers(),
    st.none(),
    st.lists(SLUGS, max_size=3),
)
VALID_KINDS = ["set", "inc", "add", "remove", "foreshadow"]
bad_kinds = st.one_of(st.sampled_from(["delete", "SET", "", "merge", "Foreshadow"]), st.integers(), st.none())
numbers = st.one_of(st.integers(min_value=-1000, max_value=1000), st.floats(-1e6, 1e6, allow_nan=False))


@st.composite
def good_ops(draw: st.DrawFn) -> dict[str, Any]:
    """An op that passes validate_op (it may still not fit the state)."""
    kind = draw(st.sampled_from(VALID_KINDS))
    if kind == "foreshadow":
        entry: dict[str, Any] = {
            "op": kind,
            "path": draw(SLUGS),
            "value": draw(st.sampled_from(["planted", "advanced", "resolved"])),
        }
        if draw(st.booleans()):
            entry["detail"] = draw(st.one_of(st.text(max_size=10), st.none()))
        return entry
    value = draw(numbers if kind == "inc" else ATOMS if kind == "remove" else st.one_of(ATOMS, json_values))
    return {"op": kind, "path": draw(valid_paths), "value": value}


@st.composite
def raw_ops(draw: st.DrawFn) -> Any:
    """An op entry: mostly valid, often with one field broken, sometimes not an object at all."""
    roll = draw(st.integers(min_value=0, max_value=9))
    if roll == 0:
        return draw(st.one_of(json_values, st.text(max_size=5)))
    entry = draw(good_ops())
    if roll >= 6:
        key = draw(st.sampled_from(["op", "path", "value", "detail", "extra"]))
        if draw(st.integers(min_value=0, max_value=4)) == 0 and key in entry:
            del entry[key]
        elif key == "op":
            entry["op"] = draw(st.one_of(bad_kinds, st.sampled_from(VALID_KINDS)))
        elif key == "path":
            entry["path"] = draw(garbage_paths)
        elif key == "value":
            entry["value"] = draw(st.one_of(garbage_values, st.booleans(), st.text(max_size=3)))
        elif key == "detail":
            entry["detail"] = draw(st.one_of(st.integers(), st.just("\ud800"), json_values))
        else:
            entry[draw(st.text(max_size=6))] = draw(json_values)
    return entry


def nested_state(depth: int) -> st.SearchStrategy[Any]:
    if depth == 0:
        return st.one_of(scalars, st.lists(scalars, max_size=3))
    return st.one_of(
        scalars,
        st.lists(scalars, max_size=3),
        st.dictionaries(SLUGS, nested_state(depth - 1), max_size=3),
    )


@st.composite
def states(draw: st.DrawFn) -> dict[str, Any]:
    state: dict[str, Any] = {
        "schema_version": 1,
        "state_version": draw(st.integers(min_value=0, max_value=1000)),
        "last_updated_chapter": draw(st.integers(min_value=0, max_value=1000)),
    }
    for category in draw(st.sets(CATEGORIES)):
        # Mostly the right shape, so ops get applied; sometimes not, so they get dropped.
        wrong_shape = draw(st.integers(min_value=0, max_value=5)) == 0
        if wrong_shape:
            state[category] = draw(nested_state(1))
        elif category == "active_foreshadowing":
            state[category] = draw(st.lists(SLUGS, max_size=4))
        else:
            state[category] = draw(
                st.dictionaries(SLUGS, st.dictionaries(SLUGS, nested_state(2), max_size=3), max_size=3)
            )
    if draw(st.booleans()):
        state["notes"] = draw(json_values)
    return state


@st.composite
def state_and_patch(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A state and a patch whose header fits it; the ops are arbitrary."""
    state = draw(states())
    patch: dict[str, Any] = {
        "chapter": draw(st.integers(min_value=1, max_value=2000)),
        "base_state_version": state["state_version"],
        "storyline_id": draw(st.one_of(st.none(), SLUGS)),
        "ops": draw(st.lists(st.one_of(raw_ops(), ops_on_existing(state)), max_size=12)),
    }
    if draw(st.booleans()):
        patch[draw(st.text(max_size=6))] = draw(json_values)
    return state, patch


def existing_leaves(state: dict[str, Any]) -> list[tuple[str, Any]]:
    """(path, value) of every node a generic op could address in ``state``."""
    found: list[tuple[str, Any]] = []

    def walk(node: Any, path: list[str]) -> None:
        if 2 <= len(path) <= 4:
            found.append((".".join(path), node))
        if isinstance(node, dict) and len(path) < 4:
            for key, child in node.items():
                walk(child, [*path, key])

    for category in PATH_TOP_LEVEL & state.keys():
        walk(state[category], [category])
    return found


@st.composite
def ops_on_existing(draw: st.DrawFn, state: dict[str, Any]) -> Any:
    """An op aimed at something the state holds: removing an element it has, incrementing a value it has."""
    leaves = existing_leaves(state)
    if not leaves:
        return draw(raw_ops())
    kind = draw(st.sampled_from(["set", "inc", "add", "remove"]))
    lists = [(path, node) for path, node in leaves if isinstance(node, list) and node]
    path, node = draw(st.sampled_from(lists if kind == "remove" and lists else leaves))
    if kind == "remove" and isinstance(node, list) and node:
        value = draw(st.sampled_from(node))
    elif kind == "inc":
        value = draw(numbers)
    else:
        value = draw(st.one_of(ATOMS, json_values))
    return {"op": kind, "path": path, "value": value}


def strict_json(value: Any) -> str:
    # sort_keys + no NaN: two documents are equal only if their JSON is, so True and 1 differ.
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


def check_result(state: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    before = strict_json(state)
    result = apply_patch(state, patch, now="2026-01-01T00:00:00+00:00")

    assert strict_json(state) == before, "the input state was mutated"
    strict_json(result.state).encode("utf-8")
    for entry in result.changelog:
        strict_json(entry).encode("utf-8")
    assert result.state["state_version"] == state["state_version"] + 1
    assert result.state["last_updated_chapter"] == patch["chapter"]
    assert result.state["schema_version"] == state["schema_version"]
    allowed = set(state) | PATH_TOP_LEVEL | {"state_version", "last_updated_chapter"}
    assert set(result.state) <= allowed
    assert all(validate_op(op) is None for op in result.applied)
    invalid = {index for index, op in enumerate(patch["ops"]) if validate_op(op) is not None}
    assert invalid <= {d.index for d in result.dropped}
    for dropped in result.dropped:
        assert dropped.op is patch["ops"][dropped.index]
        assert dropped.reason
        assert dropped.index not in invalid or dropped.reason == validate_op(dropped.op)
    assert len(result.applied) + len(result.dropped) == len(patch["ops"])
    assert sorted([d.index for d in result.dropped]) == [d.index for d in result.dropped]
    assert len(result.foreshadow_updates) == sum(op.op == "foreshadow" for op in result.applied)

    # Replay from a JSON round trip (as read back from changelog.jsonl) rebuilds the same state: this also
    # proves a dropped op left nothing behind, since replay never sees it.
    entries = [json.loads(strict_json(entry)) for entry in result.changelog]
    assert strict_json(replay_changelog(state, entries)) == strict_json(result.state)
    return result.state


@PROPERTY_SETTINGS
@given(state_and_patch())
def test_apply_patch_invariants(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    state, patch = case
    check_result(state, patch)


@SEQUENCE_SETTINGS
@given(states(), st.lists(st.lists(raw_ops(), max_size=6), min_size=1, max_size=4), st.data())
def test_replay_of_several_patches_matches_applying_them(
    start: dict[str, Any], op_lists: list[list[Any]], data: st.DataObject
) -> None:
    state = start
    changelog: list[dict[str, Any]] = []
    chapter = data.draw(st.integers(min_value=1, max_value=100))
    for ops in op_lists:
        patch = {"chapter": chapter, "base_state_version": state["state_version"], "ops": ops}
        result = apply_patch(state, patch, now="2026-01-01T00:00:00+00:00")
        changelog.extend(json.loads(strict_json(entry)) for entry in result.changelog)
        state = result.state
        chapter += 1

    assert strict_json(replay_changelog(start, changelog)) == strict_json(state)


MISSING = object()
header_garbage = st.one_of(
    st.just(MISSING),
    st.none(),
    st.booleans(),
    st.floats(),
    st.text(max_size=4),
    st.integers(max_value=0),
    json_values,
)


@st.composite
def headers(draw: st.DrawFn, state_version: int) -> tuple[dict[str, Any], bool]:
    """A patch whose header fields are each right or wrong, and whether the whole header is right."""
    good = {
        "chapter": draw(st.integers(min_value=1, max_value=5000)),
        "base_state_version": state_version,
        "storyline_id": draw(st.one_of(st.none(), SLUGS, st.just(MISSING))),
        "ops": draw(st.lists(raw_ops(), max_size=4)),
    }
    patch: dict[str, Any] = {}
    valid = True
    for key, value in good.items():
        if draw(st.integers(min_value=0, max_value=3)) == 0:
            bad = draw(
                header_garbage if key != "base_state_version" else st.one_of(header_garbage, st.integers())
            )
            fits = (
                (key == "storyline_id" and (bad is None or bad is MISSING or isinstance(bad, str)))
                or (key == "ops" and isinstance(bad, list))
                or (key == "base_state_version" and bad == state_version and type(bad) is int)
                # json_values may draw a positive whole number: a chapter number like any other
                or (key == "chapter" and type(bad) is int and bad >= 1)
            )
            valid = valid and fits
            value = bad
        if value is not MISSING:
            patch[key] = value
    return patch, valid


@SEQUENCE_SETTINGS
@given(states(), st.data(), st.booleans())
def test_only_a_bad_header_rejects_the_patch(
    state: dict[str, Any], data: st.DataObject, as_text: bool
) -> None:
    patch, valid = data.draw(headers(state["state_version"]))
    before = strict_json(state)
    raw: Any = patch
    if as_text:
        try:
            raw = strict_json(patch)
        except (ValueError, TypeError):  # NaN or bytes cannot be JSON text; pass the object itself
            raw = patch

    try:
        apply_patch(state, raw, now="2026-01-01T00:00:00+00:00")
    except PatchRejected as exc:
        rejected, reason = True, exc.reason
    else:
        rejected, reason = False, ""

    assert rejected != valid, (patch, reason)
    assert strict_json(state) == before
    if valid:
        check_result(state, patch)


@PROPERTY_SETTINGS
@given(json_values)
def test_a_patch_that_is_not_an_object_is_rejected(raw: Any) -> None:
    state = {"schema_version": 1, "state_version": 0}
    if isinstance(raw, dict):
        raw = [raw]
    try:
        apply_patch(state, json.dumps(raw), now="2026-01-01T00:00:00+00:00")
    except PatchRejected as exc:
        reason = exc.reason
    else:
        raise AssertionError("a non-object patch was accepted")
    assert "必须是 JSON 对象" in reason


@PROPERTY_SETTINGS
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200), json_values.map(json.dumps)))
def test_parse_patch_on_arbitrary_text_only_rejects(raw: str | bytes) -> None:
    try:
        patch = parse_patch(raw)
    except PatchRejected as exc:
        reason = exc.reason
    else:
        assert isinstance(patch.chapter, int)
        assert isinstance(patch.ops, list)
        return
    assert reason


@PROPERTY_SETTINGS
@given(st.one_of(raw_ops(), garbage_values, garbage_paths))
def test_validate_op_never_raises(op: Any) -> None:
    reason = validate_op(op)

    assert reason is None or (isinstance(reason, str) and reason)
