"""vLLM's reading rules: each names the vLLM code that decides the difference (see readings.py)."""

from __future__ import annotations

from benchmarks.engine_diff.readings_base import (
    CHECKPOINT_FP8_KV,
    MAMBA_HYBRIDS,
    MLA,
    SWA_IN_CONFIG,
    WINDOWED_GROUPS,
    Rule,
    both_ok,
    config_json,
    engine_refuses,
    kvtop_refuses,
    logged,
    stated_dtype,
)

VLLM_RULES: list[Rule] = [
    (
        "V21",
        "kvtop: a class-default sliding window vLLM does not use",
        lambda c: (
            both_ok(c)
            and c.kvtop.extra == c.side.extra
            and c.kvtop.tokens != c.side.tokens
            and "sliding_window" not in (config_json(c).get("text_config") or config_json(c))
            and all(g.get("kind") == "FullAttentionSpec" for g in c.raw.get("groups") or [{}])
        ),
        "kvtop: the config leaves sliding_window out and kvtop takes transformers' class default (4096 for "
        "qwen3_vl's text config: 'the config leaves out sliding_window=4096'), so its token figure divides the "
        "blocks by a windowed request's block count; vLLM builds full attention only (every layer a "
        "FullAttentionSpec: use_sliding_window is false) and prints num_blocks × block_size (get_kv_cache_capacity, "
        "vllm/v1/core/kv_cache_utils.py); num_blocks agree",
    ),
    (
        "V16",
        "kvtop: context past max_position_embeddings",
        lambda c: engine_refuses(c, "is greater than the derived max_model_len"),
        "kvtop: vLLM refuses a --max-model-len above the model's max_position_embeddings "
        "(ModelConfig's max_model_len check, _get_and_verify_max_len: 'User-specified max_model_len (131072) "
        "is greater than the derived max_model_len', unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1); kvtop plans it",
    ),
    (
        "V17",
        "kvtop: float32 config sized in fp32",
        lambda c: (
            both_ok(c)
            and stated_dtype(c) == "float32"
            and c.kvtop.bytes_per_block == 2 * (c.side.bytes_per_block or 0)
        ),
        "kvtop: the config states torch_dtype float32 and vLLM serves it in bfloat16 ('Downcasting "
        "torch.float32 to torch.bfloat16', ModelConfig._get_and_verify_dtype, vllm/config/model.py: a "
        "float32 checkpoint dtype becomes bfloat16 under --dtype auto), so its KV cache is bf16; kvtop sizes "
        "the KV (and the weights) in fp32: 2× the bytes per token, half the tokens",
    ),
    (
        "V14",
        "kvtop: block-FP8 shard not a multiple of 128",
        lambda c: engine_refuses(c, "is not divisible by weight quantization block_n"),
        "kvtop: vLLM refuses block-FP8 weights whose TP shard breaks the 128 x 128 blocks (Qwen3 MoE "
        "moe_intermediate_size 768 / TP 4 = 192: 'not divisible by weight quantization block_n = 128', "
        "Fp8 create_weights' block-shape check; seen on sm80 in 0.13); kvtop plans it",
    ),
    (
        "V11",
        "kvtop: 0.13 sizes chunked local attention as full",
        lambda c: (
            c.has("Llama-4-Scout") and both_ok(c) and logged(c, "latency regression when using chunked")
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
            both_ok(c)
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
            and both_ok(c)
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
        lambda c: c.has(*MAMBA_HYBRIDS) and kvtop_refuses(c),
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
        lambda c: c.has(*MLA) and both_ok(c) and c.kvtop.block_size == 64 and c.side.block_size != 64,
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
        lambda c: engine_refuses(c, "FP8 KV cache is not supported", "A100"),
        "kvtop: vLLM 0.33 refuses FP8 KV on sm80: the backend it falls to checks the capability itself "
        "('FP8 KV cache is not supported by the Triton attention backend … native FP8 (fp8e4nv) requires "
        "SM89+', also for Triton MLA); FLASH_ATTN (FA2 on sm80) and FLASHINFER decline FP8 KV there. The "
        "check is the backend's, not an import (Triton is absent here); kvtop plans it and should refuse "
        "FP8 KV under vLLM 0.33 below sm89",
    ),
    (
        "V7",
        "kvtop: heads not divisible by TP",
        lambda c: engine_refuses(c, "must be divisible by tensor parallel size"),
        "kvtop: vLLM refuses a TP that does not divide the attention heads "
        "(ModelConfig.verify_with_parallel_config: 28 heads at TP 8); kvtop plans it",
    ),
    (
        "V8",
        "kvtop: no vLLM backend for it on sm80",
        lambda c: engine_refuses(c, "No valid attention backend"),
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
        lambda c: engine_refuses(c, "No FP8 MoE backend"),
        "kvtop: on sm80 vLLM 0.33 finds no FP8 MoE kernel (select_fp8_moe_backend, "
        "vllm/model_executor/layers/fused_moe/oracle/fp8.py: every backend's is_supported_config "
        "declines) exactly where the block-FP8 expert shard breaks the 128 blocks (Qwen3-235B TP 8: "
        "1536 / 8 = 192; Qwen3-30B TP 4 and 8: 192, 96), the sharding 0.13 refuses outright (V14); "
        "the same with Triton installed (a fresh venv has it), so not a stand-in; kvtop plans it",
    ),
]
