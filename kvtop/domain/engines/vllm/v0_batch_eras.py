"""The V0 profiling batch's default token count by release: vLLM 0.1.x's fixed 2,560, then the context's.

vLLM 0.1.0 – 0.1.7 profile `EngineArgs.max_num_batched_tokens`, a fixed 2,560 whatever the context (with
`max_num_seqs = min(256, 2560)`), one forward over 256 sequences whose peak `torch.cuda.max_memory_allocated()` is
taken off `total × gpu_memory_utilization` (0.90, block 16: the same defaults as v0.2.0). v0.2.0 made the default
None and SchedulerConfig raises it to max(max_model_len, 2048) so a whole prompt fits one batch. Read in the sdists
of 0.1.0 – 0.1.3 and the wheels of 0.1.4 – 0.1.7 and 0.2.0 (`profile_run.batch_limits` reads this; §2.1 of
docs/engines/vllm.md).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras

# None: the context's own, max(max_model_len, 2048) (`profile_run.V0_MIN_TOKENS`).
V0_DEFAULT_BATCHED_TOKENS: Eras[int | None] = Eras((
    Era("", 2560, "vllm/engine/arg_utils.py:25 at v0.1.0/v0.1.1 (sdist), :27 at v0.1.2, :28 at v0.1.3/v0.1.4, :27 at "
                  "v0.1.5–v0.1.7: `max_num_batched_tokens: int = 2560`; worker/worker.py:70-124 at v0.1.7 "
                  "(`profile_num_available_blocks`: 256 seqs sharing those tokens, max_memory_allocated)"),
    Era("0.2.0", None, "vllm/engine/arg_utils.py:28 at v0.2.0 (`Optional[int] = None`); config.py:274-279 "
                       "(SchedulerConfig: max(max_model_len, 2048))"),
))
