"""The cold compile's freed embedding copy, pinned in torch's reserve past the profile and charged a second time as
consumed memory (vLLM v0.27.0 – v0.30.x; docs/engines/vllm.md §9, "Session 70").

A cold torch.compile inside vLLM's profile allocates one random copy of the rank's embedding table for Inductor's
combo-kernel benchmark and frees it before the compiled forward runs (`compile_benchmark.py`). That copy is one
request of far more than 10 MiB, so torch's caching allocator gives it a segment of its own, rounded up to 2 MiB
(`weights_held.allocator_block`); freed, the segment stays cached, and with no split limit a later smaller request is
carved out of it (best fit). One such request that lives past the profile pins the whole segment through the
`empty_cache()` that `memory_profiling` calls before its last snapshot. What vLLM then charges:
- before v0.27.0 the non-torch increase is (total − free) − torch's reserve (utils/mem_utils.py:134-163, :302-314 at
  v0.24.0): a pinned segment is torch's reserve, so nothing beyond the peak's transient is charged for it;
- from v0.27.0 the budget's `total_consumed` is the drop in free memory itself (mem_utils.py:317-319 at v0.29.0, the
  same at v0.28.0), which holds the pinned segment, and the transient headroom (torch's peak less what stays, :324-326)
  holds the copy again: the profile runs without a split limit (v1/worker/gpu_worker.py:553-557 at v0.29.0; only the
  load sets one, :489-495);
- from v0.31.0 the profile runs under `_scoped_allocator_max_split(max_split_size_mb=20)` (gpu_worker.py:612-626 at
  v0.31.0, :717-732 at v0.34.0, whose comment names the mechanism, its example the MoE workspace rather than this copy:
  'a later small allocation can be carved out of a freed multi-GiB block and pin the whole segment past the
  empty_cache() in memory_profiling, so it is counted as consumed and taken from the KV cache'), so a block above
  20 MiB is never split and the freed copy is released. The boundaries read in the wheels: v0.26.0 has no
  `total_consumed` (mem_utils.py:311), v0.27.0 has it (:317); v0.30.0's profile has no split limit (gpu_worker.py:568),
  v0.31.0's has (:612-626).

Where kvtop applies it: wherever the copy is read in v0.27.0 – v0.30.x, as an error, not a centre (below): V2 from
v0.29.0 (`with_v2_beside` where `v2_beside_kept`, the copy: `compile_benchmark.embedding_copy_bytes`), the releases it
was measured at (v0.29.0); from session 71 also V2's placeholder branch of `with_v2_beside` at v0.27.0 – v0.28.x, and
the V1 runner's profiled peak at v0.27.0 – v0.30.x (`compile_benchmark.with_v1_compile_copy`, the copy
`v1_copy_bytes`). Read in the v0.27.0 and v0.28.0 wheels: utils/mem_utils.py is the same file at both (the budget's
`total_consumed`, :317-319, and the transient headroom, :323-326), and the worker runs either runner's `profile_run`
inside `memory_profiling` without the split limit (v1/worker/gpu_worker.py:500-504 at v0.27.0, :515-519 at v0.28.0;
`_scoped_allocator_max_split(max_split_size_mb=20)` wraps `load_model` only, :439-440 / :454-455), while the
combo-kernel benchmark that makes the copy is on (config/compilation.py:977-987 at v0.28.0). No start of v0.27.0 –
v0.28.x in the corpus says its pool lost the segment; none of the corpus's judgements moved in or out of 5 % or of its
interval by the widening (session 71, `record_check.py`: 573 of 682 fully blind and 447 of 496 with the logs' weights
within 5 %, 666 and 486 holding, before and after; 60 intervals of 43 records widened, at their low end only since the
pin is one-sided on both runners: the graph term's error on V2, the activation term's on V1, `raise_only_bytes`).

Measured (wrbooth's RTX 5090 at v0.29.0, one host, one image; their logs' 'Actual usage is … GiB for consumed memory
(weights + non-torch)'): Qwen2.5-7B cold printed 15.65 consumed beside 14.29 of weights, warm 14.67 (prefix caching off,
and again at 8,192 batched tokens): 0.98 GiB more cold, where the table's segment is 1.016 GiB (152,064 × 3,584 × 2 B
rounded up to 2 MiB); its online-FP8 start cold 9.62 beside 8.2 (1.42, the bf16 table kept), against 8.64 beside 8.21
warm of the same host's FP8 checkpoint (0.43): 0.99 more; Qwen2.5-0.5B cold 1.59 beside 0.93 (0.66, 0.28 above the 7B's
warm 0.38), its table's segment 0.254 GiB (151,936 × 896 × 2 B). Which request lands in the freed block follows the
start's allocation order, and most cold starts of the era pin nothing: charged at the centre (session 70, committed
fits), the copy's segment moved 30 of the corpus's judgements (21 records) out of 5 % (aarush's L4 cold pair,
rhizonymph's RTX 3090, yuanjuju's RTX 4090 and samilazrak's L40S starts land within 1 % without it) and 11 (9 records:
wrbooth's two 7B cold starts, xiyiji's four over-predicted RTX 4090 starts, burbanit0's RTX 5070 Ti, akamas's
gpt-oss-20b L4 TP 2 and inferstack's T4 at 256 seqs) in. xiyiji's one host shows both: Qwen2.5-7B at 4,096 tokens and
16 seqs held 86,064 tokens, at 32 seqs 104,352, 0.98 GiB apart (18,288 × 57,344 B) where the launches differ by a few
MiB (its idle nvidia-smi telemetry, in the records' notes: 16,267 – 16,566 MiB beside the pool on the low starts,
15,181 – 15,495 on the high ones). So it is **not modelled** at the centre: `pinned_copy` gives the segment, which the
V2 term's error takes (`v2_graphs.with_v2_beside`), so the interval's low end holds a start that pinned it. Until
session 71 that error was a half-width, so it also raised the high end where the term's floor did not stop it (2 of the
76 intervals it widened, the haitang89 H200 pair: +15,019 and +10,240 tokens) though a pin only ever takes from KV; no
judgement's holding changed (1,127 of 1,156 before and after), so the corpus itself asks nothing of it: it is there for
held-out starts that pin. From session 71 it is the term's error above its figure only (`TermEstimate.raise_only_bytes`):
the low end takes it, the high end does not move.

Session 71 (helper H3, bounded by fixer H4 after review R7): on an sm_120 GPU (compute capability 12.0, not GB10's
12.1) from v0.28.0 the segment is charged at the centre (`pinned_at_centre`), on the corpus's evidence by architecture,
not on a rule read in code: 12 of the 14 V2 records of such cards where the copy is read (7 hosts: RTX 5090, RTX 5070
Ti, RTX 5060 Ti, RTX PRO 4000; v0.28.0 – v0.30.0) planned 0.2 – 1.3 GiB too much KV without it and land at −5.3 –
+1.5 % with it; the other two are v0.27.x starts (keke0712's RTX 5090, its release by date 0.26.0 – 0.27.1 and said
warm, likeliest warm; case-vllm-blog's RTX PRO 6000 at 0.27.1), which the pin moved the wrong way (−6.7 → −15.3 %,
+10.3 → −10.7 %), so v0.27.x keeps it in the error above the figure (docs/engines/vllm.md §9, "Session 71 (helper
H3)"). Where charged, a start that keeps the segment free holds that much more KV and none holds less for it: its
error is the term's below its figure only (`TermEstimate.lower_only_bytes`), the interval the one without the pin with
only its centre moved."""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.profile_run import PROFILE_SPLIT_UNLIMITED
from kvtop.domain.engines.vllm.weights_held import allocator_block
from kvtop.domain.gpus import compute_capability
from kvtop.domain.wording import gib


