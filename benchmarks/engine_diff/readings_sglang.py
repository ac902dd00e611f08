"""SGLang's reading rules: each names the SGLang code that decides the difference (see readings.py)."""

from __future__ import annotations

from benchmarks.engine_diff.readings_base import (
    Rule,
    both_ok,
    engine_refuses,
    kvtop_refuses,
    stated_dtype,
    top_level_modelopt_algo,
)

# SGLang's fix requests of issue 20 (S1 DSA FP8 layout, S2 Nemotron-H page on sm100, S4 Mamba ratio,
# S5 multimodal reserve, S6/S8 refusals, S7/S9 0.5.6 hybrid SWA) are modelled now
# (docs/engines/sglang.md §4.2.1, §4.4, §4.5, §6.1.1, §6.6.1, §8.4.1); what remains are stand-ins. So is
# issue 33's S24 (the DSA KV default before the checkpoint's FP8, §10) and S23 (the DSA page over --page-size, §6.6),
# and issue 26's S13 (Nemotron-H's whole-model attention cell under PP), S17 (Qwen3-VL's large-Hopper path) and
# S20 (a hybrid-SWA cell of the stage's own layers) (engines/sglang/pp_layers.py, multimodal.py).


SGLANG_RULES: list[Rule] = [
    (
        "S16",
        "kvtop: the checkpoint's FP8 KV read from the other quantization file",
        lambda c: (
            top_level_modelopt_algo(c) and both_ok(c) and c.kvtop.bytes_per_block != c.side.bytes_per_block
        ),
        "kvtop: this config.json carries its own ModelOpt quantization_config (quant_algo FP8 at its top level, "
        "kv_cache_scheme FP8; provenance uncertain, see SOURCES.md) beside hf_quant_config.json. SGLang takes "
        "config.json's (FP8 weights: the row's parameter bytes) and finds no kv_cache_quant_algo in it, so its KV "
        "cache stays bf16 (ModelRunner.configure_kv_cache_dtype); kvtop takes hf_quant_config.json's "
        "kv_cache_quant_algo FP8: half the cell, twice the tokens",
    ),
    (
        "S11",
        "kvtop: context past the model's context length",
        lambda c: engine_refuses(c, "is greater than the derived context_length"),
        "kvtop: SGLang refuses a --context-length above the model's derived context length (ModelConfig, "
        "sglang/srt/configs/model_config.py: 'User-specified context_length (131072) is greater than the derived "
        "context_length', unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1); kvtop plans it",
    ),
    (
        "S12",
        "kvtop: float32 config sized in fp32",
        lambda c: (
            both_ok(c)
            and stated_dtype(c) == "float32"
            and c.kvtop.bytes_per_block == 2 * (c.side.bytes_per_block or 0)
        ),
        "kvtop: the config states torch_dtype float32 and SGLang serves it in 16 bits under --dtype auto "
        "(_get_and_verify_dtype, sglang/srt/configs/model_config.py: float32 becomes float16, bfloat16 for Gemma), "
        "so its cell is 2 B an element; kvtop sizes the KV (and the weights) in fp32: 2× the cell, half the tokens",
    ),
    (
        "S3",
        "stand-in: model not built",
        lambda c: kvtop_refuses(c) and "do not divide" in c.kvtop.message,
        "stand-in: SGLang refuses this when it builds the model (Qwen2Attention: "
        "`assert self.total_num_heads % tp_size == 0`, sglang/srt/models/qwen2.py), which the "
        "harness does not do (model-shell); kvtop's refusal is what a launch does",
    ),
    (
        "S25",
        "stand-in: MXFP4 upcast not run",
        lambda c: kvtop_refuses(c) and "upcasts gpt-oss's MXFP4 experts" in c.kvtop.message,
        "stand-in: SGLang 0.5.23 takes triton_kernels for gpt-oss's MXFP4 experts only at EP 1 (gpt_oss.py:102-107); "
        "at EP > 1 on SM 9.x its auto MoE runner upcasts the experts to bf16 when the weights load "
        "(Mxfp4MoEMethod.process_weights_after_loading, sglang/srt/layers/quantization/mxfp4.py), which the "
        "harness does not run (KVCacheConfigurator alone on meta, model-shell); kvtop refuses what it does not "
        "model (engines/sglang/mxfp4_held.py), which is what a launch's memory calls for",
    ),
    (
        "S10",
        "stand-in: MoE shard checks not run",
        lambda c: kvtop_refuses(c) and "block-FP8 MoE" in c.kvtop.message,
        "stand-in: SGLang 0.5.23 refuses a block-FP8 MoE expert shard that breaks the 128-wide blocks in "
        "ModelRunner.__init__ (check_quantized_moe_compatibility) and again when it builds the MoE layers "
        "(Fp8MoEMethod.create_weights, sglang/srt/layers/quantization/fp8.py), neither of which the harness "
        "runs for 0.5.23 (KVCacheConfigurator alone, model-shell); 0.5.6's run reaches the ModelRunner "
        "check, so both refuse there; kvtop's refusal is what a launch does",
    ),
]
