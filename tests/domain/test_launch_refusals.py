"""Launches an engine sizes but refuses at start (kvtop.domain.refusals): the planner and `kvtop plan` must
never call them valid. Positions come from the real configs; the refusals from the engines' own checks
(docs/engines/sglang.md §4.6, vllm.md §3.7)."""

from __future__ import annotations

import pytest

from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

LLAMA_31 = CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"  # max_position_embeddings 131,072
H100 = 81559 << 20


def refusals(engine: str, flags: list[str], gpu: str | None = "H100", config=LLAMA_31):
    ledger = predict(load_model(str(config)), parse_flags(engine, flags), gpu_total_bytes=H100, gpu_name=gpu)
    return launch_refusals(ledger)


@pytest.mark.parametrize(
    ("engine", "flag", "override"),
    [("sglang", "--context-length", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"),
     ("vllm", "--max-model-len", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")],
)  # fmt: skip
def test_a_context_above_the_models_positions_is_refused_with_the_override(engine, flag, override) -> None:
    (refused,) = refusals(engine, [flag, "262144"])
    assert refused.field == flag and refused.override == override
    assert f"{flag} 262,144 above the model's 131,072 positions" in refused.message
    assert refusals(engine, [flag, "131072"]) == ()  # at the positions: accepted


def test_fp8_ds_mla_needs_mla_and_nvfp4_needs_blackwell_under_vllm() -> None:
    (ds_mla,) = refusals("vllm", ["--kv-cache-dtype", "fp8_ds_mla"])
    assert ds_mla.field == "--kv-cache-dtype" and "no attention backend for fp8_ds_mla" in ds_mla.message
    (nvfp4,) = refusals("vllm", ["--kv-cache-dtype", "nvfp4"], gpu="H100")
    assert "nvfp4 KV on H100 (sm90)" in nvfp4.message
    assert refusals("vllm", ["--kv-cache-dtype", "nvfp4"], gpu="B200") == ()
    assert refusals("vllm", ["--kv-cache-dtype", "nvfp4"], gpu=None) == ()  # an unnamed GPU: not checked
    assert refusals("vllm", ["--kv-cache-dtype", "fp8_e4m3"]) == ()


def test_engines_with_no_refusal_modelled_refuse_nothing() -> None:
    assert refusals("lmdeploy", ["--session-len", "262144"]) == ()
    assert refusals("trtllm", ["--max_seq_len", "262144"]) == ()
