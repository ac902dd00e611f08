"""How kvtop reaches a Prometheus: the URL as it may be shown (no user:password@), the bearer token (a file
or an environment variable, never an argument), and the TLS context of a CA bundle or folder."""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from kvtop.domain.errors import InputError
from kvtop.domain.redact import shown_cut

TOKEN_ENV = "KVTOP_PROMETHEUS_TOKEN"


def redact_url(url: str) -> str:
    """The URL without user:password@ (safe to print)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def without_token(content: bytes, token: str | None) -> bytes:
    """An answer with the bearer token kvtop sent masked wherever it is repeated (as JSON writes it too: a `/`
    may be escaped `\\/`): a proxy or server that echoes a refused token bare in its error, where no secret's
    name or shape gives it away (`bad token Q7vX…`), must not have kvtop print it (the redactor masks by name
    and shape; only the client knows the token's value)."""
    if not token:
        return content
    for form in {token, token.replace("/", "\\/")}:
        content = content.replace(form.encode(), b"***")
    return content


def why_unreachable(err: Exception, url: str) -> str:
    """Why a connection failed, in the system's words (refused, no such host, a TLS failure; cut to a line),
    and what to try where the words say it: a certificate no CA here signed, or TLS spoken to a plain server."""
    detail = shown_cut(str(err).splitlines()[0], 120) if str(err) else ""
    why = f"{type(err).__name__}: {detail}" if detail else type(err).__name__
    if "CERTIFICATE_VERIFY_FAILED" in detail:
        return f"{why}; give the CA that signed its certificate with --ca-file"
    if url.startswith("https://") and ("WRONG_VERSION_NUMBER" in detail or "record layer failure" in detail):
        return f"{why}; the server may speak plain http://"
    return why


def not_the_api(status: int, content: bytes, location: str | None) -> str | None:
    """Why an answer is no query API's, where it says: a redirect (a login page or proxy in front of the
    server) or a web page (Grafana's or Prometheus's own UI given for the server); None otherwise."""
    if 300 <= status < 400:
        to = f" to {redact_url(location)}" if location else ""
        return (f"redirected the query{to} (HTTP {status}): a login page or proxy answers there; give the "
                "Prometheus server's own URL, or a bearer token with --token-file")  # fmt: skip
    if status < 400 and content.lstrip()[:1] == b"<":  # an error page keeps its status (HTTP_ERROR)
        return ("answered a web page (HTML), not the query API at /api/v1/query: give the Prometheus server's "
                "own URL (e.g. https://prometheus.example:9090), not Grafana's or its UI's")  # fmt: skip
    return None


def load_token(token_file: str | None, env: Mapping[str, str] = os.environ) -> str | None:
    """The bearer token: --token-file wins over $KVTOP_PROMETHEUS_TOKEN; None when neither is set."""
    if token_file:
        try:
            token = Path(token_file).read_text().strip()
        except OSError as err:
            raise InputError(
                f"cannot read the token file: {err.strerror or err}", field="--token-file"
            ) from err
        if not token:
            raise InputError("the token file is empty", field="--token-file")
        return token
    return env.get(TOKEN_ENV, "").strip() or None


def tls_context(ca: str) -> ssl.SSLContext:
    """A verifying TLS context from a CA bundle file or a folder of hashed certificates (OpenSSL's capath)."""
    return ssl.create_default_context(capath=ca) if Path(ca).is_dir() else ssl.create_default_context(cafile=ca)
