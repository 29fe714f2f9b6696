"""The server's settings: the config file's ``[server]`` table, then FLEETDESK_SERVER_* variables, then flags.

``fleetdesk serve`` makes one flag per field (``--prometheus-url`` for ``prometheus_url``), so this class is
the one list of what the server can be told; each field documents itself. Secrets (the webhook signing key)
come from a 0600 file or the environment, never from the command line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import SettingsConfigDict

from fleetdesk.domain.bounds import MomentText
from fleetdesk.domain.urls import HttpUrlText
from fleetdesk.settings.config_file import (
    SERVER_TABLE,
    FileSettings,
    SettingsError,
    server_table,
    settings_error,
)

HOUR_SECONDS = 3600.0
# Prometheus label matchers, comma-separated: name, operator, a double-quoted value. The selector is put inside
# every query's braces, so anything else is a mistake found only when the first query fails (or more PromQL).
_MATCHER = r'\s*[A-Za-z_][A-Za-z0-9_]*\s*(=|!=|=~|!~)\s*"(?:[^"\\\n]|\\.)*"\s*'
_SELECTOR = re.compile(rf"(?:{_MATCHER}(?:,{_MATCHER})*,?\s*)?")
WEBHOOK_SECRET_ENV = "FLEETDESK_WEBHOOK_SECRET"


class ServerSettings(FileSettings):
    """Everything ``fleetdesk serve`` can be told before it starts."""

    file_table = staticmethod(server_table)

    model_config = SettingsConfigDict(
        env_prefix="FLEETDESK_SERVER_",
        extra="forbid",
        allow_inf_nan=False,
        populate_by_name=True,
        use_attribute_docstrings=True,
    )

    fleet: str = "small"
    """Fleet to seed a new database from: small, large or a fleet file's path."""

    db: str | None = None
    """The database: a SQLite file (default: fleetdesk.sqlite in the XDG data dir) or a postgresql:// URL."""

    host: str = "127.0.0.1"
    """Address to listen on."""

    port: int = Field(default=8787, ge=0, le=65535)
    """Port to listen on (0: any free port)."""

    now: MomentText | None = None
    """Freeze the server clock at this ISO 8601 time with a UTC offset (tests, demos, drills)."""

    demo: bool = False
    """Serve reads without a token (loopback addresses only); actions still need one."""

    log_level: Literal["debug", "info", "warning", "error"] = "warning"
    """How much the server logs."""

    metrics_source: Literal["store", "prometheus"] = "store"
    """Where stability series are read from: the local store, or Prometheus."""

    prometheus_url: HttpUrlText | None = None
    """Prometheus base URL, e.g. http://127.0.0.1:9090 (with metrics_source prometheus)."""

    prometheus_lag: float | None = Field(default=None, ge=0.0, le=24 * HOUR_SECONDS)
    """Seconds after a bucket closes until its sums reach Prometheus' counters (default: one bucket, right for
    Prometheus scraping a fleetdesk server; 0 for live exporters)."""

    prometheus_timeout: float = Field(default=10.0, ge=0.1, le=600.0)
    """Longest a Prometheus query may take, in seconds."""

    prometheus_selector: str = ""
    """Extra label matchers for every Prometheus query, e.g. job="fleetdesk"."""

    alertmanager_url: HttpUrlText | None = None
    """Post escalations to this Alertmanager (API v2)."""

    alert_ttl: float = Field(default=24.0, ge=0.1, le=24.0 * 365)
    """Hours an escalation alert lasts unless its incident resolves first."""

    webhook_url: HttpUrlText | None = None
    """Post escalations as signed JSON to this URL."""

    webhook_secret_file: Path | None = None
    """A 0600 file holding the webhook signing secret (or set $FLEETDESK_WEBHOOK_SECRET)."""

    webhook_secret: SecretStr | None = Field(
        default=None,
        exclude=True,
        validation_alias=AliasChoices("webhook_secret", WEBHOOK_SECRET_ENV),
    )
    """The webhook signing secret from $FLEETDESK_WEBHOOK_SECRET (never a flag)."""

    @field_validator("prometheus_selector")
    @classmethod
    def _label_matchers(cls, value: str) -> str:
        if not _SELECTOR.fullmatch(value):
            raise ValueError(
                'expected Prometheus label matchers, e.g. job="fleetdesk",env=~"prod|canary"'
            )
        return value

    @model_validator(mode="after")
    def _fit_together(self) -> ServerSettings:
        if self.alertmanager_url and self.webhook_url:
            raise ValueError("choose one paging target: alertmanager_url or webhook_url")
        if self.metrics_source == "prometheus" and not self.prometheus_url:
            raise ValueError("metrics_source prometheus needs prometheus_url")
        if self.metrics_source != "prometheus" and self.prometheus_url:
            raise ValueError("prometheus_url is only used with metrics_source prometheus")
        if self.webhook_url and self.webhook_secret is None and self.webhook_secret_file is None:
            raise ValueError(
                f"webhook_url needs a signing secret: webhook_secret_file PATH or ${WEBHOOK_SECRET_ENV}"
            )
        return self


FLAGLESS = frozenset({"webhook_secret"})
"""Fields that are never a flag: secrets do not belong on a command line."""


def load_server_settings(**flags: Any) -> ServerSettings:
    """Settings from the config file and environment, with the non-None ``flags`` on top; SettingsError if unusable."""
    try:
        return ServerSettings(**{name: value for name, value in flags.items() if value is not None})
    except ValidationError as error:
        raise settings_error(error, "FLEETDESK_SERVER_*", SERVER_TABLE) from None


__all__ = [
    "FLAGLESS",
    "ServerSettings",
    "SettingsError",
    "WEBHOOK_SECRET_ENV",
    "load_server_settings",
]
