"""SGLang's pipeline split by release (get_pp_indices, python/sglang/srt/distributed/utils.py; pp_split.py).

Expected splits are get_pp_indices' arithmetic as each wheel's code reads: 0.5.5 (and 0.5.3 … 0.5.5.post3)
`start_layer = pp_rank * (n // pp)`, the last stage ending at n; 0.5.6 (… 0.5.23) the last n % pp partitions one
layer more each.
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


@pytest.mark.parametrize(
    ("release", "sizes"),
    [
        ("0.5.5", [5, 5, 5, 5, 8]),  # 28 // 5 = 5 a stage; the last from 20 to 28
        ("0.5.5.post3", [5, 5, 5, 5, 8]),
        ("0.5.6", [5, 5, 6, 6, 6]),  # 28 % 5 = 3: the last three take one more
        ("0.5.23", [5, 5, 6, 6, 6]),
    ],
)
def test_each_release_splits_as_its_get_pp_indices(release: str, sizes: list[int]) -> None:
    remainder = engine_rules("sglang").pp_remainder_at(ResolvedVersion(text=release))
    assert [len(pp_layer_range(28, rank, 5, remainder)) for rank in range(5)] == sizes
    assert largest_stage_layers(28, 5, remainder) == max(sizes)


@pytest.mark.parametrize(("release", "layers"), [("0.5.5", 8), ("0.5.6", 6)])
def test_a_plan_sizes_kv_for_the_largest_stage_of_its_release(
    capsys: pytest.CaptureFixture[str], release: str, layers: int
) -> None:
    """Qwen2.5-7B at PP 5: SGLang sizes each stage's pool with the MIN over ranks, so the stage with the most layers
    sets the bytes a token takes: 8 layers' (16,384 B) at 0.5.5, 6 layers' (12,288 B) at 0.5.6."""
    argv = ["plan", "--json", "--model", QWEN_7B, "--engine", "sglang", "--engine-version", release, "--gpu", "H100",
            "--pp", "5"]  # fmt: skip
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["kv_bytes_per_token"] == layers * 4 * 128 * 2 * 2
