"""vLLM's human-readable whole numbers on its command line: `--max-model-len 32K` is 32,768 tokens, `32k` 32,000.

vLLM types some integer flags with `human_readable_int` (vllm/engine/arg_utils.py; vllm/utils/argparse_utils.py from
v0.20.0): a number and one suffix, read by `re.fullmatch(r"(\\d+(?:\\.\\d+)?)([kKmMgGtT])")`. k, m, g are powers of
10 and take a decimal number (`int(float(number) * 10**3)`: '25.6k' is 25,600); K, M, G are powers of 2 and take a
whole number only ('1.5K' is refused: "Decimals are not allowed with binary suffixes"); t and T (10**12, 2**40) from
v0.13.0 (before, the regex matches them but no table holds them, so they fall to `int()` and are refused). Anything
else is Python's `int(value)`. Which flags take it changed by release (FIELD_ERAS); `--max-model-len` also takes
'auto' (= -1, the auto-fit flags.py refuses as not modelled) from v0.14.0.

`--kv-cache-memory-bytes` takes it from its first release, v0.10.2 (arg_utils.py:230-236; eras.
KV_CACHE_MEMORY_BYTES_SINCE): '20G' is 21,474,836,480 bytes, '20g' 20,000,000,000, '1.5G' refused, '1T' only from
v0.13.0. kvtop's own '20GiB' / '20GB' (units_parse.written_size) is read before this, and only where the size is typed
to kvtop: on vLLM's own command line it is refused, as vLLM's int() refuses it; so is the flag at a release before it
(`refuse_missing_kv_bytes`).
"""

from __future__ import annotations

import re

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.eras import KV_CACHE_MEMORY_BYTES_SINCE, has_kv_cache_memory_bytes
from kvtop.domain.errors import InputError
from kvtop.domain.units_parse import written_size

# the launch fields vLLM reads with human_readable_int, by release (kvtop's field names: context_length is
# --max-model-len)
FIELD_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "v0.8.3 vllm/engine/arg_utils.py:369 --max-model-len type=int (v0.8.0–v0.8.3 read)"),
    Era("0.8.4", frozenset({"context_length"}),
        "v0.8.4 vllm/engine/arg_utils.py:394 --max-model-len type=human_readable_int (:1749); :556 "
        "--max-num-batched-tokens type=int; v0.9.0 :224 get_kwargs {max_model_len}"),
    Era("0.9.1", frozenset({"context_length", "max_num_batched_tokens"}),
        "v0.9.1 vllm/engine/arg_utils.py:240 get_kwargs {max_model_len, max_num_batched_tokens}"),
    Era(KV_CACHE_MEMORY_BYTES_SINCE, frozenset({"context_length", "max_num_batched_tokens", "kv_cache_memory_bytes"}),
        "v0.10.2 vllm/engine/arg_utils.py:230-236 human_readable_ints {max_model_len, max_num_batched_tokens, "
        "kv_cache_memory_bytes} (the flag new there, :744); v0.14.0 :303, v0.33.0 :400 the same"),
))  # fmt: skip
SIZE_FIELD = "kv_cache_memory_bytes"  # the one size in bytes vLLM reads with it
# the suffixes, by release: name -> multiplier (lower case powers of 10, upper case powers of 2)
SUFFIX_ERAS: Eras[dict[str, int]] = Eras((
    Era("", {"k": 10**3, "m": 10**6, "g": 10**9, "K": 2**10, "M": 2**20, "G": 2**30},
        "v0.8.4 vllm/engine/arg_utils.py:1749-1785 human_readable_int (the same to v0.12.0, :2066)"),
    Era("0.13.0", {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40},
        "v0.13.0 vllm/engine/arg_utils.py:2042 't': 10**12, :2048 'T': 2**40 (v0.33.0 "
        "vllm/utils/argparse_utils.py:30-74)"),
))  # fmt: skip
# whether --max-model-len takes 'auto' and '-1' as -1 (human_readable_int_or_auto)
AUTO_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.13.0 vllm/engine/arg_utils.py:306 max_model_len type=human_readable_int"),
    Era("0.14.0", True, "v0.14.0 vllm/engine/arg_utils.py:300-302, :2121-2137 human_readable_int_or_auto"),
))  # fmt: skip
_SUFFIXED = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_LONGEST = 40  # characters: a longer value is no count (and float() of it is not asked)


