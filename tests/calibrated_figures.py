"""kvtop's calibrated pre-start figures for the demo's engines, by hand from the committed fits.

The fits are inputs, read from ONE place: the blocks `benchmarks/calibration/run.py --write` generates in
kvtop/domain/calibration/gpu_totals.py and kvtop/domain/engines/<engine>/calibration.py (docs/calibration.md). A refit
moves them and the figures here follow; the engines' rules are written out here, never called, so a test comparing
kvtop's figure with one of these still fails where kvtop's rule changes.

- SGLang (docs/engines/sglang.md §4, `KVCacheConfigurator._profile_available_bytes`): rest = (pre-load − weights) GiB
  − pre-load GiB × (1 − mem_fraction_static), as a float; int(rest × 2^30) bytes // the cell per rank.
- vLLM V1 before v0.21 (docs/engines/vllm.md §2.4, gpu_worker.py `determine_available_memory`): ceil(CUDA total ×
  utilisation) − weights − the profiled activation peak − non-torch growth, in whole blocks.

At the fits of da524f1c (SGLang's context 0.570448 + 0.521322 × log2 TP GiB, the H100's CUDA total 79.18806 GiB) the
demo's Llama-3-70B at TP 8 plans 1,221,506 tokens a rank; each test's comment says the figure it was written at.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS
from kvtop.domain.engines.sglang.calibration import FITS as SGLANG_FITS
from kvtop.domain.engines.vllm.calibration import FITS as VLLM_FITS
from kvtop.domain.wording import GIB
from tests.corpus_records import logged_bytes

MIB = 1 << 20


def fitted_bytes(gib: float) -> int:
    """A fit's GiB as bytes, to the nearest byte (as a fitted term's estimate rounds it)."""
    return round(gib * GIB)


# CUDA's total of one H100 80GB and one H200: the mean of the totals the corpus's logs printed (cuda_total.<GPU>)
H100_CUDA_TOTAL_BYTES = fitted_bytes(CUDA_TOTAL_FITS["cuda_total.H100"].coefficients[0])
H200_CUDA_TOTAL_BYTES = fitted_bytes(CUDA_TOTAL_FITS["cuda_total.H200"].coefficients[0])
# CUDA's total of the demo's H100s as its NVML v2 reports it (total less reserved, measured as on a live node): the
# logged start its table of starts names (examples/measured/starts.json), not the fit
DEMO_H100_CUDA_TOTAL_BYTES = logged_bytes("llmd-v019-llama-3.3-70b-fp8dyn-tp4:cuda_total")
DEMO_H200_CUDA_TOTAL_BYTES = logged_bytes("file20903468563-deepseek-r1-h200-tp8:cuda_total")  # its H200s likewise

# --- SGLang: the demo's Llama-3-70B (config: tests/data/configs/meta-llama--Meta-Llama-3-70B.json) on H100s ---

# SGLang's float32 rope cos/sin cache, whole on every rank: 8,192 positions × 128 dims × 4 B
SGLANG_ROPE_CACHE_BYTES = 8_192 * 128 * 4
# One rank's bf16 checkpoint (hidden 8,192, 80 layers, 64 heads, 8 KV heads of 128, MLP 28,672, vocab 128,256, untied),
# by hand at TP t: embedding and LM head 2 × 128,256 × 8,192 ÷ t; per layer q and o 2 × 8,192² ÷ t, k and v
# 2 × 8,192 × 1,024 ÷ t, MLP 3 × 8,192 × 28,672 ÷ t, two norms 2 × 8,192 whole; the final norm 8,192; × 2 B.
# TP 8: 80 × 106,971,136 + 262,668,288 + 8,192 = 8,820,367,360 params = 17,640,734,720 B
# TP 4: 80 × 213,925,888 + 525,336,576 + 8,192 = 17,639,415,808 params = 35,278,831,616 B
LLAMA_70B_CHECKPOINT_BYTES = {8: 17_640_734_720, 4: 35_278_831_616}
# What PyTorch's caching allocator reserves beyond those tensors, which SGLang's `mem usage` counts (free memory before
# less after the load; engines/sglang/weights_held.py, docs/engines/sglang.md §20.2), by its rules
# (c10/cuda/CUDACachingAllocator.cpp): the 4 MiB rope cache, under 10 MiB, opens a 20 MiB segment (16 MiB unused);
# the embedding and LM head shards, 128,256 ÷ t × 8,192 × 2 B, are 250.5 MiB at TP 8 (two 252 MiB segments: 3 MiB)
# and 501 MiB at TP 4 (502: 2 MiB); every layer matrix is a whole number of 2 MiB; the norms, 80 × 2 × 8,192 × 2 B +
# 16,384 B = 2,637,824 B, fill two 2 MiB small segments (1,556,480 B unused)
SGLANG_LLAMA_70B_SEGMENT_TAILS = {8: 16 * 2**20 + 3 * 2**20 + 1_556_480, 4: 16 * 2**20 + 2 * 2**20 + 1_556_480}
# SGLang 0.5.9's automatic mem_fraction_static on an H100 (docs/engines/sglang.md §5): round((81,559 − reserved) ÷
# 81,559, 3), reserved 14,848 MiB at TP 8 (0.818) and 14,336 at TP 4 (0.824)
SGLANG_H100_FRACTION = {8: 0.818, 4: 0.824}
# bytes per token a rank holds: 80 layers × 2 (K, V) × 8 KV heads ÷ TP × 128 × 2 B
LLAMA_70B_CELL_BYTES = {8: 40_960, 4: 81_920}


def sglang_context_bytes(tp: int, sms: int = 132) -> int:
    """What an SGLang rank holds before its weights at TP `tp` on NVLink GPUs of `sms` SMs (sglang.context: a part per
    100 SMs and a part per doubling of TP; the H100's and the H200's 132 SMs by NVIDIA's datasheets)."""
    per_100_sms, per_doubling = SGLANG_FITS["sglang.context"].coefficients[:2]
    return fitted_bytes(per_100_sms * sms / 100 + per_doubling * math.log2(tp))


def sglang_unnamed_gpu_context_bytes(tp: int = 1) -> int:
    """An SGLang rank's context where no GPU is named: its SMs unknown, kvtop's stated assumption (0.75 GiB + 0.75 GiB
    per doubling of TP, kvtop/domain/calibration/features.py), not the fit."""
    return fitted_bytes(0.75 + 0.75 * math.log2(tp))


def sglang_h100_pre_load_bytes(tp: int) -> int:
    """kvtop's pre-load free memory for a fresh start on an H100: CUDA's total less the context."""
    return H100_CUDA_TOTAL_BYTES - sglang_context_bytes(tp)


def llama_70b_weights_bytes(tp: int) -> int:
    """The weights an SGLang rank holds: its share of the checkpoint, the rope cache and the allocator's tails."""
    return LLAMA_70B_CHECKPOINT_BYTES[tp] + SGLANG_ROPE_CACHE_BYTES + SGLANG_LLAMA_70B_SEGMENT_TAILS[tp]


def sglang_kv_budget_bytes(pre_load: int, weights: int, fraction: float) -> int:
    """SGLang's KV budget: its float GiB arithmetic, truncated to bytes (1 B under the whole terms at times)."""
    rest_gib = (pre_load - weights) / GIB - pre_load / GIB * (1 - fraction)
    return int(rest_gib * GIB)


def demo_sglang_h100_pre_load_bytes(tp: int) -> int:
    """The pre-load free memory a demo node's prediction takes: its GPUs' measured CUDA total less the context fit."""
    return DEMO_H100_CUDA_TOTAL_BYTES - sglang_context_bytes(tp)


def demo_llama_70b_tokens(tp: int, pre_load: int | None = None, fraction: float | None = None,
                          cell: int | None = None) -> int:
    """`llama_70b_tokens` on a demo node: CUDA's total measured on its GPUs (NVML v2), not the fit."""
    return llama_70b_tokens(tp, demo_sglang_h100_pre_load_bytes(tp) if pre_load is None else pre_load, fraction, cell)


def llama_70b_tokens(tp: int, pre_load: int | None = None, fraction: float | None = None, cell: int | None = None) -> int:
    """Tokens a rank of the demo's Llama-3-70B holds on H100s from `pre_load` free (else kvtop's calibrated figure)."""
    free = sglang_h100_pre_load_bytes(tp) if pre_load is None else pre_load
    share = SGLANG_H100_FRACTION[tp] if fraction is None else fraction
    return sglang_kv_budget_bytes(free, llama_70b_weights_bytes(tp), share) // (cell or LLAMA_70B_CELL_BYTES[tp])


def llama_70b_co_tenant_tokens(tp: int, held: int) -> int:
    """Tokens every rank of the demo's Llama-3-70B loses to `held` bytes of another process on one H100: SGLang sizes
    every rank by the least pre-load free, so the pool less the pool `held` bytes smaller (each floored), from the demo
    node's measured CUDA total (NVML v2), as a live or demo node is planned."""
    return demo_llama_70b_tokens(tp) - demo_llama_70b_tokens(tp, pre_load=demo_sglang_h100_pre_load_bytes(tp) - held)


# --- vLLM V1 (v0.8.0 – v0.16.x: vllm.activation.v1, vllm.non_torch.v1) ---


def vllm_activation_bytes(era: str, *, seqs: int, vocab: int, tokens: int, hidden: int, mlp_width: float,
                          moe: bool) -> int:
    """The activation fit `vllm.activation.<era>` (V1's features, no constant: calibration.ACTIVATION_FEATURES) on the
    dummy run's bf16 hidden states (tokens × `hidden` × 2 B), one float32 copy of the logits (seqs × vocab × 4 B) and
    the forward's MLP transient (tokens × `mlp_width` × 2 B, dense or MoE); rounded to bytes."""
    states, logits, dense, routed = VLLM_FITS[f"vllm.activation.{era}"].coefficients
    transient = tokens * mlp_width * 2 / GIB
    return fitted_bytes(states * tokens * hidden * 2 / GIB + logits * seqs * vocab * 4 / GIB
                        + (routed if moe else dense) * transient)  # fmt: skip


def _vllm_peak_and_growth(era: tuple[str, str], *, seqs: int, vocab: int, tokens: int, hidden: int, mlp_width: float,
                          moe: bool, all_reduce: bool) -> int:
    """The activation fit `era[0]` (`vllm_activation_bytes`) and the non-torch fit `era[1]` with or without the custom
    all-reduce; each rounded to bytes."""
    peak = vllm_activation_bytes(era[0], seqs=seqs, vocab=vocab, tokens=tokens, hidden=hidden, mlp_width=mlp_width,
                                 moe=moe)  # fmt: skip
    base, reduce = VLLM_FITS[f"vllm.non_torch.{era[1]}"].coefficients
    return peak + fitted_bytes(base + (reduce if all_reduce else 0.0))


def vllm_v1_runtime_bytes(*, seqs: int, vocab: int, tokens: int, hidden: int, mlp_width: float, moe: bool,
                          all_reduce: bool) -> int:
    """The profiled activation peak and non-torch growth a V1 start charges (V1's fits of both)."""
    return _vllm_peak_and_growth(("v1", "v1"), seqs=seqs, vocab=vocab, tokens=tokens, hidden=hidden,
                                 mlp_width=mlp_width, moe=moe, all_reduce=all_reduce)  # fmt: skip


# --- vLLM from v0.21.0 (vllm.activation.v17, vllm.non_torch.v18, vllm.cuda_graphs: docs/engines/vllm.md §2.4) ---


def vllm_v21_runtime_bytes(*, seqs: int, vocab: int, tokens: int, hidden: int, mlp_width: float, moe: bool,
                           all_reduce: bool, workspace: int, graph_nodes: float, v2_beside: bool = False,
                           v2_graph_nodes: float = 0.0) -> int:
    """What a start from v0.21.0 charges beside weights and KV: the v17 peak and the v18 growth (as V1's), FlashInfer's
    all-reduce fusion workspace (`workspace` bytes, which the code sizes, outside the fit) and the CUDA-graph estimate's
    fit on `graph_nodes` (graphs the estimate counts, its first capture and each mode's sizes beyond its first, × layers
    on the rank ÷ 1000: no constant, session 54); each rounded to bytes.
    `v2_beside`: a V2-runner start from v0.29.0, whose KV is what is requested less the profile's non-KV memory less the
    measured graphs (gpu_worker.py:606-610 at v0.29.0), so what its profile held beside the peak (the V1 graph figure on
    `graph_nodes` stands for it) and V2's measured graphs are charged both: V2's own form, every PIECEWISE graph measured
    and FULL alone extrapolated (cudagraph_utils.py:718-831 at v0.29.0; v2_graphs.py), is the fit on `v2_graph_nodes`
    (the first capture and the FULL graphs beyond the first × layers ÷ 1000), each rounded apart; and the V2 sampler's state, seqs × vocab int32
    token counts and two bitmasks of ⌈vocab ÷ 32⌉ int32 words a seq, which its total_consumed charges from v0.27.0
    (sample/penalties.py:32-40, utils/mem_utils.py:317-326; v2_sampler_state.py)."""
    (per_node,) = VLLM_FITS["vllm.cuda_graphs"].coefficients
    runtime = _vllm_peak_and_growth(("v17", "v18"), seqs=seqs, vocab=vocab, tokens=tokens, hidden=hidden,
                                    mlp_width=mlp_width, moe=moe, all_reduce=all_reduce)  # fmt: skip
    state = seqs * vocab * 4 + 2 * seqs * -(-vocab // 32) * 4 if v2_beside else 0
    v2_graphs = fitted_bytes(per_node * v2_graph_nodes) if v2_beside else 0
    return runtime + workspace + state + fitted_bytes(per_node * graph_nodes) + v2_graphs


def vllm_tokens(*, total: int, weights: int, runtime: int, block_bytes: int, block_tokens: int, util: float = 0.9) -> int:
    """vLLM's KV tokens a rank holds: ceil(total × util) − weights − runtime, in whole blocks."""
    return (math.ceil(total * util) - weights - runtime) // block_bytes * block_tokens


def vllm_llama_8b_h100_tokens(tp: int, weights: int, total: int = H100_CUDA_TOTAL_BYTES) -> int:
    """kvtop's calibrated plan of the demo's vLLM 0.11.0 Llama-3.1-8B (hidden 4,096, MLP 14,336, vocab 128,256, 32 layers
    of 8 KV heads of 128) at TP `tp` on H100s, the rank holding `weights`: 1,024 seqs and 8,192 tokens profiled (vllm
    serve's H100 defaults), the custom all-reduce on at TP > 1 (NVLink), blocks of 16 tokens × 32 layers × 2 × 8 ÷ TP
    heads × 128 × 2 B; `total`: CUDA's (the fit's; a demo node's is DEMO_H100_CUDA_TOTAL_BYTES, measured)."""
    runtime = vllm_v1_runtime_bytes(seqs=1_024, vocab=128_256, tokens=8_192, hidden=4_096,
                                    mlp_width=3 * 14_336 / tp + 4_096, moe=False, all_reduce=tp > 1)  # fmt: skip
    return vllm_tokens(total=total, weights=weights, runtime=runtime,
                       block_bytes=16 * 32 * 2 * (8 // tp) * 128 * 2, block_tokens=16)  # fmt: skip
