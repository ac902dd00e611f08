"""The CUDA-graph mode vLLM lowers to under speculative decoding (`spec_graph_mode.py`, docs/engines/vllm.md §2.4).

Expected values: EmanueleMeazzo's two MTP starts of Qwen3.8-27B on one DGX Spark (GB10, sm121) at the NGC 26.07
build of vLLM 0.24.0 with an fp8 KV (tests/data/calibration/vllm.jsonl; SOURCES.md), whose log prints
'CUDAGraphMode.FULL_AND_PIECEWISE is not supported with spec-decode ... setting cudagraph_mode=PIECEWISE' and
'Estimated CUDA graph memory: 0.12 GiB total' (BF16 checkpoint) and '0.07 GiB total' (FP8). The graph count from
vLLM's code: max_num_seqs 16, q = 1 + 3 tokens, the largest default size min(16 × 4 × 2, 512) = 128
(config/vllm.py `_set_cudagraph_sizes`), the sizes 1, 2, 4 and every 8 up to 128, unrounded where no FULL decode graph
is kept (the rounding follows the check, config/compilation.py:1390-1419 at v0.24.0); before, kvtop rounded them to
multiples of 4 (17 sizes) and kept 9 FULL decode graphs (4 to 64). The backend by release from vLLM's wheels
(flashinfer.py `get_cudagraph_support` at v0.24.0, v0.27.1, v0.28.0, v0.30.0, v0.33.0).
"""

from __future__ import annotations

import json

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm.profile_run import graph_counts
from kvtop.domain.engines.vllm.spec_graph_mode import spec_graph_mode
from kvtop.domain.wording import GIB
from tests.conftest import CONFIGS

