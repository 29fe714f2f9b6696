"""The one rule for a URL fleetdesk is told to talk to or to print (Prometheus, Alertmanager, a webhook, the
server named in alert annotations): http or https, a host, and nothing but the characters RFC 3986 allows.

Checked where the URL is given (settings, flags), so a mistake is one line at start-up instead of a failure at
the first escalation; and a URL that is printed into a rule file cannot carry a line break or a Prometheus
template (``{{ ... }}`` in an annotation is executed by Prometheus).
"""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator

_RFC3986 = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
MAX_URL = 2048


def http_url_problem(text: str) -> str | None:
    """Why ``text`` is not a usable http(s) URL, in plain words; None when it is one."""
    example = "expected a URL like http://HOST:PORT or https://HOST/PATH"
    if not 0 < len(text) <= MAX_URL or not _RFC3986.fullmatch(text):
        return f"{example} (at most {MAX_URL} characters, no spaces, quotes, braces or control characters)"
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a port that is not a number from 0 to 65535
    except ValueError:
        return f"{example} (the host or port cannot be read)"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return example
    return None


def _checked(text: str) -> str:
    problem = http_url_problem(text)
    if problem is not None:
        raise ValueError(problem)
    return text


HttpUrlText = Annotated[str, AfterValidator(_checked)]
"""An http(s) URL as text, checked by http_url_problem."""
