"""The reading of each difference between kvtop and an engine's own code.

Every row that is not equal gets one reading, the first rule that matches. A reading is one of:
  kvtop: …          a rule kvtop gets wrong for that engine version (a fix request: the engine
                    file/function that decides it and the number the engine gives)
  stand-in: …       the harness's stand-in changed what the engine did; on a GPU it would differ
  harness: …        the harness cannot give the engine an input it needs (not a result)
  version: …        a known difference between engine versions that kvtop models for the version
A difference no rule matches reads "unexplained" (the report lists them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MLA = ("DeepSeek-V3", "DeepSeek-R1", "Kimi-K2", "DeepSeek-V3-0324-NVFP4")
SWA_IN_CONFIG = ("Mistral-7B-v0.1", "Phi-3-mini-4k")
WINDOWED_GROUPS = ("gpt-oss", "gemma-3", "Llama-4-Scout")
MAMBA_HYBRIDS = ("Qwen3-Next", "Nemotron-H", "Nemotron-3-Nano")
CHECKPOINT_FP8_KV = ("Llama-3.1-70B-Instruct-FP8", "Qwen3-235B-A22B-NVFP4")


@dataclass(frozen=True)
class Case:
    engine: str
    version: str
    config: str
    variant: str  # "default" or a flag set (cases.FLAG_SETS)
    tp: int
    pp: int
    kv_dtype: str
    gpus: tuple[str, ...]
    kvtop: Any  # table.Side
    side: Any  # table.Side (the engine's)
    raw: dict[str, Any]  # the engine's result for the first GPU of the row

    def has(self, *names: str) -> bool:
        return any(n in self.config for n in names)

    @property
    def release(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.version.split(".")[:2])


Rule = tuple[str, str, Callable[[Case], bool], str]  # id, title, applies, the reading


def _kvtop_refuses(c: Case) -> bool:
    return c.kvtop.status != "ok" and c.side.status == "ok"


def _engine_refuses(c: Case, *words: str) -> bool:
    return c.side.status != "ok" and c.kvtop.status == "ok" and all(w in c.side.message for w in words)


def _both_ok(c: Case) -> bool:
    return c.kvtop.status == "ok" and c.side.status == "ok"


def _logged(c: Case, words: str) -> bool:
    return any(words in m for m in c.raw.get("log") or [])


def _config(c: Case) -> dict[str, Any]:
    from benchmarks.engine_diff.cases import config_path

    return dict(json.loads(config_path(c.config).read_text()))


def _text_config(c: Case) -> dict[str, Any]:
    """The language model's section of a composite config (else the config itself)."""
    config = _config(c)
    return dict(config.get("text_config") or config)


def _stated_dtype(c: Case) -> str:
    config = _config(c)
    text = config.get("text_config") or {}
    return str(config.get("torch_dtype") or config.get("dtype") or text.get("torch_dtype") or text.get("dtype") or "")


def _kvtop_refuses_flag(c: Case) -> bool:
    return _kvtop_refuses(c) and "not a flag of" in c.kvtop.message


def _top_level_modelopt_algo(c: Case) -> bool:
    quant = _config(c).get("quantization_config") or {}
    return isinstance(quant, dict) and "quant_algo" in quant and "quant_method" not in quant


COMMON_RULES: list[Rule] = [
    (
        "K1",
        "kvtop: architecture not modelled",
        lambda c: _kvtop_refuses(c) and "is not modelled by kvtop" in c.kvtop.message,
        "kvtop: the config's architecture (model_type) has no entry in kvtop, which refuses it; the engine "
        "serves it and sizes its pool (the figures in the row). Issue 26 (architectures as data) adds them; the "
        "architecture table below lists which",
    ),
    (
        "K2",
        "kvtop: a per-layer list where kvtop reads one integer",
        lambda c: _kvtop_refuses(c) and "must be an integer" in c.kvtop.message,
        "kvtop: the config gives a per-layer list (moe_layer_freq, intermediate_size, …) where kvtop reads one "
        "integer and refuses the file; the engine reads it layer by layer (issue 26)",
    ),
]


