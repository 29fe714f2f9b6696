"""The redaction pass: known tokens in every encoding, recognised secret shapes and configured patterns are masked."""

from __future__ import annotations

import base64
from pathlib import Path

import factory
import pytest

from fleetdesk.snapshot.export import public_url, write_bundle
from fleetdesk.snapshot.redact import (
    MASK,
    ConfigError,
    Redactor,
    SecretPattern,
    configured_patterns,
    encodings,
)
from fleetdesk.snapshot.reopen import load_snapshot

TOKEN = "fdt_Zq9x-LONG.secret/token+value"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("curl -H 'Authorization: Bearer abc.def-123' x", "curl -H 'Authorization: [REDACTED]' x"),
        ("authorization=Basic dXNlcjpwYXNz", "authorization=[REDACTED]"),
        ("sent bearer eyJhbGciOi.xyz to it", "sent bearer [REDACTED] to it"),
        (
            "db at postgres://svc:hunter2@db.internal:5432/x",
            "db at postgres://[REDACTED]@db.internal:5432/x",
        ),
        (
            "try https://api.example/?api_key=AbCdEf123&x=1",
            "try https://api.example/?api_key=[REDACTED]&x=1",
        ),
        ("password: hunter22, then retry", "password: [REDACTED], then retry"),
        ("key AKIAABCDEFGHIJKLMNOP leaked", "key [REDACTED] leaked"),
        ("gh token ghp_" + "a" * 36, "gh token [REDACTED]"),
        ("their token fdk_" + "Ab1-_" * 8 + " expired", "their token [REDACTED] expired"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----", MASK),
        (
            "token rotation is at 09:00, NE 0.93 on ig_feed",
            "token rotation is at 09:00, NE 0.93 on ig_feed",
        ),
    ],
)
def test_recognised_secret_shapes_are_masked(text: str, expected: str) -> None:
    assert Redactor().text(text) == expected


def test_known_token_is_masked_in_every_encoding() -> None:
    redactor = Redactor([TOKEN])
    for form in encodings(TOKEN):
        assert TOKEN not in redactor.text(f"x {form} y") and form not in redactor.text(
            f"x {form} y"
        )
    for prefix in (b"", b"u", b"us", b"user:"):
        blob = base64.b64encode(prefix + TOKEN.encode() + b"!").decode()
        assert redactor.leaks(blob.encode())
        assert not redactor.leaks(redactor.text(blob).encode())


def test_configured_patterns_mask_notes(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('theme = "x"\n[snapshot.secret_patterns]\ncustomer-id = "CUST-[0-9]{6}"\n')
    redactor = Redactor(patterns=configured_patterns(config))
    assert redactor.text("customer CUST-123456 complained") == f"customer {MASK} complained"
    assert redactor.counts == {"customer-id": 1}
    assert configured_patterns(tmp_path / "absent.toml") == []
    config.write_text('[snapshot.secret_patterns]\nbad = "([a-z"\n')
    with pytest.raises(ConfigError, match="not a valid regular expression"):
        configured_patterns(config)


def test_written_bundle_holds_no_secret_and_counts_the_masks(tmp_path: Path) -> None:
    note = (
        f"next: rotate {TOKEN}; creds were in https://bob:pw123@grafana.internal/d, "
        f"base64 {base64.b64encode(TOKEN.encode()).decode()}, customer CUST-654321"
    )
    snap = factory.snapshot(note=note, reason=f"Authorization: Bearer {TOKEN}")
    svg = f"<svg><text x='0'>note:&#160;{TOKEN}</text><text>password=hunter22x</text></svg>"
    snap = snap.model_copy(update={"screen_svg": svg})
    redactor = Redactor([TOKEN], [SecretPattern(name="customer-id", regex=r"CUST-\d{6}")])
    bundle = write_bundle(snap, redactor, tmp_path)
    for path in bundle.paths:
        data = path.read_bytes()
        for form in encodings(TOKEN) | {"pw123", "hunter22x", "CUST-654321"}:
            assert form.encode() not in data, (path.name, form)
    reopened = load_snapshot(bundle.json).snapshot
    assert reopened.incident.notes[0].text.startswith(
        f"next: rotate {MASK}; creds were in https://{MASK}@grafana"
    )
    assert reopened.redactions["customer-id"] >= 1 and reopened.redactions["exporter-token"] >= 1
    assert "secret(s) were masked" in bundle.markdown.read_text()


def test_public_url_drops_credentials_query_and_fragment() -> None:
    assert (
        public_url("https://bob:s3cret@fleetdesk.example:8443/base/?token=abc#x")
        == "https://fleetdesk.example:8443/base"
    )
    assert public_url("http://[::1]:9000") == "http://[::1]:9000"


def test_redactor_repr_never_shows_the_secret() -> None:
    redactor = Redactor([TOKEN])
    assert (
        "fdt_" not in repr(redactor)
        and "Zq9x" not in repr(redactor)
        and "known secrets: set" in repr(redactor)
    )
