"""The readings of the architecture table (docs/fidelity.md): for one difference between an engine's meta build
and kvtop's books, the first rule (`ARCH_RULES`, by id) that explains it to the byte from the config's shapes and
the engine's code, or "? unexplained".
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from benchmarks.engine_diff.cases import QUANT_SUFFIX, config_path
from benchmarks.engine_diff.quant_readings import (
    sglang_bnb4_states,
    vllm_awq_dense_unloaded,
    vllm_gptq_dense_unloaded,
    vllm_gptq_moe_unloaded,
)
from benchmarks.engine_diff.stage_check import StageCheck, config_value, tp_of, weights_delta

# (id, applies to (architecture, stage check, one difference's text), the reading): the first that applies.
ARCH_RULES: list[tuple[str, Callable[[str, StageCheck, str], bool], str]] = [
    (
        "A8",
        lambda arch, c, text: c.engine == "vllm" and "KV full" in text and _kv_read_elsewhere(c, text),
        "kvtop: a KV dtype the rows read already: DeepSeek-V3.2-NVFP4's checkpoint FP8 KV kept as plain fp8_e4m3 "
        "by vLLM 0.33 on sm90 (576 B a layer a token; kvtop's fp8_ds_mla 656 B, V26), Nemotron-3-Super's FP8 KV "
        "from an hf_quant_config.json without a ModelOpt producer, which vLLM ignores (512 B bf16 at TP 2, 1,024 B at "
        "TP 1; kvtop half of it in fp8, V30)",
    ),
    (
        "A2",
        lambda arch, c, text: (
            c.engine == "vllm" and bool(_quant_method(c.config))
            and -(weights_delta(text) or 0) == 8 * (c.layers[1] - c.layers[0])
        ),
        "kvtop: vLLM gives each attention layer of an FP8 checkpoint four scale scalars (q_scale, k_scale, "
        "v_scale, prob_scale: BaseKVCacheMethod.create_weights, vllm/model_executor/layers/quantization/kv_cache.py), "
        "2 B each in the model dtype; kvtop's weights book does not count them (8 B per layer)",
    ),
    (
        "A9",
        lambda arch, c, text: c.engine == "sglang" and _sglang_kv_scales(arch, c, text),
        "kvtop: SGLang hands an FP8 checkpoint's quant_config to the RadixAttention of DeepseekV2/V3/V32 "
        "(attn_mqa and attn_mha, sglang/srt/models/deepseek_v2.py), MiniMaxM2 (minimax_m2.py) and Llama "
        "(llama.py; a ModelOpt FP8 checkpoint's too; a Quark checkpoint's through QuarkKVCacheMethod, "
        "quantization/quark/quark.py: DeepSeek-V3.2-exp-ptpc), whose BaseKVCacheMethod.create_weights "
        "(sglang/srt/layers/quantization/kv_cache.py) gives each a k_scale and a v_scale, fp32 scalars: 16 B a "
        "DeepSeek layer, 8 B a MiniMax-M2 or Llama layer (qwen3.py passes none: no scales); kvtop's weights book "
        "does not count them",
    ),
    (
        "A13",
        lambda arch, c, text: c.engine == "vllm" and _vllm_index_key_bf16(arch, c, text),
        "kvtop: vLLM 0.33 fuses the DSA indexer's wk with weights_proj into one MergedColumnParallelLinear built "
        "with quant_config=None ('FP8 wk weights are upcasted to BF16 during loading to maintain fusion', "
        "Indexer.__init__, vllm/model_executor/models/deepseek_v2.py): index_head_dim × hidden in bf16 on every "
        "indexed layer, where kvtop's book keeps wk in the checkpoint's FP8 blocks (SGLang's indexer.wk is FP8: "
        "DeepSeek-V3.2, 128 × 7,168 × 2 B − (917,504 B + 224 B of block scales) = 917,280 B a layer; Quark's "
        "per-channel FP8 of DeepSeek-V3.2-exp-ptpc, − (917,504 B + 128 fp32 row scales) = 916,992 B a layer)",
    ),
    (
        "A14",
        lambda arch, c, text: c.engine == "sglang" and _sglang_nvfp4_moe(arch, c, text),
        "kvtop: SGLang's ModelOptNvFp4FusedMoEMethod.create_weights (sglang/srt/layers/quantization/modelopt_quant.py) "
        "builds w13_blockscale_swizzled and w2_blockscale_swizzled beside w13/w2_weight_scale, the same shapes in "
        "float8 (each local expert's FP4 block scales held twice: 3 × moe_intermediate × hidden ÷ 16 B an expert), "
        "and w13/w2_input_scale for every expert of the model, not the rank's ((experts − local) × 12 B a layer); "
        "kvtop's book holds the block scales once and the rank's experts' input scales (Qwen3-235B-A22B-NVFP4 "
        "TP2+EP: 7,096,834,560 B a rank); without EP DeepSeek-V3's shared expert is fused into the routed ones "
        "(num_fused_shared_experts, deepseek_v2.py) and swizzled too; with A9's k/v scales where the class takes them",
    ),
    (
        "A15",
        lambda arch, c, text: c.engine == "vllm" and _vllm_producerless(c, text),
        "kvtop: an hf_quant_config.json without ModelOpt's producer (Nemotron-3-Super-120B-A12B-FP8's) gives vLLM "
        "0.33 no quantization method: it builds every linear in bf16 (as it keeps the KV bf16, A8 / V30), where "
        "kvtop's book reads the file's FP8; the engine's bytes equal kvtop's book of the config without the file "
        "(TP2+EP: 121,088,569,344 B a rank)",
    ),
    (
        "A12",
        lambda arch, c, text: c.engine == "sglang" and _sglang_fused_shared(arch, c, text),
        "kvtop: SGLang fuses Qwen3-Next's shared expert into the routed experts as one more expert where its width "
        "equals moe_intermediate_size (Qwen2MoeSparseMoeBlock num_fused_shared_experts, sglang/srt/models/"
        "qwen2_moe.py; experts.w13_weight [257, 1024, 2048] on each EP rank): whole on every rank under expert "
        "parallel, where kvtop's book splits the shared expert over TP (3 × 512 × 2,048 × 2 B × (1 − 1/TP) a layer)",
    ),
    (
        "A18",
        lambda arch, c, text: c.engine == "vllm" and vllm_gptq_moe_unloaded(c, text),
        "harness: a GPTQ MoE built from config.json alone, never loaded. vLLM 0.33.0 reads which modules are "
        "quantized from the checkpoint's safetensors header (AutoGPTQConfig.maybe_update_config): without one it "
        "quantizes the router gate the checkpoint stores in fp16 (mlp.gate qweight/scales/qzeros, GPTQModel issue "
        "#1625); and the meta build counts what loading drops: where fused Marlin MoE takes the experts (the rank's "
        "expert rows whole groups: TP 1, 2), the w13_bias/w2_bias a checkpoint without them never loads "
        "(AutoGPTQMoEMethod.process_weights_after_loading registers None; MoE WNA16, TP 4 and 8, registers none), and "
        "the symmetric qzeros of each linear module whose kernel is Marlin (marlin.py:172 marlin_make_empty; "
        "Machete keeps them, as kvtop's book does: engines/vllm/gptq_linear.py, whose kernel choice the reading "
        "takes). Exactly those bytes, from the config's shapes: Qwen3-30B-A3B-GPTQ-Int4 at sm90 25,411,584 B at TP 1, "
        "15,974,400 B a rank at TP 2, elsewhere 28,950,528 B and 17,743,872 B; at TP 4 and 8 the gate alone, kvtop "
        "over by 18,628,608 B on sm90, and elsewhere less the Marlin-emptied qzeros, 17,743,872 B and 18,137,088 B",
    ),
    (
        "A20",
        lambda arch, c, text: c.engine == "vllm" and vllm_gptq_dense_unloaded(c, text),
        "harness: a symmetric GPTQ checkpoint built on the meta device, never loaded: vLLM's GPTQ linear method "
        "registers qzeros int32 [input per partition // group, output ÷ 8] on every linear layer (auto_gptq.py:373, "
        ":389-429, v0.33.0), which Marlin empties on loading (marlin.py:172 marlin_make_empty); Machete keeps them and "
        "Exllama replaces them by a tensor of the same shape (exllama.py:72-103), as kvtop's book does "
        "(engines/vllm/gptq_linear.py, whose per-module kernel choice the reading takes: the run's log names no "
        "kernel per module). Exactly the Marlin modules' bytes, from the config's shapes: Qwen1.5-7B-Chat-GPTQ-Int4 "
        "off sm90 25,296,896 B at TP 1, 12,648,448 B a rank at TP 2, 4,915,200 B at TP 4 and 2,457,600 B at TP 8 "
        "(qkv/o/gate_up; down_proj Exllama's), on sm90 at TP 8 gate_up_proj's 1,409,024 B",
    ),
    (
        "A22",
        lambda arch, c, text: c.engine == "vllm" and vllm_awq_dense_unloaded(c, text),
        "harness: an AWQ checkpoint built on the meta device, never loaded: vLLM's AWQ linear method registers the "
        "checkpoint's packed qzeros, int32 [input per partition // group, output ÷ 8] (auto_awq.py:469-475 at "
        "v0.33.0), which Machete, the kernel compute capability 9.0 gets, rewrites on loading as -scales × zeros in "
        "the scales' 16-bit dtype, one per group and output (kernels/linear/mixed_precision/machete.py:87-88), as "
        "kvtop's book does (engines/vllm/awq_linear.py); Marlin, elsewhere, keeps the packed size. Exactly the "
        "Machete modules' 1.5 B a group and output more, from the config's shapes: Qwen2.5-72B-Instruct-AWQ on sm90 "
        "825,753,600 B at TP 1 (case-study2's H200 start at v0.30.0 logged 39.56 GiB against the book's 38.75)",
    ),
    (
        "A19",
        lambda arch, c, text: c.engine == "sglang" and sglang_bnb4_states(c, text),
        "harness: a bitsandbytes 4-bit checkpoint's QuantState is built by SGLang's loader from the checkpoint's "
        "tensors beside each packed weight (_quantized_4bit_generator: QuantState.from_dict(..., device='cuda'), "
        "bitsandbytes functional.py: absmax a block of 64, uint8 under double quantization with an fp32 "
        "nested_absmax per 256, quant_map fp32 [16], nested_quant_map fp32 [256], nested_offset fp32), not a "
        "parameter: a config-only meta build holds the packed uint8 weights alone. Exactly those bytes, from the "
        "config's shapes: recon Llama-3.1-8B-Instruct-bnb-4bit 111,000,448 B at TP 1 (SGLang refuses TP 2)",
    ),
    (
        "A21",
        lambda arch, c, text: c.engine == "vllm" and _vllm_backend_lm_head_bias(arch, c, text),
        "harness: a Transformers-backend class built on the meta device, never loaded: vLLM's CausalMixin builds its "
        "ParallelLMHead without a bias and registers one only when load_weights meets the checkpoint's "
        "lm_head.bias (models/transformers/causal.py:68-85 at v0.33.0, `auto_load_lm_head_bias` → "
        "`_register_bias`: vocab per rank in the model dtype), which the meta build never runs; a served engine "
        "holds it, as kvtop's book does. Exactly the bias, from the config's shapes: phi-1_5 (PhiForCausalLM, on "
        "the backend from v0.32.0; its own phi.py, lm_head bias=True, through v0.30.0) 51,200 × 2 B = 102,400 B at "
        "TP 1, 51,200 B a rank at TP 2",
    ),
    (
        "A3",
        lambda arch, c, text: config_value(c.config, "torch_dtype") == "float32",
        "kvtop: the config states torch_dtype float32 and the engines serve it in bfloat16 (vLLM: 'Downcasting "
        "torch.float32 to torch.bfloat16', ModelConfig._get_and_verify_dtype); kvtop sizes weights and KV in fp32 "
        "(V17)",
    ),
    (
        "A4",
        lambda arch, c, text: isinstance(config_value(c.config, "quantization_config"), dict)
        and "quant_method" not in config_value(c.config, "quantization_config")
        and "quant_algo" in config_value(c.config, "quantization_config"),
        "kvtop: a ModelOpt quant_algo at the top of config.json's quantization_config: vLLM reads no quant method "
        "from it and serves bf16 weights and a bf16 KV cache; kvtop reads FP8 (V20)",
    ),
]


_KV_PAIR = re.compile(r"kvtop \((\d+), ([\d.]+)\), engine \((\d+), ([\d.]+)\)")


def _kv_read_elsewhere(check: StageCheck, text: str) -> bool:
    """The full pool's bytes a token differ as V26 (DSA FP8 layout) or V30 (a producer-less hf_quant_config) say."""
    match = _KV_PAIR.search(text)
    if not match or match.group(1) != match.group(3):
        return False
    pair = (float(match.group(2)), float(match.group(4)))
    return (check.config == "nvidia--DeepSeek-V3.2-NVFP4" and pair == (656.0, 576.0)) or (
        check.config == "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8" and 2 * pair[0] == pair[1]  # fp8 against bf16
    )


