"""A TensorRT engine's context beside its CUDA context, read off TensorRT's own counts (docs/engines/trtllm.md §27).

TensorRT's `[MemUsageChange] … now: GPU N (MiB)` is the device's used memory. Four TensorRT-LLM 0.8.0 starts print it
at each step (sources recorded in kvtop/domain/engines/trtllm/tensorrt_handles.py):

* guide 69112122406, RTX 3090, `test_run.py` (no Triton): `Init cuBLAS/cuBLASLt: CPU +0, GPU +8, now: … GPU 15607`
  before `TensorRT-managed allocation in engine deserialization: … GPU +15316`: 15,607 − 8 − 15,316 = 283 MiB of
  bare context; the same engine under Triton on the same host: 15,671 − 8 − 15,316 = 347 MiB, after
  `CUDA memory pool is created on device 0 with size 67108864` (64 MiB);
* file 29204245318, `run.py` of gpt2-medium (no Triton): 1,065 − 8 − 774 = 283 MiB;
* each start's handles: `Init cuBLAS/cuBLASLt … GPU +8`, `Init cuDNN … GPU +10` at deserialization, then `+8` and
  `+8` at the execution context: 34 MiB.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.cuda_context import CUDA_CONTEXT_FITS, CUDA_CONTEXT_KEY, one_process_features
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.trtllm.calibration import terms
from kvtop.domain.engines.versions import ResolvedVersion

MIB = 1 << 20
RECORDS = {record.id: record for record in load("trtllm")}
A10_050 = "case-trtllm-224-llama2-7b-a10"  # TensorRT-LLM 0.5.0 (TensorRT 9.1), Triton, TP 1
BARE_CONTEXT_3090_MIB = 15_607 - 8 - 15_316  # guide 69112122406's test_run.py start
HANDLES_MIB = (8 + 10) + (8 + 8)  # the two inits' `GPU +N` of every 0.8.0 start
TRITON_POOL_MIB = 67_108_864 // MIB  # `CUDA memory pool is created … with size 67108864`


def _at(record_id: str, release: str) -> CalibrationInputs:
    return RECORDS[record_id].inputs().model_copy(update={"version": ResolvedVersion(text=release)})


def _context(inputs: CalibrationInputs) -> tuple[int, int]:
    found = {estimate.term: estimate for estimate in terms(inputs)}[Term.CONTEXT]
    return found.bytes, found.error_bytes


def test_the_resident_thread_fit_is_the_bare_context_tensorrt_counted_on_a_3090() -> None:
    """The engine-neutral fit on the 3090's 82 × 1,536 threads (the committed fit: 0.29 GiB) lies within 48 MiB of the
    283 MiB TensorRT counted before its handles in the start without Triton; the per-SM form gave 364 MiB (81 over):
    the thread form is the context itself, and TensorRT-LLM's context takes it as is."""
    three_090 = _at("file29429054722-trtllm-llama-3-8b-3090", "0.8.0")
    values = one_process_features(three_090)
    assert values is not None
    fitted = CUDA_CONTEXT_FITS[CUDA_CONTEXT_KEY].predict(values)
    assert abs(fitted - BARE_CONTEXT_3090_MIB * MIB) <= 48 * MIB
    # Triton's pool, which kvtop cannot see in a launch line, lies inside the fit's error
    assert CUDA_CONTEXT_FITS[CUDA_CONTEXT_KEY].error_bytes >= TRITON_POOL_MIB * MIB


def test_a_tensorrt_9_engine_holds_tensorrt_s_handles_beside_its_context() -> None:
    """Issue 224's 0.5.0 engine (TensorRT 9.1) on its A10 is charged the 34 MiB of handles the 0.8.0 logs count beside
    the same CUDA context it is charged at 0.10.0 (TensorRT 10: none), the error unchanged; 0.9.0 (TensorRT 9.3) still
    holds them."""
    old, old_error = _context(_at(A10_050, "0.5.0"))
    last_trt9, _ = _context(_at(A10_050, "0.9.0"))
    trt10, trt10_error = _context(_at(A10_050, "0.10.0"))
    assert old - trt10 == HANDLES_MIB * MIB
    assert last_trt9 == old
    assert old_error == trt10_error


def test_the_counted_3090_context_is_the_bare_context_with_handles_and_triton_s_pool() -> None:
    """The 0.8.0 RTX 3090 count kvtop charges there (`ENGINE_CONTEXT_COUNTED`, 377 MiB: Triton starts) is the bare
    context, Triton's 64 MiB pool and the handles: 283 + 64 + 34 = 381 MiB, within 4 MiB (the count was taken against
    the 15,320 MiB `Loaded engine size` where the deserialization line says 15,316)."""
    counted, _ = _context(_at("file29429054722-trtllm-llama-3-8b-3090", "0.8.0"))
    assert abs(counted - (BARE_CONTEXT_3090_MIB + TRITON_POOL_MIB + HANDLES_MIB) * MIB) <= 4 * MIB