VLLM_RULES: list[Rule] = [
    (
        "V26",
        "kvtop: the checkpoint's FP8 KV of DeepSeek-V3.2 kept plain fp8_e4m3",
        lambda c: (
            c.has("DeepSeek-V3.2")
            and _both_ok(c)
            and c.kv_dtype == "auto"
            and c.raw.get("cache_dtype") == "fp8_e4m3"
            and c.kvtop.bytes_per_block != c.side.bytes_per_block
        ),
        "kvtop: with --kv-cache-dtype auto and the checkpoint's FP8 KV (hf_quant_config.json "
        "kv_cache_quant_algo FP8, nvidia/DeepSeek-V3.2-NVFP4) vLLM 0.33 on sm90 stores plain fp8_e4m3 "
        "(the row's cache_dtype): 576 B latent + 132 B indexer per layer per token, 2,764,032 B per 64-token "
        "block over 61 layers (61 × 64 × 708); kvtop sizes it as fp8_ds_mla (656 + 132 = 788 B, "
        "3,076,352 B per block) as for --kv-cache-dtype fp8 (V13): 893,504 tokens where the engine has 994,432",
    ),
    (
        "V27",
        "harness: no TP group when vLLM takes a Mamba layer's spec",
        lambda c: c.side.status != "ok" and "tensor model parallel group is not initialized" in c.side.message,
        "harness: not an engine refusal. MambaMixer2.get_state_shape (vllm/model_executor/layers/mamba/"
        "mamba_mixer2.py) reads get_tensor_model_parallel_world_size() when the worker's KV cache spec is "
        "taken; in the forked harness's TP 2 runs the TP group is not there at that point (AssertionError in "
        "get_tp_group). On a GPU the group exists; these hybrid-Mamba rows have no engine figure (a harness "
        "gap to fix before they count)",
    ),
    (
        "V21",
        "kvtop: a class-default sliding window vLLM does not use",
        lambda c: (
            _both_ok(c)
            and c.kvtop.extra == c.side.extra
            and c.kvtop.tokens != c.side.tokens
            and "sliding_window" not in (_config(c).get("text_config") or _config(c))
            and all(g.get("kind") == "FullAttentionSpec" for g in c.raw.get("groups") or [{}])
        ),
        "kvtop: the config leaves sliding_window out and kvtop takes transformers' class default (4096 for "
        "qwen3_vl's text config: 'the config leaves out sliding_window=4096'), so its token figure divides the "
        "blocks by a windowed request's block count; vLLM builds full attention only (every layer a "
        "FullAttentionSpec: use_sliding_window is false) and prints num_blocks × block_size (get_kv_cache_capacity, "
        "vllm/v1/core/kv_cache_utils.py); num_blocks agree",
    ),
    (
        "V22",
        "kvtop: vLLM's V2 runner keeps pp + 1 batches in flight",
        lambda c: (
            _both_ok(c)
            and c.pp > 1
            and c.raw.get("model_runner") == "V2"
            and c.kvtop.bytes_per_block == c.side.bytes_per_block
            and c.kvtop.tokens != c.side.tokens
        ),
        "kvtop: vLLM 0.33 picks its Model Runner V2 wherever Triton is importable — every GPU install "
        "(VllmConfig.use_v2_model_runner) — and V2 keeps async scheduling under PP with pp + 1 batches in "
        "flight (max_in_flight_tokens 24,576 at PP 2, 40,960 at PP 4 for 8,192-token batches); kvtop assumes the "
        "V1 runner's pp batches with async off, so a sliding-window or chunked-local group needs fewer blocks per "
        "request in kvtop and it prints more tokens; num_blocks agree",
    ),
    (
        "V23",
        "kvtop: PP regroups a sliding-window hybrid",
        lambda c: _both_ok(c) and c.pp > 1 and c.kvtop.bytes_per_block != c.side.bytes_per_block,
        "kvtop: under PP vLLM computes the KV cache groups on every stage's specs together and projects them "
        "onto each worker (get_kv_cache_groups, _project_kv_cache_groups_to_worker, vllm/v1/core/"
        "kv_cache_planning.py), so a stage's page holds a different number of layer slots from kvtop's per-stage "
        "grouping (bytes per block differ; the engine's per-stage groups are in the fixture row)",
    ),
    (
        "V24",
        "kvtop: no vLLM attention backend for this KV dtype / block size",
        lambda c: _engine_refuses(c, "No valid attention backend"),
        "kvtop: vLLM finds no attention backend for the combination (CudaPlatform.get_attn_backend_cls, "
        "vllm/platforms/cuda.py: MLA with fp8_e5m2 KV, or DeepSeek sparse MLA with a block size other than 64, "
        "on sm90) and refuses the launch; kvtop plans it",
    ),
    (
        "V25",
        "kvtop: vLLM's hybrid Mamba refused at PP",
        lambda c: _kvtop_refuses(c) and "hybrids at pp 1 only" in c.kvtop.message,
        "kvtop: kvtop models vLLM's hybrid Mamba layout at PP 1 only and refuses PP; vLLM sizes it (each stage's "
        "Mamba and attention layers grouped together, the MIN of num_blocks over the workers): the row's figures",
    ),
    (
        "V20",
        "kvtop: ModelOpt quant_algo at the top of config.json",
        lambda c: _top_level_modelopt_algo(c) and (_both_ok(c) or _engine_refuses(c, "fp8")),
        "kvtop: this config.json carries a ModelOpt quantization_config with quant_algo FP8 at its top level "
        "(no quant_method, not under `quantization`; the file's provenance is uncertain, see SOURCES.md). vLLM "
        "0.33 finds no quant method in it (ModelArchConfigConvertor._normalize_quantization_config reads a "
        "ModelOpt producer's quantization.quant_algo) and, since config.json has a quantization_config, never "
        "reads hf_quant_config.json (get_config, vllm/transformers_utils/config.py): it serves bf16 weights and "
        "a bf16 KV cache. kvtop reads FP8 weights and an FP8 KV cache from it (2× the tokens)",
    ),
    (
        "V15",
        "kvtop: a vLLM flag kvtop does not know",
        _kvtop_refuses_flag,
        "kvtop: vLLM takes `--no-enable-chunked-prefill` and `--no-enable-prefix-caching` "
        "(EngineArgs.add_cli_args, vllm/engine/arg_utils.py) and sizes the pool with them; kvtop refuses "
        "them as unknown flags ('not a flag of vLLM that kvtop knows'), so a launch with either gets no plan. "
        "Chunked prefill off raises max_num_batched_tokens to max(max_model_len, the default) "
        "(EngineArgs._set_default_max_num_seqs_and_batched_tokens_args), which moves a sliding-window or "
        "chunked-local group's tokens in flight; prefix caching off sets a Mamba hybrid's mamba_cache_mode "
        "'none' and its Mamba block size to max_model_len (MambaModelConfig.verify_and_update_config, "
        "vllm/model_executor/models/config.py)",
    ),
    (
        "V16",
        "kvtop: context past max_position_embeddings",
        lambda c: _engine_refuses(c, "is greater than the derived max_model_len"),
        "kvtop: vLLM refuses a --max-model-len above the model's max_position_embeddings "
        "(ModelConfig's max_model_len check, _get_and_verify_max_len: 'User-specified max_model_len (131072) "
        "is greater than the derived max_model_len', unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1); kvtop plans it",
    ),
    (
        "V17",
        "kvtop: float32 config sized in fp32",
        lambda c: (
            _both_ok(c)
            and _stated_dtype(c) == "float32"
            and c.kvtop.bytes_per_block == 2 * (c.side.bytes_per_block or 0)
        ),
        "kvtop: the config states torch_dtype float32 and vLLM serves it in bfloat16 ('Downcasting "
        "torch.float32 to torch.bfloat16', ModelConfig._get_and_verify_dtype, vllm/config/model.py: a "
        "float32 checkpoint dtype becomes bfloat16 under --dtype auto), so its KV cache is bf16; kvtop sizes "
        "the KV (and the weights) in fp32: 2× the bytes per token, half the tokens",
    ),
    (
        "V18",
        "kvtop: fp8_e5m2 KV with an FP8 checkpoint",
        lambda c: _engine_refuses(c, "fp8_e5m2 kv-cache is not supported with fp8 checkpoints"),
        "kvtop: vLLM refuses --kv-cache-dtype fp8_e5m2 for an FP8-quantized checkpoint (Fp8KVCacheMethod / "
        "BaseKVCacheMethod.create_weights, vllm/model_executor/layers/quantization/kv_cache.py: 'fp8_e5m2 "
        "kv-cache is not supported with fp8 checkpoints.'); kvtop plans it",
    ),
    (
        "V14",
        "kvtop: block-FP8 shard not a multiple of 128",
        lambda c: _engine_refuses(c, "is not divisible by weight quantization block_n"),
        "kvtop: vLLM refuses block-FP8 weights whose TP shard breaks the 128 x 128 blocks (Qwen3 MoE "
        "moe_intermediate_size 768 / TP 4 = 192: 'not divisible by weight quantization block_n = 128', "
        "Fp8 create_weights' block-shape check; seen on sm80 in 0.13); kvtop plans it",
    ),
    (
        "V11",
        "kvtop: 0.13 sizes chunked local attention as full",
        lambda c: (
            c.has("Llama-4-Scout") and _both_ok(c) and _logged(c, "latency regression when using chunked")
        ),
        "kvtop: vLLM 0.13 turns the hybrid KV cache manager off for chunked local attention "
        "(VllmConfig.__post_init__, vllm/config/vllm.py: 'There is a latency regression when using "
        "chunked local attention with the hybrid KV cache manager. Disabling it, by default' unless "
        "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1), so Llama-4's 48 layers are one "
        "full-attention group; kvtop with --engine-version 0.13.0 still builds chunked groups",
    ),
    (
        "V12",
        "kvtop: old token print divides by groups, not kinds",
        lambda c: (
            _both_ok(c)
            and c.release < (0, 21)
            and c.kvtop.extra == c.side.extra
            and c.kvtop.tokens != c.side.tokens
            and c.has(*WINDOWED_GROUPS)
        ),
        "kvtop: before PR #41069 vLLM printed num_blocks // len(kv_cache_groups) * block_size "
        "(_report_kv_cache_config, vllm/v1/core/kv_cache_utils.py in 0.13) with every group counted "
        "(Gemma-3: 1 full + 6 sliding-window groups = 7); VllmRules.solve passes len(groups), the "
        "number of group kinds (2), to _logged_tokens",
    ),
    (
        "V13",
        "kvtop: fp8 DSA stored as fp8_ds_mla",
        lambda c: (
            c.has("DeepSeek-V3.2")
            and _both_ok(c)
            and c.raw.get("cache_dtype") == "fp8_ds_mla"
            and c.kvtop.bytes_per_block != c.side.bytes_per_block
        ),
        "kvtop: with --kv-cache-dtype fp8 vLLM stores DeepSeek-V3.2's latent as fp8_ds_mla (656 B: fp8 "
        "NoPE + scales + bf16 RoPE) + 132-B indexer per layer wherever FLASHMLA_SPARSE runs it: 0.13 "
        "rewrites fp8 to fp8_ds_mla (DeepseekV32ForCausalLM.verify_and_update_config, "
        "vllm/model_executor/models/config.py); 0.33 on sm90 picks FLASHMLA_SPARSE ('Using fp8_ds_mla "
        "KV cache format for FLASHMLA_SPARSE backend'), while its sm100 FLASHINFER_MLA_SPARSE keeps "
        "plain fp8 (576 + 132, equal to kvtop); kvtop always uses 576 + 132",
    ),
    (
        "V1",
        "kvtop: vLLM hybrid Mamba refused",
        lambda c: c.has(*MAMBA_HYBRIDS) and _kvtop_refuses(c),
        "kvtop: vLLM's Mamba/linear-attention hybrids are refused (VllmRules.solve raises on a 'state' "
        "pool); vLLM sizes them: Platform._align_hybrid_block_size (vllm/platforms/interface.py) raises "
        "the attention block until its page covers the Mamba state page, then get_kv_cache_groups "
        "(kv_cache_planning.py / kv_cache_utils.py) groups them as vllm.md §4.1/§4.4 say; expected "
        "numbers in this row",
    ),
    (
        "V2",
        "kvtop: checkpoint FP8 KV ignored",
        lambda c: (
            c.has(*CHECKPOINT_FP8_KV) and c.kv_dtype == "auto" and "fp8" in str(c.raw.get("cache_dtype"))
        ),
        "kvtop: --kv-cache-dtype auto keeps bf16 under vLLM, but vLLM takes the checkpoint's "
        "kv_cache_quant_algo FP8 (hf_quant_config.json): EngineArgs.create_engine_config -> "
        "resolve_kv_cache_dtype_string (vllm/utils/torch_utils.py) makes cache_dtype fp8_e4m3, "
        "half the bytes per token (VllmRules.honours_checkpoint_kv_dtype should be True)",
    ),
    (
        "V3",
        "kvtop: MLA block size by backend",
        lambda c: c.has(*MLA) and _both_ok(c) and c.kvtop.block_size == 64 and c.side.block_size != 64,
        "kvtop: vLLM's MLA block size is the attention backend's, not 64 everywhere "
        "(VllmRules.default_page_size): 0.33 picks FLASH_ATTN_MLA below sm100 "
        "(_get_backend_priorities, vllm/platforms/cuda.py; FlashAttnMLABackend.get_supported_kernel_block_sizes "
        "= MultipleOf(16): block 16) and FLASHINFER_MLA on sm100 ('Setting kv cache block size to 32 for "
        "FLASHINFER_MLA'); on sm80 both versions fall to TRITON_MLA (block 16); 0.13's FLASH_ATTN_MLA on "
        "sm90 and its sm100 backend use 64 (equal there)",
    ),
    (
        "V4",
        "kvtop: config sliding window ignored",
        lambda c: c.has(*SWA_IN_CONFIG) and c.kvtop.status == "ok" and c.side.status == "ok",
        "kvtop: the config's sliding_window is honoured by vLLM (every layer a SlidingWindowSpec: "
        "ModelConfig.get_sliding_window -> Attention.get_kv_cache_spec), so a request needs "
        "cdiv(min(window - 1 + in-flight, L), block) + 1 blocks; kvtop sizes these models as full "
        "attention (its ModelSpec has no window for them)",
    ),
    (
        "V5",
        "kvtop: 2 batches in flight (async)",
        lambda c: (
            c.has(*WINDOWED_GROUPS) and c.kvtop.extra == c.side.extra and c.kvtop.tokens != c.side.tokens
        ),
        "kvtop: tokens in flight are max_concurrent_batches x max_num_batched_tokens with "
        "max_concurrent_batches = 2 when async scheduling is on (VllmConfig.max_concurrent_batches, "
        "vllm/config/vllm.py), and vLLM turns async scheduling on by default; kvtop counts 1 batch "
        "unless --async-scheduling is given (VllmRules._concurrent_batches); num_blocks agree",
    ),
    (
        "V6",
        "kvtop: FP8 KV on sm80 refused by vLLM",
        lambda c: _engine_refuses(c, "FP8 KV cache is not supported", "A100"),
        "kvtop: vLLM 0.33 refuses FP8 KV on sm80: the backend it falls to checks the capability itself "
        "('FP8 KV cache is not supported by the Triton attention backend … native FP8 (fp8e4nv) requires "
        "SM89+', also for Triton MLA); FLASH_ATTN (FA2 on sm80) and FLASHINFER decline FP8 KV there. The "
        "check is the backend's, not an import (Triton is absent here); kvtop plans it and should refuse "
        "FP8 KV under vLLM 0.33 below sm89",
    ),
    (
        "V7",
        "kvtop: heads not divisible by TP",
        lambda c: _engine_refuses(c, "must be divisible by tensor parallel size"),
        "kvtop: vLLM refuses a TP that does not divide the attention heads "
        "(ModelConfig.verify_with_parallel_config: 28 heads at TP 8); kvtop plans it",
    ),
    (
        "V8",
        "kvtop: no vLLM backend for it on sm80",
        lambda c: _engine_refuses(c, "No valid attention backend"),
        "kvtop: no vLLM attention backend serves this on sm80 (MLA with FP8 KV, or DeepSeek sparse "
        "MLA: CudaPlatform.get_attn_backend_cls finds none and raises 'No valid attention backend'); "
        "kvtop plans it (should refuse per GPU generation)",
    ),
    (
        "V9",
        "kvtop: weight format needs a newer GPU",
        lambda c: (
            c.side.status != "ok"
            and c.kvtop.status == "ok"
            and any(
                w in c.side.message
                for w in ("Min capability: ", "Minimum capability: ", "No quark compatible")
            )
        ),
        "kvtop: the checkpoint's weight format needs a newer GPU on this vLLM (FP8 schemes: sm89+; "
        "modelopt_fp4 / NVFP4: sm100 in 0.13; the quantization method's get_min_capability or the "
        "quark scheme check refuses); kvtop does not check weight formats against the GPU",
    ),
    (
        "V10",
        "kvtop: no sm80 FP8 MoE kernel for a broken 128 block",
        lambda c: _engine_refuses(c, "No FP8 MoE backend"),
        "kvtop: on sm80 vLLM 0.33 finds no FP8 MoE kernel (select_fp8_moe_backend, "
        "vllm/model_executor/layers/fused_moe/oracle/fp8.py: every backend's is_supported_config "
        "declines) exactly where the block-FP8 expert shard breaks the 128 blocks (Qwen3-235B TP 8: "
        "1536 / 8 = 192; Qwen3-30B TP 4 and 8: 192, 96), the sharding 0.13 refuses outright (V14); "
        "the same with Triton installed (a fresh venv has it), so not a stand-in; kvtop plans it",
    ),
]

