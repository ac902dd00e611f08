"""FlashInfer's all-reduce + RMSNorm fusion workspace on Blackwell at vLLM 0.25.0-0.26.x (fusion_blackwell.py).

Expected figures from the engines' code, by hand: vLLM 0.26.0's max sizes (allreduce_rms_fusion.py:104-122, capability
10.0: 64 / 32 / 1 / 64 MiB at TP 2 / 4 / 8 / 16), its backend choice (flashinfer_all_reduce.py `_resolve_fi_ar_backend`:
mnnvl, trtllm as the one-node fallback), flashinfer 0.6.14's mnnvl sizes (trtllm_mnnvl_ar.py: three Lamport copies of
max(one-shot, two-shot), one allocation through torch symmetric memory) and trtllm's three buffers (trtllm_ar.py), each
allocation with its 2,048 B signal pad rounded to 2 MiB.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm import fusion_workspace as fw

MIB = 1 << 20
RECORDS = {record.id: record for record in load("vllm")}
GB200 = "case-vllm-glm52-nvfp4-gb200-tp4"  # vLLM 0.26.0, TP 4, GLM-5.2-NVFP4 (its config not at hand)
LLAMA_70B_TP2 = "llmd-v019-llama-3.3-70b-fp8dyn-tp2"  # hidden 8,192, bf16 activations


def _inputs(record_id: str, **update: object):  # type: ignore[no-untyped-def]
    return RECORDS[record_id].inputs().model_copy(update=update)


def test_the_gb200_start_holds_mnnvl_s_workspace_and_keeps_trtllm_s_in_the_interval() -> None:
    """TP 4 on capability 10.0: 32 MiB of payload. mnnvl: two-shot 2 × 32 MiB = 64 MiB (one-shot ≤ 1 MiB), three
    copies 192 MiB + 2,048 B → 194 MiB. trtllm: one-shot 4 × 32 = 128 MiB → 130, flags 4 × 256 × 4 B → 2, Lamport
    3 × 128 = 384 MiB → 386: 518 MiB."""
    found = fw.fusion_workspace(_inputs(GB200), 8192)
    assert found is not None and found.modelled
    assert (found.bytes, found.other_bytes) == (194 * MIB, 518 * MIB)


def test_a_known_model_s_tokens_size_it() -> None:
    """Llama-3.3-70B at TP 2 on B200 (10.0: 64 MiB): 64 MiB ÷ (8,192 × 2 B) = 4,096 tokens. mnnvl: two-shot
    2 × 2,048 × 2 × 8,192 × 2 B = 128 MiB, one-shot (1 MiB ÷ (2 × 2 × 8,192) = 32 tokens) 1 MiB: 3 × 128 = 384 MiB →
    386. trtllm: 2 × 4,096 × 8,192 × 2 B = 128 MiB → 130, flags → 2, Lamport 384 → 386: 518 MiB."""
    found = fw.fusion_workspace(_inputs(LLAMA_70B_TP2, gpu_name="B200", version=ResolvedVersion(text="0.26.0")), 8192)
    assert found is not None and (found.bytes, found.other_bytes) == (386 * MIB, 518 * MIB)


def test_releases_whose_blackwell_allocation_is_not_read_say_so() -> None:
    for version in ("0.18.0", "0.27.0", "0.29.0"):  # 0.18.0's backend not read; McastGPUBuffer from flashinfer 0.6.16
        found = fw.fusion_workspace(_inputs(GB200, version=ResolvedVersion(text=version)), 8192)
        assert found is not None and not found.modelled and found.bytes == 0


def test_the_fit_takes_the_workspace_off_and_the_interval_widens_by_the_fallback() -> None:
    inputs = _inputs(GB200)
    assert vllm.fit_offset(vllm.non_torch_key(inputs), inputs) == 194 * MIB
    found = next(t for t in vllm.terms(inputs) if t.term is Term.NON_TORCH)
    assert found.error_bytes >= (518 - 194) * MIB and "trtllm" in found.basis
