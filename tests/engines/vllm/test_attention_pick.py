"""The attention backend vLLM runs a model without MLA on (`attention_pick.py`) and FlashInfer's workspace inside V2's
measured CUDA-graph estimate (docs/engines/vllm.md §12).

Expected values: the aarush-github/Inference_benchmark starts on one L4 at vLLM 0.30.0 (tests/data/calibration/
vllm.jsonl; SOURCES.md, session 58): the FP8-KV start printed 'Using FLASHINFER attention backend out of potential
backends: ['FLASHINFER', 'TRITON_ATTN']' and an estimate of 0.88 GiB where the BF16 starts ran FLASH_ATTN (FA2) and
printed 0.43 GiB; the workspace from vLLM's code (flashinfer.py `_get_workspace_buffer`: the larger of envs.py's
394 MiB and max_num_batched_tokens × query heads × head size × 16 B).
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm.attention_pick import attention_pick, flashinfer_workspace
from kvtop.domain.wording import GIB, MIB

RECORDS = {record.id: record for record in load("vllm")}
FP8_KV = RECORDS["aarush-inference-benchmark-qwen3-8b-fp8kv-l4-v0300-cold"].inputs()
BF16_KV = RECORDS["aarush-inference-benchmark-qwen3-8b-l4-v0300-cold"].inputs()


def _on(gpu: str, kv: str = "auto", release: str = "0.30.0") -> str | None:
    inputs = BF16_KV.model_copy(update={
        "gpu_name": gpu, "version": ResolvedVersion(text=release),
        "settings": BF16_KV.settings.model_copy(update={"kv_cache_dtype": kv}),
    })  # fmt: skip
    pick = attention_pick(inputs)
    return pick.backend if pick else None


def test_the_pick_is_the_one_the_starts_logged() -> None:
    fp8, bf16 = attention_pick(FP8_KV), attention_pick(BF16_KV)
    assert fp8 is not None and fp8.backend == "FLASHINFER" and "sm89" in fp8.why
    assert bf16 is not None and bf16.backend == "FLASH_ATTN"


def test_the_pick_follows_the_selector_by_gpu_and_kv_dtype() -> None:
    """FA3 takes FP8 KV on Hopper but not fp8_e5m2; FLASHINFER comes first on sm10x; FA2 declines FP8 KV on sm80/sm12x;
    below sm80 neither FLASH_ATTN nor FLASHINFER (its floor raised to sm80) runs; before v0.29.0 not read."""
    assert _on("H100", "fp8") == "FLASH_ATTN"
    assert _on("H100", "fp8_e5m2") == "FLASHINFER"
    assert _on("B200") == "FLASHINFER"
    assert _on("A100-80GB", "fp8") == "FLASHINFER" and _on("A100-80GB") == "FLASH_ATTN"
    assert _on("RTX5090", "fp8") == "FLASHINFER" and _on("RTX5090") == "FLASH_ATTN"
    assert _on("T4") == "TRITON_ATTN"
    assert _on("L4", "fp8", release="0.28.0") is None


def test_the_workspace_is_the_default_at_2048_tokens() -> None:
    """2,048 tokens × 32 heads × 128 × 16 B = 128 MiB, under the 394 MiB default; none where FLASH_ATTN runs."""
    found = flashinfer_workspace(FP8_KV)
    assert found is not None and found[0] == 394 * MIB
    assert flashinfer_workspace(BF16_KV) is None


def test_v2s_estimate_holds_the_workspace_where_flashinfer_runs() -> None:
    """The same launch but the KV dtype: the FP8-KV start's graph term is the BF16 start's and the workspace, inside
    the 0.45 GiB the two logged estimates differ by (0.88 − 0.43)."""
    fp8 = {term.term: term for term in vllm.terms(FP8_KV)}[Term.CUDA_GRAPHS]
    bf16 = {term.term: term for term in vllm.terms(BF16_KV)}[Term.CUDA_GRAPHS]
    assert fp8.bytes - bf16.bytes == 394 * MIB < (0.88 - 0.43) * GIB
    assert "FlashInfer's workspace" in fp8.basis and "FlashInfer" not in bf16.basis
