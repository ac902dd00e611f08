"""SGLang's FusedMoE.__init__ (layers/moe/fused_moe_triton/layer.py, 0.5.6.post2 and 0.5.23) asserts
`intermediate_size % self.moe_tp_size == 0`, moe_tp_size = tp ÷ ep (0.5.23 runtime_context.py
derive_parallel_widths: tp_size // moe_ep_size // moe_dp_size, moe_dp_size 1 by default). GLM-4.5-Air
(moe_intermediate_size 1,408 = 2^7 × 11, 96 heads, 8 KV heads, 128 experts): tp 24 ÷ ep 8 = 3, and 1,408 % 3 = 1:
refused; tp 8 ÷ ep 2 = 4: 352 a rank, built."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

AIR = DATA / "engine_diff" / "configs" / "zai-org--GLM-4.5-Air.json"


def plan(version: str, *flags: str) -> Ledger:
    model = model_from_config(json.loads(AIR.read_text()), source=AIR.name)
    settings = parse_flags("sglang", [*flags, "--engine-version", version])
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200")


@pytest.mark.parametrize("version", ["0.5.6.post2", "0.5.23"])
def test_experts_that_do_not_divide_over_the_moe_tp_group_are_refused(version: str) -> None:
    with pytest.raises(InputError) as refused:
        plan(version, "--tp", "24", "--ep", "8")
    message = str(refused.value)
    assert message.startswith(f"--tp: SGLang {version} ") and "1408" in message and "(tp 24 ÷ ep 8 = 3)" in message


def test_experts_that_divide_are_planned() -> None:
    assert plan("0.5.23", "--tp", "8", "--ep", "2").ranks[0].weights.total_bytes > 0