# SGLang's fix requests of issue 20 (S1 DSA FP8 layout, S2 Nemotron-H page on sm100, S4 Mamba ratio,
# S5 multimodal reserve, S6/S8 refusals, S7/S9 0.5.6 hybrid SWA) are modelled now
# (docs/engines/sglang.md §4.2.1, §4.4, §4.5, §6.1.1, §6.6.1, §8.4.1); what remains are stand-ins.
def _every_stage_holds_every_layer(c: Case) -> bool:
    stages = c.raw.get("stages") or []
    return c.pp > 1 and len(stages) == c.pp and len({tuple(s["layers"]) for s in stages}) == 1


def _pp_stage0_cell(c: Case) -> bool:
    """PP with unequal stages: the engine's row is stage 0's cell, kvtop's its tightest rank's."""
    return _both_ok(c) and c.pp > 1 and c.kvtop.tokens == c.side.tokens and c.kvtop.bytes_per_block != c.side.bytes_per_block


SGLANG_RULES: list[Rule] = [
    (
        "S20",
        "kvtop: a hybrid-SWA cell under PP holds every stage's layers",
        lambda c: (
            c.pp > 1
            and c.has(*WINDOWED_GROUPS)
            and _both_ok(c)
            and c.kvtop.bytes_per_block >= 3 * c.side.bytes_per_block // 2
        ),
        "kvtop: under PP kvtop's SGLang cell for gpt-oss (full + ratio × SWA) is the unsplit model's (33,177 B at "
        "TP 2 with or without PP 2; 66,355 B at TP 1 × PP 4), while SGLang sizes each stage's pools from that "
        "stage's own layers (16,588 B at PP 2, 16,384 B at PP 4): kvtop gives gpt-oss-120b 1,294,538 tokens at "
        "TP 2 × PP 2 where SGLang gives 2,589,076",
    ),
    (
        "S19",
        "kvtop: SGLang refuses fp8_e5m2 KV for DeepSeek DSA",
        lambda c: _engine_refuses(c, "DSA only supports"),
        "kvtop: SGLang 0.5.23 asserts 'DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype' "
        "(sglang/srt/arg_groups/overrides.py) for DeepSeek-V3.2's sparse attention; kvtop sizes the "
        "fp8_e5m2 pool instead of refusing the launch",
    ),
    (
        "S21",
        "harness: stage 0's cell of a linear-attention hybrid under PP; a 0.02 % token residue unread",
        lambda c: (
            _both_ok(c) and c.pp > 1 and c.kvtop.bytes_per_block != c.side.bytes_per_block
            and "linear_attention" in (_text_config(c).get("layer_types") or [])
            and abs((c.kvtop.tokens or 0) - (c.side.tokens or 0)) * 1000 < (c.side.tokens or 1)
        ),
        "harness: as S15, the row's cell is stage 0's: Qwen3.5-35B-A3B's 40 layers hold full attention at every "
        "4th, so PP 4's stages of 10 hold 2, 3, 2, 3 of them (4,096 B against kvtop's tightest rank's 6,144 B at "
        "2 KV heads × 256 × 2 × 2 B per layer). The token counts differ by less than 0.1 % (3,672,240 kvtop, "
        "3,672,938 SGLang): not read yet (the stages' linear-attention state pools are the suspect)",
    ),
    (
        "S15",
        "harness: stage 0's cell against kvtop's tightest rank's",
        _pp_stage0_cell,
        "harness: the row's cell is stage 0's (SGLang splits the layers unevenly, the last stages the larger: "
        "94 layers over PP 4 are 23, 23, 24, 24), kvtop's is its tightest rank's; the token count, SGLang's own MIN "
        "over the stages, agrees",
    ),
    (
        "S16",
        "kvtop: the checkpoint's FP8 KV read from the other quantization file",
        lambda c: _top_level_modelopt_algo(c) and _both_ok(c) and c.kvtop.bytes_per_block != c.side.bytes_per_block,
        "kvtop: this config.json carries its own ModelOpt quantization_config (quant_algo FP8 at its top level, "
        "kv_cache_scheme FP8; provenance uncertain, see SOURCES.md) beside hf_quant_config.json. SGLang takes "
        "config.json's (FP8 weights: the row's parameter bytes) and finds no kv_cache_quant_algo in it, so its KV "
        "cache stays bf16 (ModelRunner.configure_kv_cache_dtype); kvtop takes hf_quant_config.json's "
        "kv_cache_quant_algo FP8: half the cell, twice the tokens",
    ),
    (
        "S17",
        "kvtop: SGLang's Qwen3-VL serving path on Hopper reserves 1 GiB",
        lambda c: (
            _both_ok(c)
            and "Qwen3VL" in str((_config(c).get("architectures") or [""])[0])
            and c.kvtop.bytes_per_block == c.side.bytes_per_block
            and (c.kvtop.tokens or 0) > (c.side.tokens or 0)
        ),
        "kvtop: on a large Hopper GPU SGLang 0.5.23 serves Qwen3-VL through its profiled path "
        "(_qwen3vl_hopper_serving_overrides, sglang/srt/arg_groups/model_overrides/qwen3_vl.py): the VLM "
        "embedding cache off (it sets SGLANG_VLM_CACHE_SIZE_MB=0 in the process environment: the leak issue 33 "
        "found) and CUDA-IPC feature transport, whose feature cache (SGLANG_MM_FEATURE_CACHE_MB, 1 GiB; 3 GiB at "
        "--max-running-requests ≥ 400) mm_runtime_reservation_gb (mem_cache/kv_cache_configurator.py) takes from "
        "the KV budget; kvtop subtracts the default 100 MiB embedding cache: 39 GiB against 40 GiB − 100 MiB of rest",
    ),
    (
        "S18",
        "kvtop: the model class refuses PP",
        lambda c: c.pp > 1 and _engine_refuses(c, "AssertionError"),
        "kvtop: SGLang's model class refuses pipeline parallelism in its constructor (e.g. Qwen3NextForCausalLM: "
        "`assert self.pp_group.is_first_rank and self.pp_group.is_last_rank`, sglang/srt/models/qwen3_next.py); "
        "kvtop plans it",
    ),
    (
        "S11",
        "kvtop: context past the model's context length",
        lambda c: _engine_refuses(c, "is greater than the derived context_length"),
        "kvtop: SGLang refuses a --context-length above the model's derived context length (ModelConfig, "
        "sglang/srt/configs/model_config.py: 'User-specified context_length (131072) is greater than the derived "
        "context_length', unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1); kvtop plans it",
    ),
    (
        "S12",
        "kvtop: float32 config sized in fp32",
        lambda c: (
            _both_ok(c)
            and _stated_dtype(c) == "float32"
            and c.kvtop.bytes_per_block == 2 * (c.side.bytes_per_block or 0)
        ),
        "kvtop: the config states torch_dtype float32 and SGLang serves it in 16 bits under --dtype auto "
        "(_get_and_verify_dtype, sglang/srt/configs/model_config.py: float32 becomes float16, bfloat16 for Gemma), "
        "so its cell is 2 B an element; kvtop sizes the KV (and the weights) in fp32: 2× the cell, half the tokens",
    ),
    (
        "S13",
        "kvtop: SGLang sizes each PP stage for every layer",
        lambda c: _both_ok(c) and _every_stage_holds_every_layer(c) and c.kvtop.tokens != c.side.tokens,
        "kvtop: under PP SGLang sizes each stage's KV pool for every layer of the model where the model's "
        "top-level class has no start_layer / end_layer (multimodal wrappers such as Qwen2_5_VLForConditionalGeneration, "
        "and MiniMaxM2ForCausalLM): resolve_layer_indices takes getattr(model, 'start_layer', 0) and "
        "getattr(model, 'end_layer', num_layers) (_resolve_pp_layer_range, model_runner_components/layer_setup.py), "
        "while the model itself builds only the stage's layers (its parameter bytes per stage show the split); kvtop "
        "counts the stage's layers, so its cell is smaller and its tokens more",
    ),
    (
        "S14",
        "kvtop: PP on a model SGLang cannot pipeline",
        lambda c: _engine_refuses(c, "Pipeline Parallel is not compatible with this model"),
        "kvtop: SGLang refuses --pp-size > 1 for a model whose forward takes no pp_proxy_tensors "
        "(ModelRunner.__init__: `assert self.support_pp, 'Pipeline Parallel is not compatible with this model.'`); "
        "kvtop plans it",
    ),
    (
        "S3",
        "stand-in: model not built",
        lambda c: _kvtop_refuses(c) and "do not divide" in c.kvtop.message,
        "stand-in: SGLang refuses this when it builds the model (Qwen2Attention: "
        "`assert self.total_num_heads % tp_size == 0`, sglang/srt/models/qwen2.py), which the "
        "harness does not do (model-shell); kvtop's refusal is what a launch does",
    ),
    (
        "S10",
        "stand-in: MoE shard checks not run",
        lambda c: _kvtop_refuses(c) and "block-FP8 MoE" in c.kvtop.message,
        "stand-in: SGLang 0.5.23 refuses a block-FP8 MoE expert shard that breaks the 128-wide blocks in "
        "ModelRunner.__init__ (check_quantized_moe_compatibility) and again when it builds the MoE layers "
        "(Fp8MoEMethod.create_weights, sglang/srt/layers/quantization/fp8.py), neither of which the harness "
        "runs for 0.5.23 (KVCacheConfigurator alone, model-shell); 0.5.6's run reaches the ModelRunner "
        "check, so both refuse there; kvtop's refusal is what a launch does",
    ),
]

VERSION_NOTES: dict[tuple[str, str], list[Rule]] = {}


UNEXPLAINED = ("?", "unexplained", "no rule matches: see the report")


def reading_for(case: Case) -> tuple[str, str, str]:
    """(id, title, the reading) of the first rule that matches the row."""
    rules = COMMON_RULES + (VLLM_RULES if case.engine == "vllm" else SGLANG_RULES)
    for rule_id, title, applies, text in VERSION_NOTES.get((case.engine, case.version), []) + rules:
        try:
            if applies(case):
                return rule_id, title, text
        except (KeyError, TypeError, ValueError):
            continue
    return UNEXPLAINED