# SGLang's classes whose RadixAttention takes the quant_config (A9): RadixAttention modules a layer
SGLANG_KV_SCALED = {"DeepseekV2ForCausalLM": 2, "DeepseekV3ForCausalLM": 2, "DeepseekV32ForCausalLM": 2,
                    "MiniMaxM2ForCausalLM": 1, "LlamaForCausalLM": 1}  # fmt: skip
# quant methods whose KV cache method SGLang's Attention takes (Quark's too: DeepSeek-V3.2-exp-ptpc's meta build
# holds attn_mqa/attn_mha.k_scale and v_scale, QuarkKVCacheMethod, sglang/srt/layers/quantization/quark/quark.py)
SGLANG_KV_SCALING = ("fp8", "modelopt FP8", "quark")


def _quant_method(config: str) -> str:
    """The config's quant_method, or ModelOpt's quant_algo from the hf_quant_config.json beside it."""
    quant = config_value(config, "quantization_config") or {}
    if quant.get("quant_method"):
        return str(quant["quant_method"])
    beside = config_path(config).with_name(f"{config}{QUANT_SUFFIX}")
    if beside.exists():
        return "modelopt " + str(json.loads(beside.read_text()).get("quantization", {}).get("quant_algo"))
    return ""


def _sglang_kv_scales(arch: str, check: StageCheck, text: str) -> bool:
    """kvtop short by exactly 8 B per RadixAttention of the stage's layers (an FP8 checkpoint)."""
    delta = weights_delta(text)
    layers = check.layers[1] - check.layers[0]
    return bool(arch in SGLANG_KV_SCALED and _quant_method(check.config) in SGLANG_KV_SCALING and delta is not None
                and -delta == layers * 8 * SGLANG_KV_SCALED[arch])  # fmt: skip


