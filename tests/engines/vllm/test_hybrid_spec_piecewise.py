"""A GDN hybrid with prefix caching and an MTP draft under FlashInfer: PIECEWISE graphs alone, so no first FULL capture's
long-context sample (`spec_graph_mode.py`, `hybrid_graph_sample.py`; session 72, helper H4), yet of the hybrid's class,
keyed on captured graphs of any mode (session 72, helper H5: its KV lacks as much as the FULL start's).

Expected values: niushuai1991/qwen3.6-27b's own start lines (Qwen3.6-27B-FP8, fp8_e4m3 KV, prefix caching, 8,192
batched tokens; tests/data/calibration/vllm.jsonl, records `niushuai1991-…`). On the L40S at v0.24.0
(docs/benchmark-mtp_k4_errors.md at 0a0e1f7): MTP k = 4, 10 seqs: 'CUDAGraphMode.FULL_AND_PIECEWISE is not supported
with spec-decode for attention backend FlashInferBackend (support: AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE);
setting cudagraph_mode=PIECEWISE' (compilation.py:1405, v0.24.0's line), 'Profiling CUDA graph memory: PIECEWISE=15
(largest=96)', 'Estimated CUDA graph memory: 0.22 GiB total', 'CUDA graph pool memory: 0.22 GiB (actual)'; MTP k = 5,
5 seqs: the same warning and 'PIECEWISE=10 (largest=56)'. On the RTX PRO 6000 at v0.25.1
(docs/benchmark-flashattn-k4-k5-analysis.md at f45d054): `--attention-backend FLASH_ATTN` with a bf16 KV, 10 seqs:
'PIECEWISE=12, FULL=7' at k = 4 and 'PIECEWISE=16, FULL=8' at k = 5 (FA2's builder takes uniform batches). vLLM's
code: the long-context sample runs on the first FULL capture only (`if mode == CUDAGraphMode.FULL and i == 0`,
gpu_model_runner.py:6522 at v0.24.0, :6573 at v0.25.1).
"""

from __future__ import annotations

import json

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm.hybrid_graph_sample import full_capture_sample, hybrid_sampled, sample_features
from kvtop.domain.engines.vllm.profile_run import graph_counts
from kvtop.domain.engines.vllm.spec_graph_mode import spec_graph_mode
from kvtop.domain.wording import GIB

RECORDS = {record.id: record for record in load("vllm")}
L40S_K5 = RECORDS["niushuai1991-qwen3.6-27b-fp8-l40s-v0240-mtp5-seqs5-fp8kv-pc"].inputs()
RTX_K3 = RECORDS["niushuai1991-qwen3.6-27b-fp8-rtxpro6000-v0251-mtp3-fp8kv-pc"].inputs()
L40S_NO_MTP = RECORDS["file55060224897-qwen3.6-27b-fp8-l40s-v0240-prefix-no-mtp"].inputs()
PRINTED_K4 = 0.22  # GiB, 'Estimated CUDA graph memory: 0.22 GiB total' (two decimals)


def _launch(inputs: CalibrationInputs, k: int, seqs: int, flash_attn: bool = False) -> CalibrationInputs:
    """`inputs` with MTP k and `seqs` max_num_seqs; with `flash_attn` the study's FLASH_ATTN arm (bf16 KV)."""
    flags = {**inputs.settings.flags, "max-num-seqs": str(seqs),
             "speculative-config": json.dumps({"method": "mtp", "num_speculative_tokens": k})}  # fmt: skip
    kv = inputs.settings.kv_cache_dtype
    if flash_attn:
        flags.pop("kv-cache-dtype", None)
        flags["attention-backend"], kv = "FLASH_ATTN", "auto"
    update = {"flags": flags, "kv_cache_dtype": kv, "max_running_requests": seqs}
    settings = inputs.settings.model_copy(update=update)
    return inputs.model_copy(update={"settings": settings})


def test_flashinfer_lowers_the_hybrids_mtp_starts_as_their_logs_say() -> None:
    l40s_k4 = _launch(L40S_K5, k=4, seqs=10)
    for inputs, counts in ((L40S_K5, (10, 0)), (l40s_k4, (15, 0)), (RTX_K3, (13, 0))):
        mode = spec_graph_mode(inputs, "FULL_AND_PIECEWISE")
        assert (mode.mode, mode.lowered) == ("PIECEWISE", True)
        assert graph_counts(inputs) == counts  # the L40S logs: PIECEWISE=10 at k = 5, PIECEWISE=15 at k = 4
    assert "FLASHINFER runs on sm89" in spec_graph_mode(L40S_K5, "FULL_AND_PIECEWISE").words
    assert "FLASHINFER runs on sm120" in spec_graph_mode(RTX_K3, "FULL_AND_PIECEWISE").words


def test_flash_attn_keeps_the_full_decode_graphs() -> None:
    for k, counts in ((4, (12, 7)), (5, (16, 8))):
        inputs = _launch(RTX_K3, k=k, seqs=10, flash_attn=True)
        assert not spec_graph_mode(inputs, "FULL_AND_PIECEWISE").lowered
        assert graph_counts(inputs) == counts
        # FULL graphs with prefix caching: of the hybrid sample's class
        assert sample_features(inputs) == (1.0,)


def test_the_piecewise_graph_term_is_the_printed_estimate() -> None:
    """kvtop's graph term for the k = 4 launch: the 0.22 GiB its log estimated (and its pool measured) plus the class's
    calibrated centre, the mean of its ten rows by hand, (2.30 + 1.97 + 1.87 + 0.34 + 1.76 + 1.74 + 1.92 + 1.94 + 1.84 +
    1.85) ÷ 10 = 1.753 GiB (test_hybrid_graph_sample.py's rows, the DFlash two after FX1's refit 5f9ab079): the ~1.9 GiB the family's MTP starts lack against the
    plan is not in vLLM's CUDA-graph estimate, the term carries it all the same (session 72, H5)."""
    term = next(t for t in vllm.terms(_launch(L40S_K5, k=4, seqs=10)) if t.term == Term.CUDA_GRAPHS)
    assert abs(term.bytes / GIB - (PRINTED_K4 + 17.53 / 10)) < 0.02


def test_no_full_capture_no_long_context_sample() -> None:
    """The same L40S launch without a draft captures FULL decode graphs (1, 2, 4, 8 ≤ 10 seqs) and samples its first,
    8 requests at min(32,768, 8,192 // 8) = 1,024 tokens each; with the draft it captures none, so nothing is sampled,
    and the launch is of the hybrid's class all the same: it captures PIECEWISE graphs (session 72, H5). --enforce-eager
    captures none and leaves the class."""
    assert full_capture_sample(L40S_NO_MTP) == (8, 1_024)
    assert sample_features(L40S_NO_MTP) == (1.0,)
    for inputs in (L40S_K5, RTX_K3):
        assert full_capture_sample(inputs) is None
        assert sample_features(inputs) == (1.0,)
        eager = inputs.model_copy(update={"settings": inputs.settings.model_copy(update={"enforce_eager": True})})
        assert not hybrid_sampled(eager) and sample_features(eager) is None