def pinned_copy(copy_bytes: int, inputs: CalibrationInputs) -> tuple[int, str]:
    """(bytes, why) of the cold compile's freed copy (`copy_bytes`, `compile_benchmark.embedding_copy_bytes`) that
    the release charges again as consumed memory: its whole segment where the profile runs without the split limit
    while the budget counts the free memory taken (`profile_run.PROFILE_SPLIT_UNLIMITED`, v0.27.0 – v0.30.x: the one
    table of that window, by which `profile_run.with_pinned_segments` names the pinned segments in the graph term's
    basis), else (0, '')."""
    if copy_bytes <= 0 or not PROFILE_SPLIT_UNLIMITED.at(inputs.version):
        return 0, ""
    segment = allocator_block(copy_bytes)
    return segment, (
        f"its freed segment ({gib(segment)}) stays pinned past the profile's empty_cache() where a later request is "
        "carved out of it, and vLLM counts it again as consumed memory (mem_utils.py:317-319, no split limit around "
        "the profile: gpu_worker.py:500-504 at v0.27.0, :515-519 at v0.28.0, :553-557 at v0.29.0; from v0.31.0 the profile's max_split_size_mb 20 releases it)"
    )


# The compute capability whose V2 starts pinned the segment in 12 of the corpus's 14 (session 71, helper H3;
# `pinned_at_centre`): consumer and workstation Blackwell, sm_120 (12.0), not GB10 / DGX Spark's sm_121 (12.1, unified
# memory, no record; review R7 H3-3).
PINS_AT_CENTRE_CAPABILITY = (12, 0)

