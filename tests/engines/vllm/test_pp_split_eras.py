"""vLLM's pipeline split by release (get_pp_indices, vllm/distributed/utils.py; engines/vllm/pp_split.py).

Independent sources: before v0.8.0 the wheels' arithmetic (0.5.1 … 0.7.3: `start_layer = pp_rank * (n // pp)`,
the last stage ending at n); from v0.8.0 vLLM's own test of get_pp_indices (tests/distributed/
test_pipeline_partition.py `test_uneven_auto_partition`, vllm-project/vllm@2758bed7), whose goldens these are.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.layout import largest_stage_layers, pp_layer_range
from tests.conftest import CONFIGS

QWEN_7B = str(CONFIGS / "Qwen--Qwen2.5-7B.json")  # 28 layers, 4 KV heads × 128: 2,048 B of KV a layer a token


def _ranges(release: str, layers: int, pp: int) -> list[tuple[int, int]]:
    remainder = engine_rules("vllm").pp_remainder_at(ResolvedVersion(text=release))
    stages = [pp_layer_range(layers, rank, pp, remainder) for rank in range(pp)]
    return [(stage.start, stage.stop) for stage in stages]


@pytest.mark.parametrize(
    ("layers", "pp", "indices"),
    [
        (3, 2, [(0, 2), (2, 3)]),  # vLLM's goldens: the remainder on the stages before the last
        (4, 3, [(0, 1), (1, 3), (3, 4)]),
        (5, 3, [(0, 2), (2, 4), (4, 5)]),
    ],
)
@pytest.mark.parametrize("release", ["0.8.0", "0.11.2", "0.27.1"])
def test_from_0_8_0_the_split_is_vllms_own_tests(release: str, layers: int, pp: int, indices: list) -> None:
    assert _ranges(release, layers, pp) == indices


@pytest.mark.parametrize("release", ["0.5.1", "0.6.3", "0.7.3"])
def test_before_0_8_0_the_last_stage_takes_the_remainder(release: str) -> None:
    """5 layers at PP 3: 5 // 3 = 1 a stage, the last from 2 to 5; 28 at PP 5: 5, 5, 5, 5, 8."""
    assert _ranges(release, 5, 3) == [(0, 1), (1, 2), (2, 5)]
    assert [stop - start for start, stop in _ranges(release, 28, 5)] == [5, 5, 5, 5, 8]
    assert largest_stage_layers(28, 5, engine_rules("vllm").pp_remainder_at(ResolvedVersion(text=release))) == 8


@pytest.mark.parametrize(("release", "layers"), [("0.7.3", 8), ("0.8.0", 6)])
def test_a_plan_sizes_kv_for_the_largest_stage_of_its_release(
    capsys: pytest.CaptureFixture[str], release: str, layers: int
) -> None:
    """Qwen2.5-7B at PP 5: the engine core takes the least block count over the workers, so the stage with the most
    layers sets the bytes a token takes: 8 layers' (16,384 B) at 0.7.3, 6 layers' (12,288 B) at 0.8.0."""
    argv = ["plan", "--json", "--model", QWEN_7B, "--engine", "vllm", "--engine-version", release, "--gpu", "H100",
            "--pp", "5"]  # fmt: skip
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["kv_bytes_per_token"] == layers * 4 * 128 * 2 * 2


def test_a_launchs_layer_partition_is_named_not_modelled(capsys: pytest.CaptureFixture[str]) -> None:
    """VLLM_PP_LAYER_PARTITION replaces get_pp_indices' split (v0.6.0+): the plan says so rather than size stages the
    engine does not build; at PP 1 (no split) it says nothing."""
    for pp, said in (("5", True), ("1", False)):
        command = f"VLLM_PP_LAYER_PARTITION=4,6,6,6,6 vllm serve {QWEN_7B} --pipeline-parallel-size {pp}"
        argv = ["plan", "--json", "--cmd", command, "--engine-version", "0.11.2", "--gpu", "H100"]
        assert main(argv) == 0
        listed = json.loads(capsys.readouterr().out)["not_modelled"]
        assert [item.startswith("VLLM_PP_LAYER_PARTITION=4,6,6,6,6 in the launch") for item in listed] == (
            [True] if said else []
        )
