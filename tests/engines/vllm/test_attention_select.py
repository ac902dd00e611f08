"""The backend vLLM's selector runs a model without MLA on (`attention_select.py`, docs/engines/vllm.md §12), where
review R5 (session 71) found it wrong: Gemma-4's override, fp8_e5m2 on Hopper at v0.20-v0.21, FlashInfer's head
sizes before v0.22.0, its floor by release.

Expected values from vLLM's code in its wheels: Gemma4Config.verify_and_update_config (models/config.py:58-107 at
v0.20.0, the same at v0.23.0: TRITON_ATTN where head_dim 256 != global_head_dim 512 and 512 > 256; :57-105 at
v0.24.0, :209-256 at v0.30.0: FA4 where it runs, sm9x-sm11x by flash_attn_interface.py:84, else TRITON_ATTN), flash_attn.py supports_kv_cache_dtype (:188-193 at v0.20.0: any quantized KV where FA3 runs
on sm90; :183-193 at v0.22.0: fp8/fp8_e4m3 only), flashinfer.py get_supported_head_sizes ([64, 128, 256] at
v0.20.0:402, 512 added at v0.22.0:405), supports_compute_capability (sm75 at v0.23.0, sm80 from v0.24.0).
The Gemma-4 31B config (RedHatAI--gemma-4-31B-it-FP8-block, tests/data/calibration/configs): 50 sliding layers of
head 256, 10 full-attention layers of head 512 (global_head_dim).
"""

from __future__ import annotations

import json

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.attention_select import selected_backend
from kvtop.domain.engines.vllm.profile_run import graph_counts
from kvtop.domain.engines.vllm.spec_graph_mode import spec_graph_mode

RECORDS = {record.id: record for record in load("vllm")}
GEMMA4 = RECORDS["msamuelson-gemma-4-31b-fp8-block-3090x2-tp2-len8192-u95-v0210"].inputs()
QWEN3 = RECORDS["aarush-inference-benchmark-qwen3-8b-l4-v0300-cold"].inputs()
NGRAM = json.dumps({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 3})


def _launch(base: CalibrationInputs, gpu: str, release: str, kv: str = "auto", **flags: str) -> CalibrationInputs:
    stated = {**base.settings.flags, **{key.replace("_", "-"): value for key, value in flags.items()}}
    return base.model_copy(update={
        "gpu_name": gpu, "version": ResolvedVersion(text=release),
        "settings": base.settings.model_copy(update={"kv_cache_dtype": kv, "flags": stated}),
    })  # fmt: skip


def _on(base: CalibrationInputs, gpu: str, release: str, kv: str = "auto") -> str | None:
    pick = selected_backend(_launch(base, gpu, release, kv))
    return pick.backend if pick else None


def test_gemma4_runs_triton_where_vllm_forces_it() -> None:
    """R5's repro: gemma-4-31B on an L40S at v0.24.0 with an fp8 KV and n-gram k = 3. vLLM forces TRITON_ATTN (no FA4
    on sm89), whose support is ALWAYS: the 49 PIECEWISE and 49 FULL graphs kept; kvtop read FLASHINFER on head 256 and
    lowered to 51 PIECEWISE + 0 FULL."""
    launch = _launch(GEMMA4, "L40S", "0.24.0", "fp8", speculative_config=NGRAM)
    pick = selected_backend(launch)
    assert pick is not None and pick.backend == "TRITON_ATTN" and "no FA4 on sm89" in pick.why
    assert not spec_graph_mode(launch, "FULL_AND_PIECEWISE").lowered
    assert graph_counts(launch) == (49, 49)
    assert _on(GEMMA4, "RTX3090", "0.21.0") == "TRITON_ATTN"  # v0.20-v0.23: the larger head 512 > 256
    assert _on(GEMMA4, "L40S", "0.23.0", "fp8") == "TRITON_ATTN"
    assert _on(GEMMA4, "H100", "0.23.0", "fp8") == "TRITON_ATTN"  # before v0.24.0 no FA4 branch
    assert _on(GEMMA4, "RTX5090", "0.30.0", "fp8") == "TRITON_ATTN"  # no FA4 on sm12x