# From which release the pin is charged at the centre there: the 12 starts that lost it are v0.28.0 - v0.30.0; both
# v0.27.x starts of such cards (keke0712's RTX 5090, case-vllm-blog's RTX PRO 6000) moved away from their logs with it
# (review R7 H3-2), so v0.27.x keeps it in the error above the figure. Ends with the window (`PROFILE_SPLIT_UNLIMITED`).
PINNED_AT_CENTRE_FROM: Eras[bool] = Eras((
    Era("", False, "v0.27.x: keke0712's RTX 5090 (−6.7 → −15.3 %) and case-vllm-blog's RTX PRO 6000 (+10.3 → "
                   "−10.7 %) moved away from their logs with the pin at the centre (review R7 H3-2)"),
    Era("0.28.0", True, "12 V2 starts on sm_120 cards at v0.28.0 - v0.30.0 land at −5.3 – +1.5 % with it "
                        "(session 71, helper H3)"),
    Era("0.31.0", False, "the profile's max_split_size_mb 20 releases the copy: nothing pinned (gpu_worker.py:612-626 "
                         "at v0.31.0; `PROFILE_SPLIT_UNLIMITED`)"),
))  # fmt: skip

PINNED_AT_CENTRE = (
    "charged at the centre on an sm_120 GPU from v0.28.0, the V2 runner only (calibrated, not read in code: 12 of the "
    "14 V2 starts of kvtop's corpus on one, 7 hosts' RTX 5090, RTX 5070 Ti, RTX 5060 Ti and RTX PRO 4000 at v0.28.0 - "
    "v0.30.0, lost it; a start that keeps it holds that much more KV, the error below the figure; on the V1 runner it "
    "stays the activation term's error above its figure, not measured there; docs/engines/vllm.md §9, "
    "'Session 71 (helper H3)')"
)


def pinned_at_centre(inputs: CalibrationInputs) -> bool:
    """Whether the pinned segment (`pinned_copy`) is charged at the centre rather than in the term's error above its
    figure: on an sm_120 GPU (compute capability 12.0; GB10's 12.1 has no record) from v0.28.0, where 12 of the
    corpus's 14 V2 starts with the copy read lost it (session 71, helper H3; the other two, at v0.27.x, did not move
    towards their logs with it: `PINNED_AT_CENTRE_FROM`): wrbooth's RTX 5090 printed 0.98 GiB more consumed memory cold than warm (the 1.016 GiB segment of
    Qwen2.5-7B's table), burbanit0's RTX 5070 Ti held 1.09 GiB more KV at v0.31.0 (the split limit) than at v0.30.0 on
    one launch, and Xecutive-Development-LLC's RTX 5090 VM (Phi-4-mini, Qwen3-4B-2507), freshair129's and
    file70376054105's RTX 5060 Ti and kashif's RTX PRO 4000 plan 0.2 - 1.3 GiB too much KV without it. Which request lands in the freed block is
    the start's allocation order, which vLLM's and torch's code leave open (no launch setting fixes it), so this is an
    observation by architecture, not a rule read in code; elsewhere (Ampere, Ada, Turing, Hopper) most cold starts
    did not pin it, and it stays the term's error above its figure. The V2 runner only (the 12 starts are V2's): on
    the V1 runner it stays the activation term's error above its figure (`compile_benchmark._with_pinned`), not
    measured there."""
    capability = compute_capability(inputs.gpu_name)
    return capability == PINS_AT_CENTRE_CAPABILITY and PINNED_AT_CENTRE_FROM.at(inputs.version)
