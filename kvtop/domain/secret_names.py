"""Secret names: whether a flag, variable or key name names a secret, and whether the value it gives is masked.

A name whose secret word stands for a secret outright (password, secret, api key, credential) masks any value; one
whose word has other senses in an engine's flags (token, key, auth, sig) *and* a word of setting beside it
(`--speculative-token-map`, `--key-cache-dtype`, `--token-file`) masks a value only when it is not a figure, a path
or a word; a name that only resembles a key's (`--hf-tok`) masks a random-looking value. Each engine declares its own
secret flags (`EngineFlags.secret_flags`), read here through the catalogue. The text and argv redactors
(`secret_text`, `redact`) ask this module about every name they meet.
"""

from __future__ import annotations

import re
from functools import lru_cache

from kvtop.domain.engines.catalogue import ENGINE_IDS, engine_module
from kvtop.domain.secret_shapes import is_benign_value, is_path, looks_random

# Anywhere in a name with its separators removed ("HFTOKEN", "PGPASSWORD", "apiKey", "x-api-key").
_SECRET_WORDS = ("password", "passwd", "passphrase", "passcode", "secret", "credential", "signature",
                 "token", "auth", "key", "pwd", "cookie")  # fmt: skip
# Only as a whole segment of the name ("DB_PASS", "GITHUB_PAT", "?sig=") — too short to match inside words.
_SECRET_SEGMENTS = frozenset({"pass", "pat", "sig", "creds", "jwt", "bearer", "pw"})
# A short flag that takes a key by convention, not an engine's (each engine declares its own secret flags,
# `EngineFlags.secret_flags`: llama.cpp's `-hft`, vLLM's `--api-key`; `engine_secret_flags`).
_SECRET_SHORT_FLAGS = frozenset({"-k"})
# Words that contain a secret word but name something else; removed before looking.
# `keyvalue` only as the attention's key/value (`num_key_value_heads`), never `API_KEY_VALUE`.
_BENIGN_WORDS = re.compile(r"tokeniz|tokens|tokenid|author(?!i[sz])|(?:un)?authori[sz]ed|(?:un)?authenticated"
                           r"|keyword|keyboard|keyfile|tokentokv|totokenpool"  # SGLang's MHATokenToKVPool, ReqToTokenPool
                           r"|keyvalue(?=head|cache|dim|proj|layer)|monkey|bypass|passthrough|allowcredentials")  # fmt: skip
# A "token" beside one of these anywhere in the name is a count of tokens (`--max-token-len`).
_COUNT_SEGMENTS = frozenset({"max", "min", "num", "count", "limit", "budget", "size", "len", "length", "ratio",
                             "threshold", "capacity"})  # fmt: skip
# ...and one of these only as the word right after a final "token" (`token_usage`), not inside a
# name (`--access-token-per-user`, `TOKEN_USAGE_KEY` stay secret).
_COUNT_SUFFIXES = frozenset({"usage", "total", "used", "rate"})
_SEGMENT_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Cheap first look: a name (or a text) without any of these cannot hold a secret name.
_TRIGGERS = ("pw", "pass", "secret", "cred", "sig", "tok", "auth", "key", "cookie", "pat", "jwt", "bearer",
             "basic", "-k", "-hft", "session", "priv")  # fmt: skip


def has_trigger(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _TRIGGERS)


# Secret words that name a secret outright: any value under them is masked.
_OUTRIGHT_WORDS = ("password", "passwd", "passphrase", "passcode", "secret", "credential", "apikey", "accesskey",
                   "privatekey", "pwd", "jwt", "bearer")  # fmt: skip
_OUTRIGHT_SEGMENTS = frozenset({"pat", "creds", "pw"})
# Words of a setting: beside a secret word of many senses (token, key, auth, sig), the name is a setting's
# (`--speculative-token-map`, `--key-cache-dtype`), and a figure, a path or a word under it is shown.
_SETTING_SEGMENTS = frozenset({
    "file", "path", "dir", "folder", "name", "mode", "type", "dtype", "format", "version", "size", "len", "length",
    "map", "latency", "histogram", "bucket", "logging", "log", "healing", "throughput", "time", "first", "last",
    "watermark", "low", "high", "figs", "helper", "backend", "heads", "head", "interval", "level", "count",
    "usage", "budget", "threshold", "num", "max", "min", "per", "ratio", "capacity", "limit", "ids", "enable",
    "disable", "use", "cache", "window", "bits", "algorithm", "scheme", "public", "ssl", "tls", "timeout", "ttl",
    "expiry", "policy", "parser", "template", "dim", "cls", "class",
})  # fmt: skip
# Where a name says its value is a location: even under an outright secret word, a path is shown.
_LOCATION_SEGMENTS = frozenset({"file", "path", "dir", "folder"})
# Names that only resemble a key's (`--hf-tok`, `MY_APIKEY2`): a value is masked when it looks generated.
KEYLIKE_NAME = re.compile(r"tok|key|pass|pwd|secret|auth|cred|sig|cookie|session|bearer|priv", re.IGNORECASE)


def _segments(name: str) -> list[str]:
    return [part.lower() for part in _SEGMENT_SPLIT.split(_CAMEL.sub("-", name)) if part]


