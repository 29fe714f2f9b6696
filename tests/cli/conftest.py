"""Command tests never read the engineer's own config file or token."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("FLEETDESK_TOKEN", raising=False)
