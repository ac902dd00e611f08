"""TurboMind's weights under --ep by release (kvtop.domain.engines.lmdeploy.turbomind_ep; docs/engines/lmdeploy.md
§16.1), from the PyPI wheels 0.14.0 – 0.18.0 (read 2026-12-06).

Expected per-rank bytes are the wheels' arithmetic by hand, from the configs (bf16, 2 B a parameter):
- parallel_config.py `_try_layout`: devices = dp × attn_tp × cp = outer_dp × ep × mlp_tp, attn_tp or mlp_tp = tp;
  so tp 4, ep 4 gives mlp_tp 1. builders/moe.py: each rank holds experts ÷ ep, each split over mlp_tp.
- 0.15.0 – 0.17.0: every FfnBuilder(tp=self._mlp_tp): shared experts and dense FFN whole at mlp_tp 1.
- 0.18.0 model_loader.py:53-60 dense_tp = min(mlp_tp × ep, GPUs) = 4 for glm4_moe_lite.py's and qwen3.py's
  (a MoE model's) dense layers; shared experts still over mlp_tp. Before 0.15.0 TurboMind does not read --ep.
GLM-4.7-Flash (Glm4MoeLiteForCausalLM, DeepSeek-V2-Lite-like): 47 layers, the first dense (intermediate 10,240), 46 MoE
with one shared expert of 1,536; hidden 2,048. Qwen1.5-MoE-like (Qwen2MoeForCausalLM): 24 MoE layers, a shared expert
of 5,632; hidden 2,048.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.lmdeploy.turbomind_ep import mlp_tp_and_devices
from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import DATA

CONFIGS = DATA / "configs"
H100_BYTES = 80 * GIB
GLM_FLASH = CONFIGS / "heldout" / "wave5" / "zai-org--GLM-4.7-Flash.json"
QWEN2_MOE = CONFIGS / "heldout" / "mlc--qwen2moe.json"
QWEN3_MOE = CONFIGS / "Qwen--Qwen3-30B-A3B.json"

GLM_DENSE_WHOLE = 1 * 3 * 10_240 * 2_048 * 2  # 125,829,120 B: the first layer's gate, up and down
GLM_SHARED_WHOLE = 46 * 3 * 1_536 * 2_048 * 2  # 868,220,928 B
GLM_ROUTED_PER_RANK = 46 * (64 // 4) * 3 * 1_536 * 2_048 * 2  # 16 of 64 experts whole: 13,891,534,848 B


def _model(path: Path, **update: object) -> ModelSpec:
    config = json.loads(path.read_text()) | update
    return model_from_config(config, source=path.name)


def _plan(model: ModelSpec, release: str, flags: list[str], backend: str = "turbomind") -> Ledger:
    settings = parse_flags("lmdeploy", ["--model", "m", "--backend", backend, "--engine-version", release, *flags])
    return predict(model, settings, gpu_total_bytes=H100_BYTES, gpu_name="H100", measured=MeasuredInputs())


def _rows(ledger: Ledger) -> dict[str, int]:
    return {row.component: row.bytes for row in ledger.ranks[0].weights.rows}


@pytest.mark.parametrize(
    ("release", "dense", "shared"),
    [
        ("0.14.0", GLM_DENSE_WHOLE // 4, GLM_SHARED_WHOLE // 4),  # --ep not read: every part over TP 4
        ("0.15.0", GLM_DENSE_WHOLE, GLM_SHARED_WHOLE),  # mlp_tp 1: both whole on every rank
        ("0.17.0", GLM_DENSE_WHOLE, GLM_SHARED_WHOLE),
        ("0.18.0", GLM_DENSE_WHOLE // 4, GLM_SHARED_WHOLE),  # the dense layer over dense_tp 4, shared over mlp_tp 1
    ],
)
def test_glm_flash_ep4_per_rank_mlp_bytes_by_release(release: str, dense: int, shared: int) -> None:
    rows = _rows(_plan(_model(GLM_FLASH), release, ["--tp", "4", "--ep", "4"]))
    assert (rows["mlp"], rows["shared_experts"]) == (dense, shared)
    assert rows["routed_experts"] == GLM_ROUTED_PER_RANK == 13_891_534_848


def test_the_pytorch_engine_keeps_the_shared_experts_over_tp() -> None:
    """The rule is TurboMind's: the PyTorch engine's rows are the book's (shared experts over TP 4)."""
    rows = _rows(_plan(_model(GLM_FLASH), "0.18.0", ["--tp", "4", "--ep", "4"], "pytorch"))
    assert rows["shared_experts"] == GLM_SHARED_WHOLE // 4


