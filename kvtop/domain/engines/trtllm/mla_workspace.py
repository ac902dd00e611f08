"""The attention workspaces TensorRT-LLM's PyTorch backend holds in torch for an MLA model at the profiling baseline
(docs/engines/trtllm.md §32).

Where. `TrtllmAttentionMetadata` keeps two int8 tensors, `workspace` for eager forwards and `cuda_graph_workspace` for
the captured ones (_torch/attention_backend/trtllm.py `_post_init_with_buffers`, stored copies search-index ids
3771944625, 55410938029; the trtllm-gen path picks `metadata.workspace if not metadata.is_cuda_graph else
metadata.cuda_graph_workspace`, id 56186384874). The attention op grows each to what it needs, `max(context,
generation)` (thop/attentionOp.cpp `get_attention_workspace_size`, id 60284347387), logging `Attention workspace size
is not enough, increase the size from X bytes to Y bytes`, and never shrinks it. The autotuner's context pass of
max_num_tokens grows the eager one, the generation-only CUDA-graph warm-up the graph one, both before the profiling
baseline (§20), so 'Memory used after loading model weights (inside torch)' holds both beside the weights.

How much: `AttentionOp::getWorkspaceSizeForContext` / `getWorkspaceSizeForGeneration` (cpp/tensorrt_llm/common/
attentionOp.cpp, stored copy id 190937516), each buffer rounded up to 256 B (`calculateTotalWorkspaceSize`). An MLA
op's head size is kv_lora_rank + qk_rope_head_dim (576 for DeepSeek-V3; `buildAttentionOp`), its heads the rank's
(heads ÷ attention TP), its max_num_requests the executor's max_batch_size, and the MLA family runs the context with
paged context FMHA off (a 2026 unit test of the tree: "MLA-family forces it off", id 55431579079), so the Q buffer is
in the model dtype and no FP8 scale words are kept:
- context: cuBLAS's 32 MiB, three cu_seqlens of (max_num_requests + 1) int32, the rotary inverse frequencies
  (max_num_requests × qk_rope_head_dim ÷ 2 floats), Q (tokens × heads × 576 × 2 B), where FP8 context MLA runs (SM 90,
  100, 103, 120 with an FP8 KV cache) FP8 Q, K and V (tokens × heads × (qk_nope + qk_rope), twice, and × v_head_dim),
  the tokens' (batch, position) int2 and the FMHA tile counter;
- generation: the multi-block partial output (max_num_requests × heads × 576 × tile, 16-bit) with its float sums and
  maxima, tile = max(the window's shared-memory minimum, ⌈SMs ÷ heads⌉), or the MLA kernels' multi-CTA buffers
  (256 rows × SMs × 576, 16-bit, and two float rows) where those are larger.
Checked to the byte on zufayu/ClaudeSkillsE2EPerf's DeepSeek-R1-0528 NVFP4 starts on B200 (tests/data/calibration/
trtllm.jsonl): 470,115,328 B (8,192 tokens) and 476,932,096 B (8,320) of context at TP 4 (1.3.0rc10), 380,108,800 B of
generation at TP 4 (1.3.0rc10) and at TP 8 (1.2.0rc6.post2 and 1.3.0rc10). Which releases: every PyTorch-backend
release kvtop plans an MLA model for is taken so; the two it was checked on bound what is read. A later copy (id
57623691929) lays the context out without cuBLAS's 32 MiB and with FP8 scale words: the release it entered is not
read, so it is not applied (32 MiB, inside the weights term's error).
Not modelled, named: the XQA and FlashMLA (SM 90, 64-token blocks) generation buffers (smaller than the partial output
at the logged starts), cached KV reuse (`total_kv_len` above the dummy requests' tokens) and chunked-prefill buffer
batches above 1, a dense model's workspaces (the same layout gives the three dense starts' logged figures to the
byte, §32, but the read rest holds one of them, within 26 MB of the others). The rest of the profiled peak (§20, §22) is read off a dense start
that held its own workspace (faradawn's 41,960,448 B), so an MLA plan adds what its workspaces hold beyond it.
A launch with CUDA graphs off (`cuda_graph_config: null`, cuda_graphs.py, §37) runs no generation-only graph warm-up and
no generation forward before the baseline (the autotuner's pass and the profiling requests are context only): its graph
workspace is not charged.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.trtllm.budget import executor_max_num_tokens, launch_max_batch_size
from kvtop.domain.engines.trtllm.cuda_graphs import graphs_off
from kvtop.domain.engines.trtllm.kv_storage import TRTLLM_KV_STORAGE
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.gpus import compute_capability, sm_count
from kvtop.domain.kv import FP8_KV_FORMATS
from kvtop.domain.kv_format import resolve_kv_format
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_layers import MlaSpec
from kvtop.domain.rounding import ceil_div, round_up
from kvtop.domain.wording import gib

ALIGNMENT = 256  # calculateTotalWorkspaceSize: every buffer rounded up to 256 B
CUBLAS_WORKSPACE_BYTES = 32 << 20  # CUBLAS_WORKSPACE_SIZE, the context layout's first buffer
INT_BYTES = 4
FLOAT_BYTES = 4
TOKEN_INFO_BYTES = 8  # int2 (batch index, position) per token
HALF_BYTES = 2  # the op's 16-bit type (bf16/fp16): Q, the partial outputs
MULTI_CTA_ROWS = 256  # "Each CTA at most handles 256 rows", the MLA generation kernels' scratch
FP8_CONTEXT_MLA_CAPABILITIES = frozenset({(9, 0), (10, 0), (10, 3), (12, 0)})  # buildAttentionOp: sm 90/100/103/120
# the shared memory one block may opt in to on SM 90 and SM 100 parts (227 KiB), of which the op keeps 2,048 B back:
# `estimate_min_multi_block_count(window, smem − 2048, 2)` (decoderMaskedMultiheadAttention.h, ids 124142090, 9538277).
# Taken for every GPU (not modelled, named): SM 8.x and 12.x parts opt in to less (99 or 163 KiB), which raises the
# window's minimum tile above 1 past a window of ~16,500 or ~27,500 tokens (DeepSeek-V3 at 163,840 on an A100 at TP 8:
# 6 against ⌈108 SMs ÷ 16 heads⌉ = 7, so no byte moves there)
OPT_IN_SHARED_BYTES = 232_448
MMHA_BYTES_PER_ELEMENT = 16 + 4 * HALF_BYTES  # size_per_elts for a 16-bit type
# the attention workspace the read rest of the profiled peak already holds: faradawn's 1.2.0rc4 start (Llama-3-8B,
# 1,024 tokens, 32 requests) printed 41,960,448 B, the same layout's context for 32 heads of 128 (§32)
READ_REST_WORKSPACE_BYTES = 41_960_448

# the context layout read in the stored copy (id 190937516) and reproduced at 1.2.0rc6.post2 and 1.3.0rc10
LAYOUT_ERAS: Eras[bool] = Eras((
    Era("", True, "attentionOp.cpp getWorkspaceSizeForContext with cuBLAS's 32 MiB first (id 190937516): "
                  "470,115,328 B reproduced at 1.3.0rc10; earlier PyTorch-backend releases assumed alike; the later "
                  "layout without it (id 57623691929) not pinned to a release"),
))  # fmt: skip


def _aligned(*sizes: int) -> int:
    return sum(round_up(size, ALIGNMENT) for size in sizes if size > 0)


def context_bytes(mla: MlaSpec, heads: int, tokens: int, max_requests: int, *, fp8_context_mla: bool) -> int:
    """`getWorkspaceSizeForContext` for an MLA op of `heads` heads on `tokens` context tokens."""
    latent = mla.latent_width
    qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    cu_seqlens = INT_BYTES * (max_requests + 1)
    fp8 = (tokens * heads * qk, tokens * heads * qk, tokens * heads * mla.v_head_dim) if fp8_context_mla else (0, 0, 0)
    return _aligned(
        CUBLAS_WORKSPACE_BYTES, cu_seqlens, cu_seqlens, cu_seqlens,
        FLOAT_BYTES * max_requests * mla.qk_rope_head_dim // 2,  # rotary inverse frequencies
        HALF_BYTES * tokens * heads * latent,  # Q, paged context FMHA off
        *fp8, TOKEN_INFO_BYTES * tokens, INT_BYTES,  # the tokens' info, the FMHA tile counter
    )  # fmt: skip


def generation_bytes(mla: MlaSpec, heads: int, max_requests: int, window: int, sms: int) -> int:
    """`getWorkspaceSizeForGeneration` for an MLA op: the larger of the multi-block partial buffers and the MLA
    kernels' multi-CTA scratch (the XQA and FlashMLA buffers not read, §32; beside the scratch, the two cu_seqlens,
    the tile counter and, with an FP8 KV cache, FP8 generation MLA's quantized Q are left out: the partial buffers
    are the larger at the logged starts)."""
    latent = mla.latent_width
    smallest = ceil_div(ceil_div(window + 1, 4), (OPT_IN_SHARED_BYTES - 2048) // MMHA_BYTES_PER_ELEMENT)
    tile = max(smallest, ceil_div(sms, heads), 1)
    partial = _aligned(HALF_BYTES * max_requests * heads * latent * tile,
                       FLOAT_BYTES * max_requests * heads * tile, FLOAT_BYTES * max_requests * heads * tile)
    multi_cta = _aligned(HALF_BYTES * MULTI_CTA_ROWS * sms * latent,
                         FLOAT_BYTES * MULTI_CTA_ROWS * sms, FLOAT_BYTES * MULTI_CTA_ROWS * sms)
    return max(partial, multi_cta)


def _fp8_kv(model: ModelSpec, inputs: CalibrationInputs) -> bool:
    found = resolve_kv_format(inputs.settings.kv_cache_dtype, model, TRTLLM_KV_STORAGE, gpu_name=inputs.gpu_name)
    return found in FP8_KV_FORMATS


def held_in_torch(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) an MLA model's two attention workspaces add to what torch holds at the profiling baseline beyond
    the read rest's own, for `weights_estimate(extra=…)`; None for a model without MLA, a release off `LAYOUT_ERAS`
    (none yet: every release is taken to lay them out so) or workspaces the read rest's already hold."""
    model = inputs.model
    mla = model.mla if model is not None else None
    if model is None or mla is None or not LAYOUT_ERAS.at(inputs.version):
        return None
    heads = max(model.num_attention_heads // max(inputs.layout.attn_tp, 1), 1)
    requests = launch_max_batch_size(inputs.settings)
    tokens = executor_max_num_tokens(inputs.settings, inputs.context_length)
    fp8 = compute_capability(inputs.gpu_name) in FP8_CONTEXT_MLA_CAPABILITIES and _fp8_kv(model, inputs)
    context = context_bytes(mla, heads, tokens, requests, fp8_context_mla=fp8)
    sms = sm_count(inputs.gpu_name)
    off = graphs_off(inputs.settings)
    graphs = generation_bytes(mla, heads, requests, inputs.context_length, sms) if sms and not off else 0
    beyond = context + graphs - READ_REST_WORKSPACE_BYTES
    if beyond <= 0:
        return None
    said_graphs = ("no CUDA graphs' (cuda_graph_config: null, §37)" if off else
                   f"the CUDA graphs' {gib(graphs)} (max_batch_size {requests:,} × {heads} heads × "
                   f"{mla.latent_width}, "
                   f"{sms} SMs)" if sms else "the CUDA graphs' not counted (the GPU's SM count unknown)")
    return beyond, (f"{gib(beyond)} of MLA attention workspaces in torch: the eager one's {gib(context)} "
                    f"({tokens:,} context tokens × {heads} heads{', FP8 context MLA' if fp8 else ''}) and {said_graphs}, "
                    f"less the {READ_REST_WORKSPACE_BYTES:,} B the read rest holds (attentionOp.cpp, §32)")  # fmt: skip