RECORDS = {record.id: record for record in load("vllm")}
BF16 = RECORDS["emeazzo-qwen3.8-27b-gb10-ngc2607-v0240dev-bf16-mtp3"].inputs()
FP8 = RECORDS["emeazzo-qwen3.8-27b-fp8-gb10-ngc2607-v0240dev-u085-mtp3"].inputs()
PRINTED = {"bf16": 0.12 * GIB, "fp8": 0.07 * GIB}  # 'Estimated CUDA graph memory: … GiB total'
SIZES = [1, 2, 4, *range(8, 129, 8)]  # vLLM's default sizes up to 128
ROUNDED_BEFORE = sorted({-(-size // 4) * 4 for size in SIZES})  # kvtop's count before: rounded to multiples of 4


def _at(gpu: str, release: str, kv: str = "fp8", spec: int | None = 3, flags: dict[str, str] | None = None) -> str:
    """The mode the emeazzo BF16 launch's graphs run in on `gpu` at `release` with `kv`."""
    stated = {**BF16.settings.flags, **(flags or {})}
    if spec is None:
        stated.pop("speculative-config", None)
    else:
        stated["speculative-config"] = json.dumps({"method": "mtp", "num_speculative_tokens": spec})
    inputs = BF16.model_copy(update={
        "gpu_name": gpu, "version": ResolvedVersion(text=release),
        "settings": BF16.settings.model_copy(update={"kv_cache_dtype": kv, "flags": stated}),
    })  # fmt: skip
    return spec_graph_mode(inputs, "FULL_AND_PIECEWISE").mode


def _graph_bytes(inputs: CalibrationInputs) -> int:
    return next(term.bytes for term in vllm.terms(inputs) if term.term == Term.CUDA_GRAPHS)


def test_the_meazzo_starts_capture_piecewise_graphs_alone() -> None:
    for inputs in (BF16, FP8):
        assert spec_graph_mode(inputs, "FULL_AND_PIECEWISE").lowered
        assert graph_counts(inputs) == (len(SIZES), 0) == (19, 0)


def test_the_graph_term_moves_toward_the_printed_estimates() -> None:
    coefficient = vllm.FITS["vllm.cuda_graphs"].coefficients[0] * GIB
    layers = BF16.model.num_layers if BF16.model else 0
    before = coefficient * (len(ROUNDED_BEFORE) - 1 + 9 - 1 + 1) * layers / 1000  # 17 PIECEWISE + 9 FULL
    for inputs, printed in ((BF16, PRINTED["bf16"]), (FP8, PRINTED["fp8"])):
        after = _graph_bytes(inputs)
        assert abs(after - printed) < abs(before - printed) - 0.08 * GIB  # 0.38 GiB → 0.29 against 0.12 and 0.07


def test_flashinfer_lowers_by_release_and_gpu() -> None:
    assert _at("GB10", "0.27.1") == "PIECEWISE"  # TRT-LLM attention on sm10x alone
    assert _at("GB10", "0.28.0") == "FULL_AND_PIECEWISE"  # sm12x's XQA decode from v0.28.0
    assert _at("B200", "0.24.0") == "FULL_AND_PIECEWISE"  # FLASHINFER first on sm100, TRT-LLM's uniform batch
    assert _at("RTX4090", "0.30.0") == "PIECEWISE"  # FA2 declines the fp8 KV on sm89, FlashInfer single-token
    assert _at("RTX4090", "0.33.0") == "FULL_AND_PIECEWISE"  # FlashInfer's FA2 native decode below sm90
    assert _at("H100", "0.29.0", kv="fp8_e5m2") == "PIECEWISE"  # sm90 single-token decode at v0.25.0-v0.29.x
    assert _at("H100", "0.30.0", kv="fp8_e5m2") == "FULL_AND_PIECEWISE"  # XQA takes head size 256 from v0.30.0


def test_nothing_is_lowered_without_the_rule() -> None:
    assert _at("GB10", "0.24.0", kv="auto") == "FULL_AND_PIECEWISE"  # FLASH_ATTN (FA2): uniform batches
    assert _at("GB10", "0.24.0", spec=None) == "FULL_AND_PIECEWISE"  # no speculative decoding: q = 1
    assert _at("GB10", "0.19.0") == "FULL_AND_PIECEWISE"  # graphs not charged: not read
    assert _at("GB10", "0.24.0", flags={"attention-backend": "TRITON_ATTN"}) == "FULL_AND_PIECEWISE"  # ALWAYS
    assert spec_graph_mode(BF16, "PIECEWISE").mode == "PIECEWISE" and not spec_graph_mode(BF16, "PIECEWISE").lowered


def test_what_the_rule_does_not_read_is_said() -> None:
    """Decode context parallel 2 (FlashInfer single-token under DCP from v0.30.0) and an MTP method without
    num_speculative_tokens (vLLM fills it from n_predict): the mode kept, the not-modelled words on the term."""
    dcp = BF16.model_copy(update={"settings": BF16.settings.model_copy(update={"dcp": 2})})
    assert "not modelled" in spec_graph_mode(dcp, "FULL_AND_PIECEWISE").words
    flags = {**BF16.settings.flags, "speculative-config": json.dumps({"method": "mtp"})}
    mtp = BF16.model_copy(update={"settings": BF16.settings.model_copy(update={"flags": flags})})
    assert "not modelled" in spec_graph_mode(mtp, "FULL_AND_PIECEWISE").words
    assert not spec_graph_mode(mtp, "FULL_AND_PIECEWISE").lowered


def test_lightning_attention_is_single_token_through_v0_28() -> None:
    """A lightning-attention model planned with MTP k = 3 on an H100 (MiniCPM-SALA's config, its lightning layers read
    as StateKind.LIGHTNING; no MLA, so the pick is read): vLLM's linear_attn.py:50 at v0.20.0 declares
    UNIFORM_SINGLE_TOKEN_DECODE, so FULL_AND_PIECEWISE is lowered to PIECEWISE at v0.28.0; at v0.29.0 (:125) the
    support is conditional, which kvtop does not read: the mode kept, 'not modelled' said (final reader 1, session
    71: the test once asserted LIGHTNING_SINGLE's own values)."""
    from kvtop.sources.hub import load_model

    model = load_model(str(CONFIGS / "recon" / "recon--openbmb--MiniCPM-SALA.json"))
    flags = {**BF16.settings.flags, "speculative-config": json.dumps({"method": "mtp", "num_speculative_tokens": 3})}
    launch = BF16.model_copy(update={"model": model, "gpu_name": "H100",
                                     "settings": BF16.settings.model_copy(update={"kv_cache_dtype": "auto", "flags": flags})})  # fmt: skip
    at28 = spec_graph_mode(launch.model_copy(update={"version": ResolvedVersion(text="0.28.0")}), "FULL_AND_PIECEWISE")
    at29 = spec_graph_mode(launch.model_copy(update={"version": ResolvedVersion(text="0.29.0")}), "FULL_AND_PIECEWISE")
    assert (at28.mode, at28.lowered) == ("PIECEWISE", True) and "lightning attention's builder" in at28.words
    assert (at29.mode, at29.lowered) == ("FULL_AND_PIECEWISE", False) and "not modelled" in at29.words
