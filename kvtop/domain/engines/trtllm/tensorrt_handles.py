"""What a TensorRT engine's C++ process holds beside its CUDA context before the KV sizing (§27).

The CUDA context itself is one process's, by the GPU's resident threads (`cuda_context.py`). Four TensorRT-LLM 0.8.0
starts on RTX 3090s print TensorRT's process-wide count (`[MemUsageChange] … now: GPU N (MiB)`, the device's used
memory) at each step; the count before TensorRT's first handle, less the engine it then deserializes (`TensorRT-
managed allocation in engine deserialization: … GPU +15316` / `+774`), is the bare context: 283 MiB in the two
starts without Triton (guide 69112122406's `test_run.py` on its RTX 3090: 15,607 − 8 − 15,316; file 29204245318's
`run.py`, a 24 GB card it does not name, the Triton start of file 29338649464's 3090 its sibling: 1,065 − 8 − 774),
where the resident-thread fit gives 294 MiB on the 3090's 82 × 1,536 threads (the per-SM fit gave 364). Beside it:

* TensorRT's cuBLAS/cuBLASLt and cuDNN handles, initialised once as the engine deserializes and once as its execution
  context is made: `Init cuBLAS/cuBLASLt: … GPU +8`, `Init cuDNN: … GPU +10`, then `+8` and `+8`, 34 MiB, in all four
  starts (and TensorRT-LLM's 2023 gpt2 run, search-index id 40675948135: `+10`, `+10`, then `+8`). TensorRT 10 no
  longer initialises them for an engine (its 10.0.0 release notes: the plugin library loads cuBLAS/cuDNN itself, on
  demand, and TensorRT 8.5.2's notes announced the tactic sources off by default); TensorRT-LLM's 0.12 memory docs'
  start prints no such line between `Loaded engine size` and its execution context. TensorRT-LLM moved to TensorRT 10
  in 0.10.0 (0.9.0 built on TensorRT 9.3): the handles are charged before 0.10.0, none from it. Read on GA102 (sm
  8.6); another architecture's handles are taken the same (a Hopper cuBLAS workspace is recommended at 32 MiB
  against 4 MiB elsewhere, cuBLAS `cublasSetWorkspace`: not read in a log of the era, inside the context's error).
* Triton's CUDA memory pool (`cuda_memory_manager.cc: CUDA memory pool is created on device 0 with size 67108864`,
  tritonserver's `--cuda-memory-pool-byte-size` default): the two Triton starts count 347 MiB before the handles,
  64 MiB above the same host's start without it. A launch line does not say whether Triton serves the engine
  (its config.pbtxt parameters read as the executor's), so kvtop does not model it: inside the context's error.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion

# (deserialization: cuBLAS/cuBLASLt + cuDNN) + (execution context: cuBLAS/cuBLASLt + cuDNN), MiB, as the 0.8.0 logs count
HANDLES_MIB = (8 + 10) + (8 + 8)
HANDLES_ERAS: Eras[bool] = Eras((
    Era("", True, "TensorRT 9.x and before: `Init cuBLAS/cuBLASLt` and `Init cuDNN` at deserialization and at the "
                  "execution context (0.8.0 logs 29429054722, 69112122406, 29338649464, 29204245318)"),
    Era("0.10.0", False, "TensorRT 10: no handle initialised for an engine (10.0.0 release notes; the 0.12 memory "
                         "docs' start prints none)"),
))  # fmt: skip


def handles_bytes(version: ResolvedVersion) -> int:
    """Bytes of TensorRT's cuBLAS/cuBLASLt and cuDNN handles in a TensorRT engine's process at `version`: 34 MiB
    before 0.10.0, none from it (`HANDLES_ERAS`)."""
    return HANDLES_MIB << 20 if HANDLES_ERAS.at(version) else 0
