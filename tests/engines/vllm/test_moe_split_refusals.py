"""Routed-expert splits vLLM refuses as it builds the MoE layers (kvtop/domain/engines/vllm/moe_split.py), each
from the engine's code (the v0.13.0 and v0.33.0 wheels), by hand:

- FusedMoEConfig.__post_init__ (v0.33.0 fused_moe/config.py; v0.13.0 FusedMoE.__init__): `assert
  intermediate_size % tp_size == 0`, tp_size = tp × dp without expert parallelism (flatten_tp_across_dp_and_pcp).
  GLM-4.5-Air's moe_intermediate_size 1,408 over tp 1 × dp 3: 1,408 = 3 × 469 + 1, refused; over dp 2: 704.
- GPTQ experts (AutoGPTQConfig.get_quant_method): Marlin takes the shard only where group_size divides it
  (check_moe_marlin_supports_config, allow_tile_padding), else MoeWNA16Method.create_weights halves the group
  until it divides shard and hidden size, asserting group_size >= 32. Qwen3-30B-A3B-GPTQ-Int4 (768 wide, hidden
  2,048, group 128): tp 4 × dp 4 → 768 ÷ 16 = 48, and 48 % 128, 48 % 64, 48 % 32 = 16 all non-zero → 16 < 32:
  refused; tp 4 × dp 2 → 96: 96 % 32 = 0, built (group 32).
- compressed-tensors WNA16 (v0.33.0 compressed_tensors_moe_wna16.py create_weights): the shard must divide by
  group_size ("... per tensor-parallel partition (32) to be divisible by group_size (64)"). The GLM-5 W4A16
  compressed-tensors config (moe_intermediate_size 2,048, group 64): tp 8 × dp 8 → 32: refused; tp 8 × dp 4 → 64.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.engines.vllm.moe_split import wna16_group
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

AIR = DATA / "engine_diff" / "configs" / "zai-org--GLM-4.5-Air.json"
GPTQ = DATA / "configs" / "quant" / "Qwen--Qwen3-30B-A3B-GPTQ-Int4.json"
CT = DATA / "configs" / "heldout" / "wave5" / "issue2512--glm5_bf16-W4A16-SYM-AWQ-cuda-compressed-tensors.json"


def plan(path: Path, version: str, *flags: str) -> Ledger:
    model = model_from_config(json.loads(path.read_text()), source=path.name)
    settings = parse_flags("vllm", [*flags, "--engine-version", version])
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200")


REFUSED = [
    (AIR, "0.13.0", ("--tp", "1", "--dp", "3"), "moe_intermediate_size 1408 does not divide over the 3 ranks"),
    (AIR, "0.33.0", ("--tp", "1", "--dp", "3"), "FusedMoEConfig.__post_init__ asserts"),
    (AIR, "0.24.0", ("--tp", "1", "--dp", "3"), "FusedMoEConfig.__post_init__ asserts"),  # config.py:1306 from v0.24.0
    (GPTQ, "0.33.0", ("--tp", "4", "--dp", "4"), "(tp 4 × dp 4: 48 wide, hidden 2048)"),
    (CT, "0.33.0", ("--tp", "8", "--dp", "8"), "per tensor-parallel partition (32) to be divisible by group_size (64)"),
    # the check is first in v0.24.0 (compressed_tensors_moe_wna16.py:100-114; absent from v0.23.0)
    (CT, "0.24.0", ("--tp", "8", "--dp", "8"), "per tensor-parallel partition (32) to be divisible by group_size (64)"),
]


@pytest.mark.parametrize(("path", "version", "flags", "said"), REFUSED)
def test_a_split_vllm_asserts_on_is_refused(path: Path, version: str, flags: tuple[str, ...], said: str) -> None:
    with pytest.raises(InputError) as refused:
        plan(path, version, *flags)
    message = str(refused.value)
    assert message.startswith(f"--tp: vLLM {version} ") and said in message and "\n" not in message


PLANNED = [
    (AIR, "0.33.0", ("--tp", "1", "--dp", "2")),  # 1,408 ÷ 2 = 704
    (GPTQ, "0.33.0", ("--tp", "4", "--dp", "4", "--enable-expert-parallel")),  # whole experts: no shard (tp_size 1)
    (GPTQ, "0.33.0", ("--tp", "4", "--dp", "2")),  # 96: MoeWNA16 with groups of 32
    (GPTQ, "0.33.0", ("--tp", "2",)),  # 384: Marlin, groups of 128
    (CT, "0.33.0", ("--tp", "8", "--dp", "4")),  # 64: whole groups
    (CT, "0.13.0", ("--tp", "8", "--dp", "8")),  # v0.13.0's compressed-tensors MoE divides without a check
    (CT, "0.23.0", ("--tp", "8", "--dp", "8")),  # ... as does v0.23.0's
]


@pytest.mark.parametrize(("path", "version", "flags"), PLANNED)
def test_a_split_vllm_builds_is_planned(path: Path, version: str, flags: tuple[str, ...]) -> None:
    assert plan(path, version, *flags).ranks[0].weights.total_bytes > 0


def test_the_wna16_halving() -> None:
    # MoeWNA16Method.create_weights's loop, by hand: 192 ÷ 128 no, ÷ 64 = 3; 96 → 32; 48 → below 32
    assert (wna16_group(384, 2048, 128), wna16_group(192, 2048, 128), wna16_group(96, 2048, 128)) == (128, 64, 32)
    assert wna16_group(48, 2048, 128) is None
