"""vLLM's `--kv-cache-dtype` words by release (CacheDType), so a refusal says the truth: a word the release has
that kvtop does not model is refused as "not modelled" naming the release; a word the release lacks names the
releases that have it. Read from each wheel's vllm/config/cache.py `CacheDType = Literal[...]`."""

from __future__ import annotations

from kvtop.domain.engines.versions import LATEST, Era, Eras, ResolvedVersion, parse_release
from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted

_V010 = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc")
_V011 = (*_V010[:1], "bfloat16", *_V010[1:])
_V012 = (*_V011, "fp8_ds_mla")
_V018 = (*_V012[:1], "float16", *_V012[1:])
_V020 = (*_V018, "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc",
         "int8_per_token_head", "fp8_per_token_head", "nvfp4")  # fmt: skip
_V027 = (*_V020[:12], "int4_per_token_head", *_V020[12:])
_V030 = (*_V027[:8], "nvfp4_ds_mla", *_V027[8:], "nvfp4_4over6")
_V033 = (*_V030[:13], "octave_k3v4", "octave_k3v3", "octave_k3v3_compact", "ultraquant_4bit", *_V030[13:])

# each release read and its CacheDType (file:line); a release between two read ones is taken as the older one read
CACHE_DTYPES: Eras[tuple[str, ...] | None] = Eras((
    Era("", None, "before v0.10.1: its list not read"),
    Era("0.10.1", _V010, "config/cache.py:25"),  # 0.10.2 :25 alike
    Era("0.11.0", _V011, "config/cache.py:25-26"),
    Era("0.12.0", _V012, "config/cache.py:23-31"),  # 0.13.0, 0.16.0 - 0.17.1 :23-31; 0.14.1, 0.15.0 :24-32
    Era("0.18.0", _V018, "config/cache.py:14-23"),  # 0.19.0 alike
    Era("0.20.0", _V020, "config/cache.py:18-34"),  # 0.21.0, 0.22.0 alike; 0.24.0 :19-35
    Era("0.27.1", _V027, "config/cache.py:19-36"),
    Era("0.30.0", _V030, "config/cache.py:39-58"),  # 0.31.0 alike
    Era("0.33.0", _V033, "config/cache.py:44-67"),  # 0.34.0 alike
))  # fmt: skip
READ = ("0.10.1", "0.10.2", "0.11.0", "0.12.0", "0.13.0", "0.14.1", "0.15.0", "0.16.0", "0.17.0", "0.17.1", "0.18.0",
        "0.19.0", "0.20.0", "0.21.0", "0.22.0", "0.24.0", "0.27.1", "0.30.0", "0.31.0", "0.33.0", "0.34.0")


def _first(dtype: str) -> str | None:
    """The first release read whose CacheDType lists `dtype` (lists only grow across those read); None: none does."""
    return next((era.since for era in CACHE_DTYPES if era.value is not None and dtype in era.value), None)


def _lacks(dtype: str, version: str | None) -> bool:
    """Whether vLLM `version` has no `dtype` for sure: a release read at or after it (from the first read, 0.10.1)
    lists none, and the lists only grow across those read; a release between the last read without it and the first
    with it (not read) is not known to lack it."""
    release = parse_release(version)
    first = parse_release(_first(dtype))
    if release is None or release < (parse_release(READ[0]) or ()):
        return False
    return any(release <= read and (first is None or read < first) for name in READ if (read := parse_release(name)))


def refuse_kv_dtype(dtype: str, flag: str, version: str | None, modelled: tuple[str, ...]) -> None:
    """Raise InputError for `--kv-cache-dtype dtype` at `version` (None: the latest): a word kvtop does not model,
    or one it models that the release lacks (CacheDType is argparse's choices, v0.12.0 engine/arg_utils.py:157-170
    literal_to_kwargs: 'invalid choice')."""
    if dtype not in modelled or _lacks(dtype, version):
        raise InputError(_refusal(dtype, version, modelled), field=flag)


def _refusal(dtype: str, version: str | None, modelled: tuple[str, ...]) -> str:
    """The refusal of `--kv-cache-dtype dtype` at `version`: one kvtop does not take (`modelled`), or one the release
    lacks."""
    word = quoted(dtype)
    era = CACHE_DTYPES.era(ResolvedVersion(text=version))
    release = version.strip() if version and version.strip().lower() != LATEST else READ[-1]
    models = "" if dtype in modelled else f"; kvtop models {', '.join(modelled)}"
    read = any(parse_release(release) == parse_release(name) for name in READ)
    at = "" if read or era.value is None else f", taken as {era.since}'s: {release} not read"
    if era.value is not None and dtype in era.value:
        return (f"KV cache dtype {word} not modelled: vLLM {release} has it (CacheDType, v{era.since} {era.source}{at}) "
                f"but kvtop does not size its cache{models}")
    first = _first(dtype)
    none = f"no release read has it, {READ[0]} – {READ[-1]}, {len(READ)} read"
    where = f"releases read that have it: {first} on" if first else none
    if era.value is None:  # before the first release read: its list is not read
        return f"KV cache dtype {word} not taken at vLLM {release} (its list not read; {where}){models}"
    return f"vLLM {release} has no KV cache dtype {word} ({where}{at}){models}"