def test_qwen2_moe_shared_expert_whole_from_0_15() -> None:
    """qwen2.py: m.shared = self.ffn(…, tp=self._mlp_tp) in every release that reads --ep; the gate [hidden] whole."""
    model = _model(QWEN2_MOE)
    whole = 24 * (3 * 5_632 * 2_048 + 2_048) * 2  # 1,661,042,688 B
    old, new = (_rows(_plan(model, r, ["--tp", "4", "--ep", "4"])) for r in ("0.14.0", "0.18.0"))
    assert new["shared_experts"] == whole == 1_661_042_688
    assert old["shared_experts"] == 24 * (3 * 5_632 * 2_048 // 4 + 2_048) * 2
    assert "mlp" not in new and "mlp" not in old  # every layer MoE: no dense FFN


def test_qwen3_moe_dense_layers_over_dense_tp_in_0_18() -> None:
    """qwen3.py:124-143 (0.18.0): a Qwen3-MoE model's mlp_only_layers over dense_tp; 0.17.0 over mlp_tp. The
    Qwen3-30B-A3B config with two of its 48 layers dense (intermediate 6,144, hidden 2,048) to reach that branch."""
    model = _model(QWEN3_MOE, mlp_only_layers=[0, 47])
    whole = 2 * 3 * 6_144 * 2_048 * 2  # 150,994,944 B
    by_release = {r: _rows(_plan(model, r, ["--tp", "4", "--ep", "4"])) for r in ("0.17.0", "0.18.0")}
    assert by_release["0.17.0"]["mlp"] == whole
    assert by_release["0.18.0"]["mlp"] == whole // 4
    assert by_release["0.17.0"]["routed_experts"] == by_release["0.18.0"]["routed_experts"]


def test_dp_with_ep_is_one_engine_whose_dense_layers_span_every_rank() -> None:
    """dp 2 × tp 2 at ep 4: parallel_config.py takes outer_dp 1, attn_dp 2, mlp_tp 1 (4 devices); 0.18.0's
    dense_tp = min(1 × 4, 4) = 4, wider than TP 2."""
    rows = _rows(_plan(_model(GLM_FLASH), "0.18.0", ["--tp", "2", "--dp", "2", "--ep", "4"]))
    assert (rows["mlp"], rows["shared_experts"]) == (GLM_DENSE_WHOLE // 4, GLM_SHARED_WHOLE)


@pytest.mark.parametrize(
    ("sizes", "expected"),
    [
        ((1, 8, 8, 1), (1, 8)),  # ep == tp: the MLP's TP is 1
        ((1, 8, 2, 1), (4, 8)),  # ep 2 of tp 8: each expert over 4 ranks
        ((2, 4, 8, 1), (1, 8)),  # ep over tp × dp: one engine, attention data-parallel
        ((2, 4, 1, 1), (4, 8)),  # no EP at dp 2: outer_dp 2 replicas, mlp_tp = tp
        ((1, 8, 1, 2), (8, 8)),  # cp 2: attn_tp 4, mlp_tp 8 = tp
        ((1, 1, 8, 1), None),  # the legacy "tp 1, ep 8" spelling (parallel_config.py's docstring: now refused)
    ],
)
def test_mlp_tp_as_parallel_config_derives_it(sizes: tuple[int, int, int, int], expected: tuple[int, int] | None) -> None:
    """Each from parallel_config.py's constraints by hand: devices = dp × attn_tp × cp = outer_dp × ep × mlp_tp."""
    assert mlp_tp_and_devices(*sizes) == expected


def test_ep_with_cp_over_more_gpus_than_the_layout_is_not_modelled() -> None:
    """tp 4, cp 2, ep 4: parallel_config.py's devices are dp × tp × gcd(cp, ep) = 8, twice the layout's 4."""
    with pytest.raises(LayoutError, match="not modelled: TurboMind lays dp 1 × tp 4 with ep 4 and cp 2 over 8 GPUs"):
        _plan(_model(QWEN2_MOE), "0.18.0", ["--tp", "4", "--ep", "4", "--cp", "2"])
