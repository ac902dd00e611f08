"""A dense MLP whose width does not divide by TP: vLLM and SGLang refuse the launch (kvtop.domain.tp_widths, each
engine's `refusals.TP_WIDTHS`).

Input: meta-llama/Llama-2-13b-hf's config (tests/data/configs/heldout/mlc--llama2_13b.json, MLC preset): 40 heads,
40 KV heads, intermediate_size 13,824 = 2^9 × 3^3. At TP 5 the heads divide (40 ÷ 5 = 8) but 13,824 ÷ 5 = 2,764.8:
LlamaMLP's gate_up_proj is a MergedColumnParallelLinear([13824, 13824]), whose constructor asserts
`all(output_size % tp_size == 0 …)` (vLLM v0.13.0 / v0.33.0 and SGLang 0.5.6.post2 / 0.5.23 layers/linear.py).
Oracle: the engines' meta builds at TP 5 (registry_sweep.py --set real --only mlc--llama2_13b --tps 5, kept in
tests/data/engine_diff/registry/vllm-0.33.0.json and sglang-0.5.23.json): both refuse with an AssertionError.
At TP 4 (13,824 ÷ 4 = 3,456, 40 ÷ 4 = 10) and TP 8 (1,728; 5) nothing is refused.

Qwen/Qwen2.5-1.5B (tests/data/configs/heldout/wave3/Qwen--Qwen2.5-1.5B.json): 12 heads, 2 KV heads, intermediate_size
8,960 = 2^8 × 35, vocab 151,936 = 64 × 2,374. At TP 6 (12 ÷ 6 = 2 heads; 6 ÷ 2 = 3 copies of each KV head) vLLM builds
the embedding first: VocabParallelEmbedding pads to a multiple of 64 (151,936 already is) and divides by 6 —
25,322.67: "151936 is not divisible by 6" (registry row, vocab_parallel_embedding.py). SGLang pads the vocabulary to
64 × 6 = 384 (152,064) and stops at the MLP: MergedColumnParallelLinear's bare AssertionError (registry row's
traceback: qwen2.py Qwen2MLP → linear.py line 693), 8,960 ÷ 6 = 1,493.3.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.engine_diff.registry_sweep import load_rows
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tp_widths import padded_vocab, undivided_mlp
from tests.data_paths import DATA

LLAMA2_13B = DATA / "configs" / "heldout" / "mlc--llama2_13b.json"
QWEN25_15B = DATA / "configs" / "heldout" / "wave3" / "Qwen--Qwen2.5-1.5B.json"
TP_FLAG = {"vllm": "--tensor-parallel-size", "sglang": "--tp-size"}


def _refusals(engine: str, tp: int, path: Path = LLAMA2_13B) -> list[str]:
    model = model_from_config(json.loads(path.read_text()))
    ledger = predict(model, parse_flags(engine, ["--tp", str(tp)]), gpu_total_bytes=gpu_total_bytes("H200"),
                     gpu_name="H200")  # fmt: skip
    return [refusal.describe() for refusal in launch_refusals(ledger) if refusal.field == TP_FLAG[engine]]


def test_llama2_13b_mlp_width_at_tp5() -> None:
    model = model_from_config(json.loads(LLAMA2_13B.read_text()))
    assert model.intermediate_size == 13_824 and model.mlp_gated
    assert undivided_mlp(model, 5) == (0, 13_824)  # 13,824 % 5 = 4, from the first layer on
    assert undivided_mlp(model, 4) is None and undivided_mlp(model, 8) is None


@pytest.mark.parametrize(("engine", "version"), [("vllm", "0.33.0"), ("sglang", "0.5.23")])
def test_engines_refuse_llama2_13b_at_tp5(engine: str, version: str) -> None:
    (row,) = [r for r in load_rows(engine, version) if r["config"] == LLAMA2_13B.stem and r["tp"] == 5]
    assert row["status"] != "ok" and row["error_type"] == "AssertionError"
    (said,) = _refusals(engine, 5)
    assert "13,824 wide" in said and "MergedColumnParallelLinear" in said
    assert _refusals(engine, 4) == [] and _refusals(engine, 8) == []


@pytest.mark.parametrize(("engine", "version", "said"), [
    ("vllm", "0.33.0", "151936 is not divisible by 6"),
    ("sglang", "0.5.23", "AssertionError"),
])  # fmt: skip
def test_qwen25_15b_at_tp6_vocab_in_vllm_mlp_in_sglang(engine: str, version: str, said: str) -> None:
    (row,) = [r for r in load_rows(engine, version) if r["config"] == QWEN25_15B.stem and r["tp"] == 6]
    assert row["status"] == "refused" and row["message"].endswith(said)
    model = model_from_config(json.loads(QWEN25_15B.read_text()))
    assert (model.vocab_size, padded_vocab(model.vocab_size, 64), model.intermediate_size) == (151_936, 151_936, 8_960)
    (refusal,) = _refusals(engine, 6, QWEN25_15B)
    if engine == "vllm":
        assert "padded to 151,936" in refusal and "'151936 is not divisible by 6'" in refusal
    else:
        assert "8,960 wide" in refusal and "vocabulary" not in refusal
    assert _refusals(engine, 4, QWEN25_15B) == []
