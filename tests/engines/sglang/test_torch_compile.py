"""`--enable-torch-compile` and `--cuda-graph-bs` at SGLang 0.5.10 … 0.5.23. Torch compile: the prefill (piecewise) CUDA graphs off before the automatic
fraction is sized (torch_compile.py; 0.5.12 server_args.py:1315 then :920), nothing compiled before the pool.

Expected from the engine's own log: huanchen-stack/sglang at 98c6bfb8 (tests/data/calibration/sglang.jsonl
`huanchen-rollout-r1-distill-qwen-7b-a100-tp1-bs128`, a 0.5.12.post1-era fork, A100 80GB, TP 1, chunked prefill 8,192,
`--cuda-graph-max-bs 128 --enable-torch-compile`) prints 'Disable piecewise CUDA graph because
--disable-piecewise-cuda-graph is set' and mem_fraction_static=0.839; by SGLang's arithmetic (0.5.12 :1541-1590)
512 + 1.5 × 8,192 + 2 × 128 + 1/8 × 1,024 = 13,184 MiB, round((81,920 − 13,184) / 81,920, 3) = 0.839; with the 58
prefill sizes (8 × 58 = 464 MiB) it would be 0.833.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import EngineResult
from kvtop.domain.engines.versions import parse_release
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

QWEN25_7B = DATA / "configs" / "Qwen--Qwen2.5-7B.json"
A100_80GB = 81920 << 20
LAUNCH = ["--tp-size", "1", "--dtype", "bfloat16", "--max-running-requests", "128", "--cuda-graph-max-bs", "128",
          "--context-length", "35000", "--attention-backend", "triton"]  # fmt: skip
LAUNCH_0_5_20 = [("--cuda-graph-max-bs-decode" if word == "--cuda-graph-max-bs" else word) for word in LAUNCH]


def _engine(version: str, flags: list[str]) -> EngineResult:
    """The launch at `version`; from 0.5.20 with `--cuda-graph-max-bs-decode`, the only spelling it takes."""
    model = model_from_config(json.loads(QWEN25_7B.read_text()), source=QWEN25_7B.name)
    release, gone = parse_release(version), parse_release("0.5.20")
    launch = LAUNCH_0_5_20 if release and gone and release >= gone else LAUNCH
    settings = parse_flags("sglang", [*launch, *flags]).model_copy(update={"engine_version": version})
    return predict(model, settings, gpu_total_bytes=A100_80GB, gpu_name="A100-80GB").engine


def test_torch_compile_drops_the_prefill_graph_reserve_as_the_log_says() -> None:
    compiled = _engine("0.5.12.post1", ["--enable-torch-compile", "--torch-compile-max-bs", "128"])
    assert compiled.memory_fraction == 0.839
    assert "off for --enable-torch-compile" in compiled.memory_fraction_source
    assert _engine("0.5.12.post1", []).memory_fraction == 0.833


# 0.5.14 (torch_compile.py): the default tc_piecewise prefill backend (cuda_graph_config.py:91) is turned off for
# "full torch.compile mode" (server_args.py:3008) before the reserve (:2508 then :2524), which then skips its
# 8 MiB × 58 sizes (:3300-3304; `_generate_prefill_cuda_graph_batch_sizes(8192)`: 8+14+8+8+12+8 = 58). The same
# launch by 0.5.14's arithmetic (A100 80GB: chunked 8,192 :3172): 512 + 1.5 × 8,192 + 2 × 128 + 128 = 13,184 MiB →
# round(68,736 / 81,920, 3) = 0.839; with the prefill graphs 13,648 → round(68,272 / 81,920, 3) = 0.833.
def test_torch_compile_drops_the_default_tc_piecewise_reserve_at_0_5_14() -> None:
    compiled = _engine("0.5.14", ["--enable-torch-compile"])
    assert compiled.memory_fraction == 0.839
    assert "off for --enable-torch-compile" in compiled.memory_fraction_source
    assert _engine("0.5.14", []).memory_fraction == 0.833


# 0.5.15 … 0.5.23: the prefill default on CUDA is breakable (cuda_graph_config.py `default_prefill_backend`), whose
# switch-offs never read torch compile (only the tc_piecewise rules do): the reserve is the launch's without the flag.
@pytest.mark.parametrize("version", ["0.5.15", "0.5.16", "0.5.21", "0.5.23"])
def test_torch_compile_leaves_the_breakable_prefill_reserve(version: str) -> None:
    compiled = _engine(version, ["--enable-torch-compile"])
    plain = _engine(version, [])
    assert "off for" not in compiled.memory_fraction_source
    assert "prefill graphs" in compiled.memory_fraction_source
    assert compiled.memory_fraction == plain.memory_fraction
    assert compiled.kv_pool_bytes == plain.kv_pool_bytes


def test_torch_compile_is_refused_where_its_effect_was_not_read() -> None:
    with pytest.raises(InputError, match="only from SGLang 0.5.10"):
        _engine("0.5.9", ["--enable-torch-compile"])


# `--cuda-graph-bs` (cuda_graph_bs.py): 0.5.12 server_args.py:1495 `cuda_graph_max_bs = max(cuda_graph_bs)` over a typed
# `--cuda-graph-max-bs`, before the reserve's 2 MiB a size (:1550). By hand, with torch compile (no prefill graphs):
# the sizes up to 256 → 512 + 12,288 + 512 + 128 = 13,440 → round(68,480 / 81,920, 3) = round(0.83594, 3) = 0.836;
# the huanchen launch's own `--cuda-graph-bs 128` → 13,184 → 0.839 (its log).
@pytest.mark.parametrize(("sizes", "expected"), [(["128"], 0.839), (["1", "2", "4", "8", "256"], 0.836)])
def test_the_largest_cuda_graph_bs_is_the_reserves_decode_size(sizes: list[str], expected: float) -> None:
    flags = ["--enable-torch-compile", "--cuda-graph-bs", *sizes]
    assert _engine("0.5.12.post1", flags).memory_fraction == expected


# 0.5.14 … 0.5.19: an alias of --cuda-graph-bs-decode whose max is the decode max_bs before the reserve (0.5.14
# server_args.py:6367, :3220, :3285): at 0.5.14 with torch compile the same 0.836 / 0.839 as 0.5.12's arithmetic above.
@pytest.mark.parametrize(("sizes", "expected"), [(["128"], 0.839), (["1", "2", "4", "8", "256"], 0.836)])
def test_the_largest_cuda_graph_bs_is_the_reserves_decode_size_at_0_5_14(
    sizes: list[str], expected: float
) -> None:
    assert (
        _engine("0.5.14", ["--enable-torch-compile", "--cuda-graph-bs", *sizes]).memory_fraction == expected
    )


def test_a_larger_cuda_graph_bs_reserves_more_at_0_5_19() -> None:
    small = _engine("0.5.19", ["--cuda-graph-bs", "1", "128"]).memory_fraction
    large = _engine("0.5.19", ["--cuda-graph-bs", "1", "2048"]).memory_fraction  # + 2 × 1,920 MiB = 3,840 MiB
    assert small is not None and large is not None
    assert abs((small - large) - 3840 / 81920) <= 0.001  # each fraction rounded to 3 places


@pytest.mark.parametrize(
    ("version", "why"),
    [
        ("0.5.9", "0.5.10 … 0.5.19.*not read"),
        # the flag's row (flag_releases.READ): 0.5.19 server_args.py:3937 is its last declaration
        ("0.5.20", "has no --cuda-graph-bs \\(last in v0.5.19, none in v0.5.20"),
        ("0.5.23", "has no --cuda-graph-bs \\(last in v0.5.19, none in v0.5.20"),
    ],
)
def test_cuda_graph_bs_is_refused_where_its_effect_was_not_read(version: str, why: str) -> None:
    with pytest.raises(InputError, match=why):
        _engine(version, ["--cuda-graph-bs", "8", "16"])


# `--cuda-graph-bs-decode` (the field the alias fills, 0.5.14 server_args.py:1947, 0.5.23 arg_groups/fields/exec_.py:640):
# the same 0.836 at 0.5.14 as the alias; at 0.5.23 it moves the fraction as the alias did at 0.5.19 (2 MiB a size).
def test_cuda_graph_bs_decode_is_the_alias_from_0_5_14() -> None:
    sizes = ["1", "2", "4", "8", "256"]
    assert (
        _engine("0.5.14", ["--enable-torch-compile", "--cuda-graph-bs-decode", *sizes]).memory_fraction
        == 0.836
    )
    small = _engine("0.5.23", ["--cuda-graph-bs-decode", "1", "128"]).memory_fraction
    large = _engine("0.5.23", ["--cuda-graph-bs-decode", "1", "2048"]).memory_fraction
    assert abs((small - large) - 3840 / 81920) <= 0.001


def test_cuda_graph_bs_decode_is_refused_before_0_5_14_and_beside_its_alias() -> None:
    with pytest.raises(InputError, match="has no --cuda-graph-bs-decode"):
        _engine("0.5.13", ["--cuda-graph-bs-decode", "8"])
    with pytest.raises(InputError, match="alias"):
        _engine("0.5.14", ["--cuda-graph-bs", "8", "--cuda-graph-bs-decode", "16"])


# `--cuda-graph-max-bs` (cuda_graph_bs.typed_max): 0.5.20 server_args.py declares neither it nor an alias, and its
# parser's prefix match (server_args.py:701) finds both `--cuda-graph-max-bs-decode` and `-prefill`: refused there.
@pytest.mark.parametrize("version", ["0.5.20", "0.5.23"])
def test_cuda_graph_max_bs_is_refused_from_0_5_20_naming_the_field(version: str) -> None:
    model = model_from_config(json.loads(QWEN25_7B.read_text()), source=QWEN25_7B.name)
    settings = parse_flags("sglang", LAUNCH).model_copy(update={"engine_version": version})
    with pytest.raises(InputError, match="has no --cuda-graph-max-bs .*type --cuda-graph-max-bs-decode"):
        predict(model, settings, gpu_total_bytes=A100_80GB, gpu_name="A100-80GB")


# `--cuda-graph-max-bs-decode` (0.5.14 server_args.py:1939; the alias's dest, :6363) is the decode max_bs the reserve
# adds 2 MiB a size for (0.5.14 :2959-2960, :3285): with torch compile at 0.5.14, 128 → 0.839 (the huanchen arithmetic
# above), 1,024 → 512 + 12,288 + 2,048 + 128 = 14,976 MiB → round(66,944 / 81,920, 3) = 0.817.
@pytest.mark.parametrize(("size", "expected"), [("128", 0.839), ("1024", 0.817)])
def test_cuda_graph_max_bs_decode_is_read_as_the_alias_from_0_5_14(size: str, expected: float) -> None:
    at = LAUNCH.index("--cuda-graph-max-bs")
    plain = LAUNCH[:at] + LAUNCH[at + 2 :]
    model = model_from_config(json.loads(QWEN25_7B.read_text()), source=QWEN25_7B.name)
    for flag in ("--cuda-graph-max-bs", "--cuda-graph-max-bs-decode"):
        typed = [*plain, "--enable-torch-compile", flag, size]
        settings = parse_flags("sglang", typed).model_copy(update={"engine_version": "0.5.14"})
        engine = predict(model, settings, gpu_total_bytes=A100_80GB, gpu_name="A100-80GB").engine
        assert engine.memory_fraction == expected, flag


def test_cuda_graph_max_bs_decode_is_refused_before_0_5_14_and_beside_its_alias() -> None:
    with pytest.raises(InputError, match="has no --cuda-graph-max-bs-decode"):
        _engine("0.5.13", ["--cuda-graph-max-bs-decode", "8"])
    with pytest.raises(InputError, match="alias"):
        _engine("0.5.14", ["--cuda-graph-max-bs-decode", "16"])  # beside LAUNCH's --cuda-graph-max-bs 128
