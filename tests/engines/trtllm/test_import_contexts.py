"""TensorRT-LLM 1.3.0rc20's CUDA contexts made at `import tensorrt_llm` on the first GPU (import_contexts.py, §28).

Expected values: NVIDIA/TensorRT-LLM PR #15985 (nvbug 6419139: the context measured at 550 MiB on H100 and about
700 MB on GB200; the launcher and every MPI worker before `set_device`), PR #15632 (the fix, 1.3.0rc21 per nvbug
6402018), and the release arithmetic of a corpus start (zufayu/ClaudeSkillsE2EPerf's DeepSeek-R1 NVFP4 at TP 4 / EP 4,
tests/data/calibration/trtllm.jsonl) read at neighbouring releases.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load_all, resolve
from kvtop.domain.calibration.cuda_context import one_process_context
from kvtop.domain.calibration.plan_fits import committed_fits
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.engines.trtllm.calibration import FITS, fit_offset, terms
from kvtop.domain.engines.trtllm.import_contexts import stray_contexts
from kvtop.domain.wording import GIB

TRTLLM = {record.id: record for record in load_all()["trtllm"]}
TP4_EP4 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp4-ep4-trtllm-130rc10"
OSS_TP1 = "zufayu-e2eperf-gpt-oss-120b-b200-tp1-trtllm-130rc10"
L40S_TRT = "helian2s-model-optimization-qwen3-1.7b-l40s-trtllm-130rc19-bench"  # a TensorRT engine at 1.3.0rc19


def _raw(record_id: str, **changes: object) -> dict[str, object]:
    return {**TRTLLM[record_id].raw, **changes}


def _non_torch(raw: dict[str, object]) -> TermEstimate:
    return next(t for t in terms(resolve(raw).inputs()) if t.term is Term.NON_TORCH)


def test_only_1_3_0rc20_carries_the_import_contexts() -> None:
    """PR #15402 put `_init_deep_gemm_pdl()` at import between 1.3.0rc19 and rc20; PR #15632 took it out, verified at
    rc21. At rc20 the first GPU holds the launcher's context and one for each other rank of its node: TP 4 → 4,
    TP 1 → 1 (the LLM API's proxy spawns its worker), TP 8 on a GB200 tray of 4 GPUs → 4 (its node's ranks)."""
    for version in ("1.3.0rc10", "1.3.0rc19", "1.3.0rc21", "1.3.0rc22"):
        assert stray_contexts(resolve(_raw(TP4_EP4, version=version)).inputs()) == 0, version
    assert stray_contexts(resolve(_raw(TP4_EP4, version="1.3.0rc20")).inputs()) == 4
    assert stray_contexts(resolve(_raw(OSS_TP1, version="1.3.0rc20")).inputs()) == 1
    flags = list(TRTLLM[TP4_EP4].raw["flags"])
    del flags[flags.index("--ep_size") : flags.index("--ep_size") + 2]  # EP 1 at TP 8
    tray = resolve(_raw(TP4_EP4, version="1.3.0rc20", gpu="GB200", tp=8, flags=flags)).inputs()
    assert stray_contexts(tray) == 4


def test_the_non_torch_term_carries_them_at_rc20_and_the_fit_trains_without_them() -> None:
    """At rc20 the profiled non-torch term is rc19's plus 4 × one process's assumed context (0.75 GiB, with no fit:
    cuda_context.py), its error widened; `fit_offset` takes the very same bytes off a logged figure, so the plan adds
    back exactly what the fit never saw (the offset reads no committed fit: none behind a judgement's back)."""
    before = _non_torch(_raw(TP4_EP4, version="1.3.0rc19"))
    inputs = resolve(_raw(TP4_EP4, version="1.3.0rc20")).inputs()
    after = next(t for t in terms(inputs) if t.term is Term.NON_TORCH)
    assert after.bytes - before.bytes == 4 * round(0.75 * GIB)
    assert after.error_bytes > before.error_bytes and "PR #15632" in after.basis
    rc19 = resolve(_raw(TP4_EP4, version="1.3.0rc19")).inputs()
    assert fit_offset("trtllm.non_torch", inputs) - fit_offset("trtllm.non_torch", rc19) == after.bytes - before.bytes
    fitted = one_process_context(inputs, committed_fits(FITS), "test")  # the SM-count fit: 0.69 GiB on the B200
    assert abs(round(0.75 * GIB) - fitted.bytes) <= fitted.error_bytes


def test_a_tensorrt_engine_at_rc20_names_them_not_modelled() -> None:
    """§28: the TensorRT-engine backend of 1.3.0rc20 would see the import contexts too, but kvtop does not model them
    there: its context term keeps rc19's figure, says so, and its error widens by at least the contexts' bytes (the
    L40S start at TP 1: the launcher's one context, 0.75 GiB assumed)."""
    rc19 = resolve(TRTLLM[L40S_TRT].raw).inputs()
    rc20 = resolve(_raw(L40S_TRT, version="1.3.0rc20")).inputs()
    assert stray_contexts(rc20) == 1
    before, after = (next(t for t in terms(i) if t.term is Term.CONTEXT) for i in (rc19, rc20))
    assert after.bytes == before.bytes
    assert after.error_bytes - before.error_bytes >= round(0.75 * GIB)
    assert "not modelled for a TensorRT engine" in after.basis


def test_the_context_charged_is_the_one_pr_15985_measured() -> None:
    """PR #15985: the import's context is 550 MiB on H100 and about 700 MB on GB200. kvtop charges one process's
    context by the GPU's SM count (the engine-neutral fit, not read off these figures); each lies within its error."""
    for gpu, measured in (("H100", 550 * (1 << 20)), ("GB200", 700_000_000)):
        inputs = resolve(_raw(TP4_EP4, version="1.3.0rc20", gpu=gpu)).inputs()
        one = one_process_context(inputs, committed_fits(FITS), "test")
        assert abs(one.bytes - measured) <= one.error_bytes, gpu