def test_gemma4_is_not_modelled_where_fa4_runs_or_unread() -> None:
    """FA4 forced on sm9x/sm10x from v0.24.0 (v0.33.0 sm90 + fp8 KV: FA3/FA4 per layer): None, and the graph term
    says so instead of keeping FULL silently."""
    assert _on(GEMMA4, "H100", "0.24.0", "fp8") is None
    assert _on(GEMMA4, "B200", "0.30.0") is None
    launch = _launch(GEMMA4, "H100", "0.24.0", "fp8", speculative_config=NGRAM)
    assert "not modelled" in spec_graph_mode(launch, "FULL_AND_PIECEWISE").words


def test_other_mixed_head_sizes_are_not_modelled() -> None:
    """A model whose layers' head sizes differ without Gemma-4's override: vLLM picks per layer, not modelled."""
    model = GEMMA4.model
    assert model is not None
    other = GEMMA4.model_copy(update={"model": model.model_copy(update={"architecture": "OtherForCausalLM"})})
    assert _on(other, "L40S", "0.24.0", "fp8") is None
    assert _on(GEMMA4, "L40S", "0.24.0", "fp8") == "TRITON_ATTN"


def test_fa3_takes_fp8_e5m2_before_v0_22() -> None:
    """flash_attn_supports_fp8 at v0.20.0/v0.21.0 takes any quantized KV on sm90; from v0.22.0 fp8/fp8_e4m3 only."""
    assert _on(QWEN3, "H100", "0.20.0", "fp8_e5m2") == "FLASH_ATTN"
    assert _on(QWEN3, "H100", "0.21.0", "fp8_e5m2") == "FLASH_ATTN"
    assert _on(QWEN3, "H100", "0.22.0", "fp8_e5m2") == "FLASHINFER"
    launch = _launch(QWEN3, "H100", "0.20.0", "fp8_e5m2", speculative_config=NGRAM)
    assert not spec_graph_mode(launch, "FULL_AND_PIECEWISE").lowered  # FA3 ALWAYS: FULL kept


def test_the_pick_cites_the_kv_rule_of_its_release() -> None:
    at24 = selected_backend(_launch(QWEN3, "L40S", "0.24.0", "fp8"))
    at30 = selected_backend(_launch(QWEN3, "L40S", "0.30.0", "fp8"))
    assert at24 is not None and "flash_attn.py supports_kv_cache_dtype" in at24.why and "fa_utils" not in at24.why
    assert at30 is not None and "flash_attn_supports_kv_cache_dtype" in at30.why
    # fa_utils.py's rule first read at v0.27.1 (:296); v0.27.0 not read, so it keeps v0.22.0's words (final reader 1)
    at27 = selected_backend(_launch(QWEN3, "L40S", "0.27.0", "fp8"))
    assert at27 is not None and "fa_utils" not in at27.why


def test_head_size_512() -> None:
    """FlashInfer takes 512 from v0.22.0; FLASH_ATTN (FA2/FA3) up to 256, FA4 above it not modelled."""
    model = QWEN3.model
    assert model is not None
    wide = QWEN3.model_copy(update={"model": model.model_copy(update={"head_dim": 512, "v_head_dim": 512})})
    assert _on(wide, "L40S", "0.21.0", "fp8") is None  # FlashInfer [64, 128, 256] at v0.21.0
    assert _on(wide, "L40S", "0.22.0", "fp8") == "FLASHINFER"
    assert _on(wide, "L40S", "0.22.0") is None  # FLASH_ATTN first, 512 > 256: FA4's, not modelled
    assert _on(wide, "H100", "0.24.0", "fp8") is None


def test_flashinfer_floor_by_release() -> None:
    """A T4 (sm75): FLASHINFER at v0.23.0 (single-token before v0.33.0: lowered), TRITON_ATTN (ALWAYS: FULL kept)
    from v0.24.0."""
    lowered = _launch(QWEN3, "T4", "0.23.0", speculative_config=NGRAM)
    kept = _launch(QWEN3, "T4", "0.24.0", speculative_config=NGRAM)
    assert _on(QWEN3, "T4", "0.23.0") == "FLASHINFER" and _on(QWEN3, "T4", "0.24.0") == "TRITON_ATTN"
    assert spec_graph_mode(lowered, "FULL_AND_PIECEWISE").mode == "PIECEWISE"
    assert spec_graph_mode(kept, "FULL_AND_PIECEWISE").mode == "FULL_AND_PIECEWISE"