def read_int(field: str, raw: str, flag: str, engine_version: str | None) -> int | None:
    """`raw` as vLLM at `engine_version` reads `flag` (None: the latest release) where it is a suffixed number of a
    flag vLLM reads with human_readable_int ('32K' -> 32,768), or 'auto' for --max-model-len from v0.14.0 (-1);
    None where it is no suffixed number (then it is Python's int(), as kvtop reads every count). A suffixed number
    the release does not read ('32K' before v0.8.4, '1T' before v0.13.0, '1.5K') is refused naming the flag."""
    text = raw.strip()
    version = ResolvedVersion(text=engine_version)
    if field == "context_length" and text.lower() == "auto" and AUTO_ERAS.at(version):
        return -1
    match = _SUFFIXED.fullmatch(text) if len(text) <= _LONGEST and field in FIELD_ERAS[-1].value else None
    if match is None:
        if field == SIZE_FIELD and len(text) <= _LONGEST and not _is_int(text):
            raise InputError(_not_a_byte_count(raw), field=flag)
        return None
    number, suffix = match.group(1), match.group(2)
    suffixes = SUFFIX_ERAS.at(version)
    if field == SIZE_FIELD and not has_kv_cache_memory_bytes(version):
        raise InputError(_missing_kv_bytes(engine_version), field=flag)
    if field not in FIELD_ERAS.at(version):
        first = next(era.since for era in FIELD_ERAS if field in era.value)
        raise InputError(f"expected a whole number, got {raw!r} (vLLM reads suffixes like K on it from v{first}, "
                         f"not at {engine_version})", field=flag)  # fmt: skip
    if suffix not in suffixes:
        raise InputError(f"expected a whole number, got {raw!r} (vLLM reads t/T suffixes from "
                         f"v{SUFFIX_ERAS[-1].since}, not at {engine_version})", field=flag)  # fmt: skip
    if suffix.isupper() and "." in number:
        raise InputError(f"vLLM allows no decimals with the binary suffix {suffix} (did you mean "
                         f"{number}{suffix.lower()}?)", field=flag)  # fmt: skip
    multiplier = suffixes[suffix]
    return int(number) * multiplier if suffix.isupper() else int(float(number) * multiplier)


def refuse_missing_kv_bytes(kv_cache_memory_bytes: int | None, engine_version: str | None, flag: str) -> None:
    """`--kv-cache-memory-bytes` at a release before the one that has it: vLLM's argparse rejects it."""
    if kv_cache_memory_bytes is not None and not has_kv_cache_memory_bytes(ResolvedVersion(text=engine_version)):
        raise InputError(_missing_kv_bytes(engine_version), field=flag)


def _missing_kv_bytes(engine_version: str | None) -> str:
    return (f"vLLM has this flag from v{KV_CACHE_MEMORY_BYTES_SINCE} (PR #21489), not at {engine_version}: its "
            "argparse rejects it as an unrecognized argument")  # fmt: skip


def _not_a_byte_count(raw: str) -> str:
    """Why vLLM refuses a size it cannot read ('20GiB', '20 G'), with what it reads instead."""
    spelled = written_size(raw)
    own = (f"; {raw.strip()} = {spelled:,} bytes is kvtop's own spelling, taken only where typed to kvtop"
           if spelled is not None else "")  # fmt: skip
    return (f"expected a byte count, got {raw!r} (vLLM reads a whole number or one suffix: 20G = 20 GiB, "
            f"20g = 20 GB{own})")


def _is_int(text: str) -> bool:
    """Whether Python's int() reads `text`, as vLLM's human_readable_int ends with `int(value)`."""
    try:
        int(text)
    except ValueError:
        return False
    return True
