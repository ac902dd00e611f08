"""vLLM's `--kv-cache-memory-bytes`: from which release, and the bytes it reads from what is typed.

The flag is new in v0.10.2 (the wheel's vllm/config/cache.py:116 field, engine/arg_utils.py:744 the flag, :230-236 typed
`human_readable_int`, v1/worker/gpu_worker.py:235-252 the KV memory it gives); the v0.10.1.1 wheel names it nowhere.
`human_readable_int` (v0.10.2 arg_utils.py:1819; v0.33.0 utils/argparse_utils.py:30-74): `re.fullmatch(r'(\\d+(?:\\.\\d+)?)
([kKmMgGtT])')`, k/m/g `int(float(n) * 10**3|6|9)`, K/M/G `int(n) * 2**10|20|30` (a decimal refused), t/T (10**12,
2**40) from v0.13.0, else `int(value)`. The expected bytes below are that arithmetic done by hand.

A real launch (public GitHub file, search-index id 56808083574: a GB10 services playbook, AGENTS.md, "Current Reference
Runtime"): image `aeon-vllm-ultimate:2026-07-01-v0.24.0`, `vllm-embedding.service` (Qwen3-Embedding-8B) with
`max-model-len=40960`, `max-num-batched-tokens=8192`, `kv-cache-memory-bytes=5820M`, "verified 41,376 KV tokens".
Qwen3-Embedding-8B has Qwen3-8B's KV geometry (36 layers × K,V × 8 heads × 128 × 2 B = 147,456 B a token; 16-token
blocks of 2,359,296 B): 5820 × 2^20 = 6,102,712,320 B hold 2,586 blocks = 41,376 tokens, where 5820 × 10^6 would
hold 2,466 blocks = 39,456. So 'M' is MiB, as the code says.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from tests.data_paths import CONFIGS

FLAG = "--kv-cache-memory-bytes"


def _read(text: str, version: str | None, **how: bool) -> int | None:
    stated = ["--engine-version", version] if version else []
    return parse_flags("vllm", [FLAG, text, *stated], **how).kv_cache_memory_bytes


@pytest.mark.parametrize(
    ("version", "text", "expected"),
    [
        ("0.10.2", "20G", 21_474_836_480),  # int('20') * 2**30, at the first release that has the flag
        ("0.10.2", "20g", 20_000_000_000),  # int(float('20') * 10**9)
        ("0.10.2", "1.5g", 1_500_000_000),  # a decimal with a decimal suffix
        ("0.24.0", "5820M", 6_102_712_320),  # the GB10 launch: 5820 * 2**20
        ("0.13.0", "1T", 1_099_511_627_776),  # T from v0.13.0: 2**40
        ("0.13.0", "1t", 1_000_000_000_000),
        (None, "21474836480", 21_474_836_480),  # int(value); no release stated: the latest's rule
    ],
)
def test_the_bytes_are_what_vllm_reads_on_its_line_and_typed_to_kvtop(
    version: str | None, text: str, expected: int
) -> None:
    assert _read(text, version, engine_line=True) == expected
    assert _read(text, version, strict=True) == expected


@pytest.mark.parametrize(
    ("version", "text", "says"),
    [
        (None, "20GiB", "20GiB = 21,474,836,480 bytes is kvtop's own spelling, taken only where typed to kvtop"),
        (None, "20GB", "expected a byte count, got '20GB' (vLLM reads a whole number or one suffix"),
        (None, "20 G", "expected a byte count, got '20 G'"),  # int('20 G') fails, and the regex needs no space
        (None, "1.5G", "no decimals with the binary suffix G (did you mean 1.5g?)"),
        ("0.12.0", "1T", "vLLM reads t/T suffixes from v0.13.0, not at 0.12.0"),
        ("0.10.1.1", "20G", "vLLM has this flag from v0.10.2 (PR #21489), not at 0.10.1.1"),
    ],
)
def test_what_vllm_refuses_on_its_own_line_is_refused_naming_the_flag(
    version: str | None, text: str, says: str
) -> None:
    with pytest.raises(InputError) as caught:
        _read(text, version, engine_line=True)
    assert caught.value.field == FLAG and says in str(caught.value)


def test_kvtops_written_size_is_taken_only_where_typed_to_kvtop() -> None:
    """'20GiB' / '20GB' typed to kvtop are kvtop's own sizes (2^30 and 10^9 a unit); vLLM's '1.5G' stays refused."""
    assert _read("20GiB", None, strict=True) == 20 * 2**30
    assert _read("20GB", None, strict=True) == 20 * 10**9
    assert _read("1.5GiB", None, strict=True) == 3 * 2**29
    with pytest.raises(InputError, match="no decimals with the binary suffix G"):
        _read("1.5G", None, strict=True)
    with pytest.raises(InputError, match="kvtop's own spelling"):  # a log's recorded args are what vLLM read
        _read("20GiB", None)


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["plan", "--model", str(CONFIGS / "Qwen--Qwen3-8B.json"), "--gpu", "H100", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_gb10_embedding_service_holds_the_tokens_it_verified(capsys: pytest.CaptureFixture[str]) -> None:
    launch = ("vllm serve Qwen/Qwen3-Embedding-8B --max-model-len=40960 --max-num-batched-tokens=8192 "
              "--kv-cache-memory-bytes=5820M")  # fmt: skip
    code, out, _ = _plan(capsys, "--engine-version", "0.24.0", "--json", "--cmd", launch)
    assert code == 0
    assert json.loads(out)["token_capacity"] == 41_376  # "verified 41,376 KV tokens"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--cmd", "vllm serve Qwen/Qwen3-8B --kv-cache-memory-bytes 20GiB"],
            f"kvtop: error: {FLAG}: expected a byte count, got '20GiB' (vLLM reads a whole number or one suffix: "
            "20G = 20 GiB, 20g = 20 GB; 20GiB = 21,474,836,480 bytes is kvtop's own spelling, taken only where "
            "typed to kvtop)",
        ),
        (
            ["--engine", "vllm", "--engine-version", "0.10.1.1", FLAG, "21474836480"],
            f"kvtop: error: {FLAG}: vLLM has this flag from v0.10.2 (PR #21489), not at 0.10.1.1: its argparse "
            "rejects it as an unrecognized argument",
        ),
    ],
)
def test_a_refusal_is_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str], args: list[str], line: str
) -> None:
    code, _, err = _plan(capsys, *args)
    assert code != 0 and err.strip().splitlines() == [line]


def test_the_first_release_plans_with_it(capsys: pytest.CaptureFixture[str]) -> None:
    """v0.10.2, 20 GiB of 2,359,296-B blocks: 9,102 blocks (21,474,836,480 ÷ 2,359,296 = 9,102.2), 145,632 tokens."""
    code, out, _ = _plan(capsys, "--engine", "vllm", "--engine-version", "0.10.2", "--json", FLAG, "20G")
    assert code == 0
    assert json.loads(out)["token_capacity"] == 145_632
