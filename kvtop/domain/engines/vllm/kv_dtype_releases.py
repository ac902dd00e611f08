"""vLLM's `--kv-cache-dtype` words by release (CacheDType), so a refusal says the truth: a word the release has
that kvtop does not model is refused as "not modelled" naming the release; a word the release lacks names the
releases that have it. Read from each wheel's vllm/config/cache.py `CacheDType = Literal[...]`."""

from __future__ import annotations

from kvtop.domain.engines.versions import LATEST, parse_release

_V010 = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc")
_V011 = (*_V010[:1], "bfloat16", *_V010[1:])
_V012 = (*_V011, "fp8_ds_mla")
_V018 = (*_V012[:1], "float16", *_V012[1:])
_V020 = (*_V018, "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc",
         "int8_per_token_head", "fp8_per_token_head", "nvfp4")  # fmt: skip
_V027 = (*_V020[:12], "int4_per_token_head", *_V020[12:])
_V030 = (*_V027[:8], "nvfp4_ds_mla", *_V027[8:], "nvfp4_4over6")
_V033 = (*_V030[:13], "octave_k3v4", "octave_k3v3", "octave_k3v3_compact", "ultraquant_4bit", *_V030[13:])

# (release read, its CacheDType, file:line); a release between two read ones is taken as the older one read
CACHE_DTYPES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("0.10.1", _V010, "config/cache.py:25"),  # 0.10.2 :25 alike
    ("0.11.0", _V011, "config/cache.py:25-26"),
    ("0.12.0", _V012, "config/cache.py:23-31"),  # 0.13.0, 0.16.0 - 0.17.1 :23-31; 0.14.1, 0.15.0 :24-32
    ("0.18.0", _V018, "config/cache.py:14-23"),  # 0.19.0 alike
    ("0.20.0", _V020, "config/cache.py:18-34"),  # 0.21.0, 0.22.0 alike; 0.24.0 :19-35
    ("0.27.1", _V027, "config/cache.py:19-36"),
    ("0.30.0", _V030, "config/cache.py:39-58"),  # 0.31.0 alike
    ("0.33.0", _V033, "config/cache.py:44-67"),  # 0.34.0 alike
)
READ = ("0.10.1", "0.10.2", "0.11.0", "0.12.0", "0.13.0", "0.14.1", "0.15.0", "0.16.0", "0.17.0", "0.17.1", "0.18.0",
        "0.19.0", "0.20.0", "0.21.0", "0.22.0", "0.24.0", "0.27.1", "0.30.0", "0.31.0", "0.33.0", "0.34.0")


def _row(version: str | None) -> tuple[str, tuple[str, ...], str] | None:
    """The newest release read at or before `version` (the latest read for none / 'latest'); None before 0.10.1."""
    if version is None or version.strip().lower() == LATEST:
        return CACHE_DTYPES[-1]
    key = parse_release(version)
    if key is None:
        return CACHE_DTYPES[-1]
    rows = [row for row in CACHE_DTYPES if (read := parse_release(row[0])) is not None and read <= key]
    return rows[-1] if rows else None


def _having(dtype: str) -> str:
    """'0.27.1 on' / '' — the first release read whose CacheDType lists `dtype` (lists only grow across those read)."""
    first = next((row[0] for row in CACHE_DTYPES if dtype in row[1]), None)
    return f"{first} on" if first else ""


def kv_dtype_refusal(dtype: str, version: str | None, modelled: tuple[str, ...]) -> str:
    """The refusal of `--kv-cache-dtype dtype`, which kvtop does not take (`modelled`), at `version`."""
    word = repr(dtype[:40])
    row = _row(version)
    release = version.strip() if version and version.strip().lower() != LATEST else READ[-1]
    models = f"kvtop models {', '.join(modelled)}"
    read = any(parse_release(release) == parse_release(name) for name in READ)
    at = "" if read or row is None else f", taken as {row[0]}'s: {release} not read"
    if row is not None and dtype in row[1]:
        return (f"KV cache dtype {word} not modelled: vLLM {release} has it (CacheDType, v{row[0]} {row[2]}{at}) "
                f"but kvtop does not size its cache; {models}")
    having = _having(dtype)
    none = f"no release read has it, {READ[0]} – {READ[-1]}, {len(READ)} read"
    where = f"releases read that have it: {having}" if having else none
    if row is None:  # before the first release read: its list is not read
        return f"KV cache dtype {word} not taken at vLLM {release} (its list not read; {where}); {models}"
    return f"vLLM {release} has no KV cache dtype {word} ({where}{at}); {models}"
