"""`--cuda-graph-sizes` (v0.9.0 to v0.12.0, argparse nargs="+"): the CUDA-graph capture sizes it sets, by release.

Expected values from vLLM's own code: v0.10.1.1 config/__init__.py:3768-3781 (VllmConfig._set_cudagraph_sizes: one
value N → [1, 2, 4] + range(8, N + 1, 8), several → sorted, read only where compilation_config.cudagraph_capture_sizes
is unset); v0.11.1 engine/arg_utils.py:1743-1754 (copied as given into cudagraph_capture_sizes, "mutually exclusive"
with it); v0.13.0 engine/arg_utils.py has no cuda_graph_sizes; v0.8.5 none either. The end-to-end figure is the
calibration record `huzifa1-profiling-gpt-oss-20b-h100nvl-v01011`: 'GPU KV cache size: 1,508,112 tokens'.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.compilation import graph_config
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from tests.cli_in_process import run_kvtop
from tests.data_paths import CONFIGS


def _sizes(release: str, *flags: str) -> tuple[int, ...] | None:
    settings = parse_flags("vllm", list(flags), strict=True)
    return graph_config(settings.flags, ResolvedVersion(text=release)).capture_sizes


def test_every_value_up_to_the_next_flag_is_taken() -> None:
    settings = parse_flags("vllm", ["--cuda-graph-sizes", "1", "2", "4", "--max-num-seqs", "8"], strict=True)
    assert settings.flags["cuda-graph-sizes"] == "1 2 4"
    assert settings.max_running_requests == 8
    assert settings.to_flags()[-4:] == ["--cuda-graph-sizes", "1", "2", "4"]  # written back one token a value


def test_one_value_is_a_pattern_until_v0_11_0_and_one_size_after() -> None:
    assert _sizes("0.10.1.1", "--cuda-graph-sizes", "64") == (1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64)
    assert _sizes("0.11.1", "--cuda-graph-sizes", "64") == (64,)
    assert _sizes("0.10.1.1", "--cuda-graph-sizes", "16", "1", "8") == (1, 8, 16)


def test_the_configs_sizes_win_then_clash() -> None:
    config = ["--compilation-config", '{"cudagraph_capture_sizes": [1, 2]}']
    assert _sizes("0.10.1.1", *config, "--cuda-graph-sizes", "64") == (1, 2)
    with pytest.raises(InputError, match="mutually exclusive"):
        _sizes("0.12.0", *config, "--cuda-graph-sizes", "64")


@pytest.mark.parametrize("release", ["0.8.5", "0.13.0"])
def test_a_release_without_the_flag_refuses_it(release: str) -> None:
    with pytest.raises(InputError, match="not a flag of vLLM"):
        _sizes(release, "--cuda-graph-sizes", "64")


def test_the_gpt_oss_engine_args_start_plans_as_passed() -> None:
    sizes = ["1", "2", "4", *(str(size) for size in range(8, 257, 8))]  # the record's list: vLLM's own default
    base = ["plan", "--engine", "vllm", "--engine-version", "0.10.1.1", "--gpu",
            "H100-NVL", "--model", str(CONFIGS / "openai--gpt-oss-20b.json"), "--no-calibration-store", "--json",
            "--engine-context"]  # fmt: skip
    planned = []
    for extra in (["--cuda-graph-sizes", *sizes], []):
        completed = run_kvtop(*base, *extra)
        assert completed.returncode == 0, completed.stderr
        planned.append(int(json.loads(completed.stdout)["token_capacity"]))
    logged = 1_508_112  # 'GPU KV cache size: 1,508,112 tokens'
    assert abs(planned[0] - logged) / logged < 0.02
    assert planned[0] == planned[1]  # graphs are not charged to the KV budget before v0.20.0
