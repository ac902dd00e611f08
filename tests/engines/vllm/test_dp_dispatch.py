"""DP replicas of a MoE model: the profile's MoE batch gathered over the DP ranks is named, not priced (dp_dispatch.py).

Expected values are vLLM's code: `VLLM_ALL2ALL_BACKEND` defaults to 'naive' at v0.10.1.1 (envs.py:1021-1022) and the
parallel config's `all2all_backend` to 'allgather_reducescatter' at v0.14.0 (config/parallel.py:152); both gather the
DP ranks' tokens into each MoE layer (fused_moe/layer.py:1639-1644 at v0.10.1.1). The launch is vllm-project/recipes
PR 12's, whose start printed 48.66 GiB of KV a rank where kvtop plans 52.42 (corpus record
`vllm-recipes12-qwen3-coder-480b-fp8-8xh20-141g-dp8-ep-u09-v0101dev`).
"""

from __future__ import annotations

import json

from kvtop.domain.deployment import Charge, Feature, TermState
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.data_paths import CONFIGS, DATA

MIB = 1 << 20
H20_141GB = 143771 * MIB  # nvidia-smi's total of the 141 GB HBM3e boards (the H200's)


def load(path: str) -> ModelSpec:
    return model_from_config(json.loads((DATA / path).read_text()), source=path)


QWEN3_CODER_480B_FP8 = load("calibration/configs/Qwen--Qwen3-Coder-480B-A35B-Instruct-FP8.RECONSTRUCTED.json")
LLAMA8B = model_from_config(json.loads((CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json").read_text()), source="llama")


def plan(model: ModelSpec, flags: list[str]) -> Ledger:
    return predict(model, parse_flags("vllm", flags, strict=True), gpu_total_bytes=H20_141GB, gpu_name="H20")


def gathered(ledger: Ledger) -> list[str]:
    return [t.detail for t in ledger.terms
            if t.feature is Feature.EXPERT_PARALLEL and t.charge is Charge.RESERVE and t.state is TermState.NOT_MODELLED
            and "gathered over" in t.label]  # fmt: skip


RECIPES_12 = ["-dp", "8", "--enable-expert-parallel", "--max-model-len", "32768"]


def test_dp_replicas_of_a_moe_name_the_gathered_batch_by_the_release_default() -> None:
    naive = gathered(plan(QWEN3_CODER_480B_FP8, [*RECIPES_12, "--engine-version", "0.10.1"]))
    assert len(naive) == 1 and "'naive'" in naive[0] and "8 × max_num_batched_tokens" in naive[0]
    later = gathered(plan(QWEN3_CODER_480B_FP8, [*RECIPES_12, "--engine-version", "0.14.0"]))
    assert len(later) == 1 and "'allgather_reducescatter'" in later[0]


def test_one_replica_or_a_dense_model_has_no_gathered_batch() -> None:
    assert not gathered(plan(QWEN3_CODER_480B_FP8, ["-tp", "8", "--enable-expert-parallel", "--max-model-len", "32768"]))
    assert not gathered(plan(LLAMA8B, ["-dp", "2", "--engine-version", "0.10.1"]))


def test_the_line_prices_nothing() -> None:
    """Named, not priced: the plan's KV budget is the one without the line (52.42 GiB at 0.9, log 48.66)."""
    ledger = plan(QWEN3_CODER_480B_FP8, [*RECIPES_12, "--engine-version", "0.10.1"])
    line = next(t for t in ledger.terms if "gathered over" in t.label)
    assert line.bytes == 0


def test_the_line_is_in_the_ledgers_not_modelled_list() -> None:
    """`Ledger.not_modelled` is the one list plan, explain, the planner and the JSON read: the gathered batch is in
    it once (it was printed in the plan's text alone); a launch without it adds nothing there."""
    ledger = plan(QWEN3_CODER_480B_FP8, [*RECIPES_12, "--engine-version", "0.10.1"])
    said = [line for line in ledger.not_modelled if "gathered over 8 DP ranks" in line]
    assert len(said) == 1 and said[0].startswith("MoE batch gathered over 8 DP ranks in the profile run "
                                                 "(--data-parallel-size 8): the default all-to-all ('naive'")
    one = plan(QWEN3_CODER_480B_FP8, ["-tp", "8", "--enable-expert-parallel", "--max-model-len", "32768"])
    assert not any("gathered over" in line for line in one.not_modelled)