def _vllm_index_key_bf16(arch: str, check: StageCheck, text: str) -> bool:
    """kvtop short by wk's bf16 bytes less its FP8 block bytes on each layer of the stage (DeepSeek-V3.2's fp8
    checkpoint: 128 × 128 blocks, an fp32 scale each)."""
    quant = config_value(check.config, "quantization_config") or {}
    if arch != "DeepseekV32ForCausalLM" or quant.get("quant_method") not in ("fp8", "quark"):
        return False
    index, hidden = config_value(check.config, "index_head_dim"), config_value(check.config, "hidden_size")
    if quant.get("weight_block_size"):
        rows, cols = quant["weight_block_size"]
        fp8 = index * hidden + -(-index // rows) * -(-hidden // cols) * 4
    elif quant.get("quant_method") == "quark":  # Quark's per-channel FP8 (ptpc): an fp32 scale per output row
        fp8 = index * hidden + index * 4
    else:
        return False
    delta, layers = weights_delta(text), check.layers[1] - check.layers[0]
    return delta is not None and -delta == layers * (index * hidden * 2 - fp8)


def _sglang_nvfp4_moe(arch: str, check: StageCheck, text: str) -> bool:
    """kvtop short by the swizzled copy of each local expert's block scales and the other experts' input scales
    on every MoE layer of the stage (and A9's k/v scales of a class that takes them)."""
    if _quant_method(check.config) != "modelopt NVFP4":
        return False
    experts = config_value(check.config, "n_routed_experts") or config_value(check.config, "num_experts")
    width, hidden = config_value(check.config, "moe_intermediate_size"), config_value(check.config, "hidden_size")
    if not experts or not width:
        return False
    ep = "EP" in check.layout  # experts split over the TP ranks; else each expert's width split over TP
    local, shard = (experts // tp_of(check), width) if ep else (experts, width // tp_of(check))
    first_moe = config_value(check.config, "first_k_dense_replace") or 0
    layers = range(*check.layers)
    moe_layers = sum(1 for layer in layers if layer >= first_moe)
    # without EP SGLang fuses DeepSeek-V3's shared expert into the routed ones (num_fused_shared_experts,
    # deepseek_v2.py): its block scales swizzled as well (the meta-built V3.2 stages show no fusion)
    fused = (config_value(check.config, "n_shared_experts") or 0) if arch == "DeepseekV3ForCausalLM" and not ep else 0
    per_layer = (local + fused) * 3 * shard * hidden // 16 + (experts - local) * 12
    scales = 8 * SGLANG_KV_SCALED.get(arch, 0) * len(layers) if arch != "LlamaForCausalLM" else 0
    delta = weights_delta(text)
    return delta is not None and -delta == moe_layers * per_layer + scales


def _vllm_producerless(check: StageCheck, text: str) -> bool:
    """The engine's stage equals kvtop's weights book of the config read without its producer-less
    hf_quant_config.json (the same layers, first and last stage as the run's)."""
    beside = config_path(check.config).with_name(f"{check.config}{QUANT_SUFFIX}")
    match = re.search(r"engine ([\d,]+) B", text)
    if not beside.exists() or "producer" in json.loads(beside.read_text()) or not match or "weights" not in text:
        return False
    from kvtop.domain.engines.registry import engine_rules
    from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
    from kvtop.domain.layout import ParallelLayout
    from kvtop.domain.model_config import model_from_config
    from kvtop.domain.weights import weights_book

    model = model_from_config(json.loads(config_path(check.config).read_text()), source=check.config)
    pp = int(m.group(1)) if (m := re.search(r"PP(\d+)", check.layout)) else 1
    layout = ParallelLayout(tp=tp_of(check), ep=tp_of(check) if "EP" in check.layout else 1)
    version = ResolvedVersion(text=check.version, source=VersionSource.FLAG)
    parts = engine_rules(check.engine).stage_parts(model, check.stage, pp, version)  # vLLM's unguarded NemotronH
    book = weights_book(model, layout, range(*check.layers), first_stage=check.stage == 0,
                        last_stage=check.stage == pp - 1, parts=parts)  # fmt: skip
    return book.total_bytes == int(match.group(1).replace(",", ""))


# vLLM 0.33.0's Transformers-backend text classes whose checkpoint holds an lm_head bias (transformers'
# PhiForCausalLM: nn.Linear(hidden, vocab, bias=True)), which kvtop's book counts (A21)
BACKEND_LM_HEAD_BIAS = frozenset({"PhiForCausalLM"})
VOCAB_PADDING = 64  # ParallelLMHead's DEFAULT_VOCAB_PADDING_SIZE (layers/vocab_parallel_embedding.py)
HALF_DTYPES = {"float16": 2, "bfloat16": 2, "float32": 4}


def _vllm_backend_lm_head_bias(arch: str, check: StageCheck, text: str) -> bool:
    """kvtop over by exactly the lm_head bias of the last stage's rank: the padded vocab ÷ TP in the model dtype."""
    vocab, dtype = config_value(check.config, "vocab_size"), config_value(check.config, "torch_dtype")
    if arch not in BACKEND_LM_HEAD_BIAS or not vocab or dtype not in HALF_DTYPES:
        return False
    padded = -(-vocab // VOCAB_PADDING) * VOCAB_PADDING
    return weights_delta(text) == padded // tp_of(check) * HALF_DTYPES[dtype]


def _sglang_fused_shared(arch: str, check: StageCheck, text: str) -> bool:
    """kvtop short by the shared expert's other TP shards on each MoE layer of an EP stage."""
    width = config_value(check.config, "shared_expert_intermediate_size")
    if arch != "Qwen3NextForCausalLM" or "EP" not in check.layout or width != config_value(check.config, "moe_intermediate_size"):
        return False
    tp, delta, hidden = tp_of(check), weights_delta(text), config_value(check.config, "hidden_size")
    layers = check.layers[1] - check.layers[0]
    return delta is not None and -delta == layers * 3 * width * hidden * 2 * (tp - 1) // tp


def arch_reading(arch: str, check: StageCheck, text: str) -> str:
    for rule_id, applies, reading in ARCH_RULES:
        if applies(arch, check, text):
            return f"{rule_id} {reading}"
    return "? unexplained"
