"""Which classes SGLang splits a sliding-window pool for, by release (hybrid_swa.py HYBRID_SWA_ARCHS_ERAS).

Read in the wheels: 0.4.9.post3 … 0.5.6.post2 model_runner.py splits one only where the model defines
get_attention_sliding_window_size (gemma3n_causal.py does), but server_args.py turns it off for Gemma-2/3/3n's classes
0.5.0rc0 … 0.5.14 ('Disable hybrid SWA memory for {model_arch} as it is not yet supported.'); 0.5.7's is_hybrid_model
names MiMo-V2-Flash alone and 0.5.8 … 0.5.23's is_hybrid_swa_model never names Gemma-3n. So from 0.5.0rc0 its 35
layers (7 full, 28 sliding, 2 KV heads × 256, bf16 K and V) stay in one full pool: 35 × 2 × 256 × 2 × 2 = 71,680 B a
token; only 0.4.9.post3 … 0.4.10.post2 split it.

Expected tokens by SGLang's own arithmetic (0.5.12 model_runner_kv_cache_mixin.py profile_max_num_token: rest =
post-load free − pre-load free × (1 − mem_fraction_static), in GiB; pool_configurator.py max_total_num_tokens =
int(rest × 2³⁰) // cell_size), from the free memory given: never kvtop's own figures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.sglang.hybrid_swa import unlisted_reason
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB

CONFIG = Path(__file__).resolve().parents[2] / "data" / "engine_diff" / "registry" / "configs" / "Gemma3nForCausalLM.json"
FULL_CELL = 35 * 2 * 256 * 2 * 2  # every layer in the one full pool
FREE_BEFORE, FREE_AFTER, FRACTION = 78, 65, 0.83  # GiB, as SGLang logs them


def _model() -> ModelSpec:
    return model_from_config(json.loads(CONFIG.read_text()), source="Gemma3nForCausalLM")


def _tokens(version: str) -> int:
    settings = parse_flags("sglang", ["--engine-version", version, "--mem-fraction-static", str(FRACTION),
                                      "--context-length", "8192"])  # fmt: skip
    measured = MeasuredInputs(free_before_load_bytes=FREE_BEFORE * GIB, free_after_load_bytes=FREE_AFTER * GIB)
    ledger = predict(_model(), settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=measured)
    return ledger.ranks[0].token_capacity


@pytest.mark.parametrize("version", ["0.5.0rc0", "0.5.6", "0.5.7", "0.5.8", "0.5.12", "0.5.15", "0.5.18", "0.5.22"])
def test_gemma3n_keeps_one_full_pool_from_0_5_0rc0(version: str) -> None:
    rest = int((FREE_AFTER - FREE_BEFORE * (1 - FRACTION)) * (1 << 30))
    assert _tokens(version) == rest // FULL_CELL == 775_047


@pytest.mark.parametrize("version", ["0.4.9.post3", "0.4.10.post2"])
def test_gemma3n_split_before_server_args_turned_it_off(version: str) -> None:
    """0.4.10.post2's split (model_runner.py init_memory_pool): total = max_total_num_tokens × 35 layers over
    0.8 × 28 sliding + 7 full, the full pool int(775,047 × 35 / 29.4) = 922,674 — kvtop's full + 0.8 × SWA cell
    gives one more (the engine's float quotient lands a hair under the whole number)."""
    assert _tokens(version) - int(775_047 * 35 / (0.8 * 28 + 7)) in (0, 1)


@pytest.mark.parametrize(
    ("version", "architecture", "splits"),
    [
        ("0.4.9", "Gemma3nForCausalLM", False),  # no window switch before 0.4.9.post3
        ("0.4.9.post3", "Gemma3nForCausalLM", True),
        ("0.5.4", "Olmo2ForCausalLM", False),  # olmo2.py's method from 0.5.4, server_args.py's switch-off too
        ("0.5.6", "Cohere2ForCausalLM", False),  # no window method
        ("0.5.7", "GptOssForCausalLM", False),  # is_hybrid_model: MiMo-V2-Flash only
        ("0.5.7", "MiMoV2FlashForCausalLM", True),
        ("0.5.8", "GptOssForCausalLM", True),
        ("0.5.10", "Gemma4ForCausalLM", False),
        ("0.5.11", "Gemma4ForCausalLM", True),
        ("0.5.11", "MiMoV2ForCausalLM", True),  # MIMO_V2_MODEL_ARCHS
        ("0.5.18", "GraniteSWAForCausalLM", False),
        ("0.5.19", "GraniteSWAForCausalLM", True),  # SWA_SINK_ARCHS
        ("0.5.20", "IQuestQ1ForCausalLM", False),
        ("0.5.21", "IQuestQ1ForCausalLM", True),
        ("0.5.22", "BeamForCausalLM", False),
        ("0.5.23", "BeamForCausalLM", True),
    ],
)
def test_the_class_lists_by_release(version: str, architecture: str, splits: bool) -> None:
    model = _model().model_copy(update={"architecture": architecture})
    assert (unlisted_reason(model, ResolvedVersion(text=version)) is None) is splits


@pytest.mark.parametrize(("version", "splits"), [("0.5.12", False), ("0.5.13", True)])
def test_the_config_opts_in_from_0_5_13(version: str, splits: bool) -> None:
    """`getattr(hf_text_config, "is_hybrid_swa", False)` joins is_hybrid_swa_model at 0.5.13 (absent at 0.5.12.post1)."""
    model = _model().model_copy(update={"architecture": "SparkForCausalLM", "hybrid_swa_stated": True})
    assert (unlisted_reason(model, ResolvedVersion(text=version)) is None) is splits


def test_the_reason_names_the_models_own_class() -> None:
    """server_args.py logs 'Disable hybrid SWA memory for {model_arch} …': the reason names the launch's class, not
    'Gemma 2/3/3n' (0.4.10.post2 turns it off for Gemma2ForCausalLM alone: final reader 2, LOW 10)."""
    from kvtop.domain.engines.sglang.eras import full_pool_reason

    settings = parse_flags("sglang", [])
    reason = full_pool_reason(_model(), settings, "H100", ResolvedVersion(text="0.5.0rc0"))
    assert reason == "SGLang 0.5.0rc0 turns hybrid SWA memory off for Gemma3nForCausalLM (server_args.py)"
    assert full_pool_reason(_model(), settings, "H100", ResolvedVersion(text="0.4.10.post2")) is None
