"""UI tests: every alert is recorded instead of shown (the shared fixtures are in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.alerts import RecordingAlerts


@pytest.fixture(autouse=True)
def alerts() -> Iterator[RecordingAlerts]:
    """Every alert (info / warning / error / confirm) of a UI test is recorded, never shown, and every
    confirm is answered 是 unless the test sets ``alerts.answer`` (or ``alerts.answers``)."""
    from novel_desktop.ui import alerts as alerts_module

    recorder = RecordingAlerts()
    previous = alerts_module.use(recorder)
    yield recorder
    alerts_module.use(previous)
