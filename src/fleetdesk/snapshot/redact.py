"""Masking secrets before anything is written into a snapshot.

Two kinds of secret: the ones the exporter *knows* (its own bearer token, in
every encoding it could appear in: plain, JSON-escaped, HTML-escaped,
percent-encoded, base64 at any byte offset), and the ones it can only
*recognise*: Authorization headers, bearer/basic credentials, credentials in
URLs, ``password=``-style assignments, private keys, well-known token shapes,
and the patterns the user configures (``[snapshot] secret_patterns`` in the
config file). Every string of the document is passed through, so notes,
timeline text, audit reasons and details are all covered.
"""

from __future__ import annotations

import base64
import html
import json
import re
import tomllib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, field_validator

from fleetdesk.settings.local_files import MIB, read_text_file

MASK = "[REDACTED]"
KNOWN_SECRET = "exporter-token"


class SecretPattern(BaseModel):
    """A named regular expression whose every match is masked."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    regex: str = Field(min_length=1)

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as error:
            raise ValueError(f"not a valid regular expression: {error}") from None
        return value


# Masking is idempotent: a rule that keeps a label never re-masks an existing mask (nor counts it again).
_NOT_MASKED = r"(?!" + re.escape(MASK) + ")"
# (name, pattern, replacement); a replacement keeps the label so the reader sees what was there.
_BUILT_IN: tuple[tuple[str, str, str], ...] = (
    (
        "private-key",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
        MASK,
    ),
    (
        "authorization-header",
        r"(?i)\b((?:proxy-)?authorization\s*[:=]\s*)"
        + _NOT_MASKED
        + r"\"?(?:[A-Za-z]+\s+)?[^\s\"',;]+",
        r"\1" + MASK,
    ),
    ("bearer-credential", r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{6,}", r"\1\2" + MASK),
    (
        "url-credentials",
        r"(?i)\b([a-z][a-z0-9+.-]*://)" + _NOT_MASKED + r"[^/\s@]+@",
        r"\1" + MASK + "@",
    ),
    (
        "secret-assignment",
        r"(?i)\b((?:access[_-]?token|refresh[_-]?token|api[_-]?key|apikey|client[_-]?secret|token|password|passwd|pwd|secret)"
        r"\s*[=:]\s*)" + _NOT_MASKED + r"\"?[^\s&\"',;]{4,}",
        r"\1" + MASK,
    ),
    ("fleetdesk-token", r"\bfdk_[A-Za-z0-9_-]{20,}", MASK),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})\b", MASK),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", MASK),
    ("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", MASK),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*", MASK),
)


# Every built-in rule needs one of these words; text without any skips them all (most of a bundle).
# A new rule must add its anchor here (the rule's own test fails otherwise).
_ANCHOR = re.compile(
    r"(?i)-----BEGIN|authorization|bearer|basic|://|token|api[_-]?key|secret|passw|pwd|"
    r"gh[pousr]_|github_pat_|xox|akia|asia|eyj|fdk_"
)


def encodings(secret: str) -> set[str]:
    """Every form in which ``secret`` could show up in text we write."""
    raw = secret.encode()
    forms = {secret, json.dumps(secret)[1:-1], html.escape(secret), quote(secret, safe="")}
    for offset in range(3):
        # base64 of the secret inside a longer blob: skip the characters that depend on the
        # neighbouring bytes, keep the stable core (long enough to be unmistakable).
        padded = base64.b64encode(b"\0" * offset + raw).decode()
        start = (offset * 4 + 2) // 3
        end = len(padded) - (0 if (offset + len(raw)) % 3 == 0 else 3)
        core = padded[start:end].rstrip("=")
        if len(core) >= 8:
            forms.add(core)
            forms.add(core.replace("+", "-").replace("/", "_"))
    forms.add(base64.b64encode(raw).decode())
    forms.add(base64.urlsafe_b64encode(raw).decode().rstrip("="))
    return {form for form in forms if form}


class Redactor:
    """Masks known secrets and recognised secret shapes in strings and whole documents."""

    def __init__(self, secrets: Iterable[str] = (), patterns: Iterable[SecretPattern] = ()) -> None:
        forms = sorted(
            {form for secret in secrets if secret for form in encodings(secret)},
            key=len,
            reverse=True,
        )
        self._known = re.compile("|".join(re.escape(form) for form in forms)) if forms else None
        self._built_in = [
            (name, re.compile(regex, re.DOTALL), replacement)
            for name, regex, replacement in _BUILT_IN
        ]
        self._configured = [(pattern.name, re.compile(pattern.regex), MASK) for pattern in patterns]
        self.counts: Counter[str] = Counter()
        # A bundle repeats the same strings (ids, teams, enum values) thousands of times: mask each once.
        self._seen: dict[str, tuple[str, Counter[str]]] = {}

    def __repr__(self) -> str:
        # The compiled known-secret pattern holds the token itself: never show it.
        known = "set" if self._known is not None else "none"
        return f"Redactor(known secrets: {known}, configured patterns: {len(self._configured)})"

    def text(self, value: str) -> str:
        """``value`` with every secret masked (and counted)."""
        seen = self._seen.get(value)
        if seen is None:
            seen = self._seen[value] = self._mask(value)
        masked, hits = seen
        self.counts.update(hits)
        return masked

    def _mask(self, value: str) -> tuple[str, Counter[str]]:
        hits: Counter[str] = Counter()
        if self._known is not None:
            value, found = self._known.subn(MASK, value)
            hits[KNOWN_SECRET] += found
        rules = self._configured if not _ANCHOR.search(value) else self._built_in + self._configured
        for name, rule, replacement in rules:
            value, found = rule.subn(replacement, value)
            hits[name] += found
        return value, +hits

    def document(self, value: Any) -> Any:
        """A copy of a JSON-like document (dicts, lists, strings, scalars) with every string masked."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.document(key): self.document(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.document(item) for item in value]
        return value

    def svg(self, svg: str) -> str:
        """An SVG with the text of each ``<text>`` element masked (Textual writes spaces as &#160;)."""

        def mask(match: re.Match[str]) -> str:
            shown = html.unescape(match.group(2)).replace("\xa0", " ")
            masked = self.text(shown)
            if masked == shown:
                return match.group(0)
            return match.group(1) + html.escape(masked).replace(" ", "&#160;") + match.group(3)

        masked = re.sub(r"(<text\b[^>]*>)([^<]*)(</text>)", mask, svg)
        # Anywhere else in the markup only known secrets are masked: the label-keeping patterns would
        # read markup such as "&#160;" as a value.
        return self._known_only(masked)

    def _known_only(self, value: str) -> str:
        if self._known is None:
            return value
        value, hits = self._known.subn(MASK, value)
        if hits:
            self.counts[KNOWN_SECRET] += hits
        return value

    def leaks(self, data: bytes) -> bool:
        """True when ``data`` still holds a known secret in any encoding (the last check before writing)."""
        return (
            self._known is not None
            and self._known.search(data.decode("utf-8", "replace")) is not None
        )


class ConfigError(ValueError):
    """The snapshot section of the config file is unusable."""


def configured_patterns(path: Path) -> list[SecretPattern]:
    """The ``[snapshot] secret_patterns`` of the config file: a table name -> regex; none when absent."""
    try:
        config = tomllib.loads(read_text_file(path, MIB))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    snapshot = config.get("snapshot", {})
    unknown = sorted(set(snapshot) - {"secret_patterns"}) if isinstance(snapshot, dict) else []
    if unknown:
        raise ConfigError(
            f"{path}: [snapshot]: unknown setting '{unknown[0]}' (known: secret_patterns)"
        )
    table = snapshot.get("secret_patterns", {})
    if not isinstance(table, dict):
        raise ConfigError(f'{path}: [snapshot] secret_patterns must be a table of name = "regex"')
    try:
        return [SecretPattern(name=name, regex=regex) for name, regex in table.items()]
    except ValueError as error:
        raise ConfigError(f"{path}: [snapshot] secret_patterns: {error}") from None