def masks_value(name: str, value: str) -> bool:
    """Whether the value `name` gives is masked: by the name's strength and the value's shape."""
    if not is_secret_name(name):
        return bool(KEYLIKE_NAME.search(name)) and looks_random(value)
    if name.strip() in engine_secret_flags():  # an engine's own secret flag: any value
        return True
    segments = _segments(name)
    compact = "".join(segments)
    outright = any(word in compact for word in _OUTRIGHT_WORDS) or not _OUTRIGHT_SEGMENTS.isdisjoint(segments)
    if outright:
        return not (not _LOCATION_SEGMENTS.isdisjoint(segments) and is_path(value.strip("\"'`")))
    return _SETTING_SEGMENTS.isdisjoint(segments) or not is_benign_value(value)


@lru_cache(maxsize=1)
def _declared_secret_flags() -> tuple[frozenset[str], frozenset[str]]:
    """Every engine's declared secret flags (`EngineFlags.secret_flags`), and those of them that take several values
    (the engine's `list_valued`, as its parser reads the spelling). Redaction runs on any process's line and any
    text before an engine is known, so it takes all engines' declarations, read once at first use from each
    engine's package by the catalogue (the packages import this module, so not when it is imported)."""
    secret: set[str] = set()
    several: set[str] = set()
    for engine in ENGINE_IDS:
        flags = engine_module(engine).FLAGS  # its `launch.EngineFlags` (launch imports redact, which imports this module)
        declared: frozenset[str] = flags.secret_flags
        listed: frozenset[str] = flags.list_valued
        secret |= declared
        several |= {flag for flag in declared if flags.as_parsed(flag) in listed}
    return frozenset(secret), frozenset(several)


@lru_cache(maxsize=1)
def _short_secret_flags() -> tuple[tuple[str, ...], frozenset[str]]:
    """The short secret flags (`-k`, llama.cpp's `-hft`), longest first, and every engine's known flags (its
    spellings, pass-through and own flags): a known flag that starts as one does (llama.cpp's `-kvu`) is not one
    with a value glued to it."""
    short = {*_SECRET_SHORT_FLAGS, *(flag for flag in engine_secret_flags() if not flag.startswith("--"))}
    known: set[str] = set()
    for engine in ENGINE_IDS:
        flags = engine_module(engine).FLAGS
        known |= {*flags.spellings, *flags.passthrough, *flags.own_flags}
    return tuple(sorted(short, key=len, reverse=True)), frozenset(known)


def short_secret_flags() -> tuple[str, ...]:
    """The short secret flags, every engine's and `-k` by convention, longest first (`_short_secret_flags`)."""
    return _short_secret_flags()[0]


def glued_secret_flag(word: str) -> str | None:
    """The short secret flag `word` glues a value to (`-hftVALUE`, `-hft=VALUE`, `-kVALUE` give `-hft`, `-hft`,
    `-k`), or None. Its tail is masked whatever it looks like: a short flag with something glued to it is a key's
    flag (an engine's parser takes no such spelling, so it is also named as an unknown flag, and echoed)."""
    if word[:1] != "-" or word[:2] == "--":
        return None
    flags, known = _short_secret_flags()
    if word.partition("=")[0] in known - set(flags):  # `-kvu`, `-kvo=…`: another flag of an engine
        return None
    return next((flag for flag in flags if word.startswith(flag) and len(word) > len(flag)), None)


def engine_secret_flags() -> frozenset[str]:
    """The flags some engine declares a secret's (any value under them is masked)."""
    return _declared_secret_flags()[0]


def several_valued_secret_flags() -> frozenset[str]:
    """The declared secret flags that take several values (argparse nargs): only after these does a second word stay
    a key (vLLM's `--api-key k1 k2`, LMDeploy's `--api-keys`); every other secret flag takes one, argparse's default."""
    return _declared_secret_flags()[1]


def is_secret_name(name: str) -> bool:
    """Whether a flag, variable or key name (`--api-key`, `HF_TOKEN`, `db.password`, `apiKey`) names a secret: by
    its words, or as an engine declares it (`engine_secret_flags`)."""
    name = name.strip()
    if name in _SECRET_SHORT_FLAGS or name in engine_secret_flags():
        return True
    if not has_trigger(name):
        return False
    return _is_secret_name(name) if len(name) <= 64 else _judge_name(name)


@lru_cache(maxsize=4096)
def _is_secret_name(name: str) -> bool:
    return _judge_name(name)


def _judge_name(name: str) -> bool:
    segments = [part.lower() for part in _SEGMENT_SPLIT.split(_CAMEL.sub("-", name)) if part]
    compact = _BENIGN_WORDS.sub("|", "".join(segments))
    counted = segments[-2:-1] == ["token"] and segments[-1] in _COUNT_SUFFIXES
    if "token" in compact and (counted or not _COUNT_SEGMENTS.isdisjoint(segments)):
        compact = compact.replace("token", "|")
    return (
        any(word in compact for word in _SECRET_WORDS)
        or any(segment in _SECRET_SEGMENTS for segment in segments)
        or compact.endswith("pass")
    )
