"""vLLM's human-readable whole numbers on its command line: `--max-model-len 32K` is 32,768 tokens, `32k` 32,000.

vLLM types some integer flags with `human_readable_int` (vllm/engine/arg_utils.py; vllm/utils/argparse_utils.py from
v0.20.0): a number and one suffix, read by `re.fullmatch(r"(\\d+(?:\\.\\d+)?)([kKmMgGtT])")`. k, m, g are powers of
10 and take a decimal number (`int(float(number) * 10**3)`: '25.6k' is 25,600); K, M, G are powers of 2 and take a
whole number only ('1.5K' is refused: "Decimals are not allowed with binary suffixes"); t and T (10**12, 2**40) from
v0.13.0 (before, the regex matches them but no table holds them, so they fall to `int()` and are refused). Anything
else is Python's `int(value)`. Which flags take it changed by release (FIELD_ERAS); `--max-model-len` also takes
'auto' (= -1, the auto-fit flags.py refuses as not modelled) from v0.14.0.

`--kv-cache-memory-bytes` takes it too (v0.10.2 on, arg_utils.py:230-236) but is read by the shared size reader
(kvtop/domain/units_parse.py parse_vllm_bytes), which also takes kvtop's own '20GiB' / '20GB': not here.
"""

from __future__ import annotations

import re

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError

# the launch fields vLLM reads with human_readable_int, by release (kvtop's field names: context_length is
# --max-model-len)
FIELD_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "v0.8.3 vllm/engine/arg_utils.py:369 --max-model-len type=int (v0.8.0–v0.8.3 read)"),
    Era("0.8.4", frozenset({"context_length"}),
        "v0.8.4 vllm/engine/arg_utils.py:394 --max-model-len type=human_readable_int (:1749); :556 "
        "--max-num-batched-tokens type=int; v0.9.0 :224 get_kwargs {max_model_len}"),
    Era("0.9.1", frozenset({"context_length", "max_num_batched_tokens"}),
        "v0.9.1 vllm/engine/arg_utils.py:240 get_kwargs {max_model_len, max_num_batched_tokens}"),
))  # fmt: skip
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
        return None
    number, suffix = match.group(1), match.group(2)
    suffixes = SUFFIX_ERAS.at(version)
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
