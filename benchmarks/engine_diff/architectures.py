"""The architecture table of docs/fidelity.md: the engines' own model classes against kvtop's books.

For every forked row that built the model (each pipeline stage's TP rank 0, on the meta device),
two comparisons per stage:
  weights   the parameter bytes of the engine's model, language part (the top-level children that
            are not a vision/audio tower or projector), against kvtop's weights book for that rank;
  KV        (vLLM) each layer's KV cache spec — its kind and the bytes one token costs in it (page
            bytes ÷ block size; a Mamba layer's state bytes per request) — against kvtop's KV pools
            for that rank (full, sliding-window, DSA index, state), layer counts and bytes per layer.
An architecture (a config's `architectures[0]`) is equal where every compared row is; different
(with the first difference and its reading) where one is not; not modelled where kvtop refuses it.
Where kvtop's weights book holds a tower (its "vision" row) that row is compared with the engine's tower and
projector children; other towers are reported beside (kvtop's book does not hold them: its `not_modelled`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.engine_diff.cases import QUANT_SUFFIX, config_path
from benchmarks.engine_diff.kvtop_side import kvtop_plan
from benchmarks.engine_diff.quant_readings import sglang_bnb4_states, vllm_gptq_moe_unloaded
from benchmarks.engine_diff.table import Row, load_fixtures


def clip(text: str) -> str:
    from benchmarks.engine_diff.render import clip as render_clip

    return render_clip(text, 400)

# Top-level children of an engine's model that hold the language model (the rest: towers, projectors).
# `output`: InternLM2ForCausalLM's LM head (`self.output = ParallelLMHead(...)`, vLLM 0.33.0 / SGLang 0.5.23
# internlm2.py).
# `llm`: vLLM 0.33.0 ovis.py / ovis2_5.py / minicpmv.py build the language model as `self.llm`
# (init_vllm_registered_model) beside the tower (visual_tokenizer / vpm) and the visual embedding table (vte)
# "text": vLLM 0.33.0 moondream3.py builds its language model as the child `text` (under _mark_language_model)
LANGUAGE_CHILDREN = ("model", "lm_head", "language_model", "transformer", "backbone", "embed_tokens", "layers", "norm",
                     "output", "llm", "text")  # fmt: skip
KV_KIND = {  # vLLM spec class -> kvtop pool
    "FullAttentionSpec": "full", "MLAAttentionSpec": "full", "SinkFullAttentionSpec": "full",
    "SlidingWindowSpec": "swa", "ChunkedLocalAttentionSpec": "swa", "SlidingWindowMLASpec": "swa",
    "MambaSpec": "state", "IndexerSpec": "dsa_index",
}  # fmt: skip
# vLLM 0.33 gives DSA's indexer key cache an MLAAttentionSpec of its own (head size 132, uint8), and MiniMax-M3's
# lightning-indexer key cache one too (MiniMaxM3IndexerCache, models/minimax_m3/common/indexer.py: one bf16 head of
# sparse_index_dim, registered as `<layer>.self_attn.attn.index_cache`): its layer name, not its spec class, says
# it is the index (kvtop's dsa_index pool).
INDEXER_CACHE_SUFFIXES = (".indexer.k_cache", ".attn.index_cache")
@dataclass(frozen=True)
class StageCheck:
    """One stage of one run: the engine's figures and kvtop's, and what differs."""

    engine: str
    version: str
    config: str
    layout: str
    differences: tuple[str, ...]
    towers_bytes: int
    stage: int = 0
    layers: tuple[int, int] = (0, 0)  # kvtop's layers of the stage, [start, stop)


def _weights_delta(text: str) -> int | None:
    """kvtop's weights minus the engine's, from a weights difference's text."""
    match = re.search(r"weights: kvtop ([\d,]+) B, engine ([\d,]+) B", text)
    return int(match.group(1).replace(",", "")) - int(match.group(2).replace(",", "")) if match else None


def _config_value(config: str, key: str) -> Any:
    data = json.loads(config_path(config).read_text())
    return data.get(key, (data.get("text_config") or {}).get(key))


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
            and -(_weights_delta(text) or 0) == 8 * (c.layers[1] - c.layers[0])
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
        "#1625); and the meta build counts what loading drops: the linear layers' symmetric qzeros "
        "(MarlinLinearKernel.process_weights_after_loading: marlin_make_empty) and the experts' w13_bias/w2_bias "
        "a checkpoint without them never loads (AutoGPTQMoEMethod.process_weights_after_loading registers None). "
        "Exactly those bytes, from the config's shapes: Qwen3-30B-A3B-GPTQ-Int4 28,950,528 B at TP 1, "
        "17,743,872 B a rank at TP 2",
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
        "A3",
        lambda arch, c, text: _config_value(c.config, "torch_dtype") == "float32",
        "kvtop: the config states torch_dtype float32 and the engines serve it in bfloat16 (vLLM: 'Downcasting "
        "torch.float32 to torch.bfloat16', ModelConfig._get_and_verify_dtype); kvtop sizes weights and KV in fp32 "
        "(V17)",
    ),
    (
        "A4",
        lambda arch, c, text: isinstance(_config_value(c.config, "quantization_config"), dict)
        and "quant_method" not in _config_value(c.config, "quantization_config")
        and "quant_algo" in _config_value(c.config, "quantization_config"),
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
    quant = _config_value(config, "quantization_config") or {}
    if quant.get("quant_method"):
        return str(quant["quant_method"])
    beside = config_path(config).with_name(f"{config}{QUANT_SUFFIX}")
    if beside.exists():
        return "modelopt " + str(json.loads(beside.read_text()).get("quantization", {}).get("quant_algo"))
    return ""


def _tp(check: StageCheck) -> int:
    return int(re.search(r"TP(\d+)", check.layout).group(1))  # type: ignore[union-attr]


def _sglang_kv_scales(arch: str, check: StageCheck, text: str) -> bool:
    """kvtop short by exactly 8 B per RadixAttention of the stage's layers (an FP8 checkpoint)."""
    delta = _weights_delta(text)
    layers = check.layers[1] - check.layers[0]
    return bool(arch in SGLANG_KV_SCALED and _quant_method(check.config) in SGLANG_KV_SCALING and delta is not None
                and -delta == layers * 8 * SGLANG_KV_SCALED[arch])  # fmt: skip


def _vllm_index_key_bf16(arch: str, check: StageCheck, text: str) -> bool:
    """kvtop short by wk's bf16 bytes less its FP8 block bytes on each layer of the stage (DeepSeek-V3.2's fp8
    checkpoint: 128 × 128 blocks, an fp32 scale each)."""
    quant = _config_value(check.config, "quantization_config") or {}
    if arch != "DeepseekV32ForCausalLM" or quant.get("quant_method") not in ("fp8", "quark"):
        return False
    index, hidden = _config_value(check.config, "index_head_dim"), _config_value(check.config, "hidden_size")
    if quant.get("weight_block_size"):
        rows, cols = quant["weight_block_size"]
        fp8 = index * hidden + -(-index // rows) * -(-hidden // cols) * 4
    elif quant.get("quant_method") == "quark":  # Quark's per-channel FP8 (ptpc): an fp32 scale per output row
        fp8 = index * hidden + index * 4
    else:
        return False
    delta, layers = _weights_delta(text), check.layers[1] - check.layers[0]
    return delta is not None and -delta == layers * (index * hidden * 2 - fp8)


def _sglang_nvfp4_moe(arch: str, check: StageCheck, text: str) -> bool:
    """kvtop short by the swizzled copy of each local expert's block scales and the other experts' input scales
    on every MoE layer of the stage (and A9's k/v scales of a class that takes them)."""
    if _quant_method(check.config) != "modelopt NVFP4":
        return False
    experts = _config_value(check.config, "n_routed_experts") or _config_value(check.config, "num_experts")
    width, hidden = _config_value(check.config, "moe_intermediate_size"), _config_value(check.config, "hidden_size")
    if not experts or not width:
        return False
    ep = "EP" in check.layout  # experts split over the TP ranks; else each expert's width split over TP
    local, shard = (experts // _tp(check), width) if ep else (experts, width // _tp(check))
    first_moe = _config_value(check.config, "first_k_dense_replace") or 0
    layers = range(*check.layers)
    moe_layers = sum(1 for layer in layers if layer >= first_moe)
    # without EP SGLang fuses DeepSeek-V3's shared expert into the routed ones (num_fused_shared_experts,
    # deepseek_v2.py): its block scales swizzled as well (the meta-built V3.2 stages show no fusion)
    fused = (_config_value(check.config, "n_shared_experts") or 0) if arch == "DeepseekV3ForCausalLM" and not ep else 0
    per_layer = (local + fused) * 3 * shard * hidden // 16 + (experts - local) * 12
    scales = 8 * SGLANG_KV_SCALED.get(arch, 0) * len(layers) if arch != "LlamaForCausalLM" else 0
    delta = _weights_delta(text)
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
    layout = ParallelLayout(tp=_tp(check), ep=_tp(check) if "EP" in check.layout else 1)
    version = ResolvedVersion(text=check.version, source=VersionSource.FLAG)
    parts = engine_rules(check.engine).stage_parts(model, check.stage, pp, version)  # vLLM's unguarded NemotronH
    book = weights_book(model, layout, range(*check.layers), first_stage=check.stage == 0,
                        last_stage=check.stage == pp - 1, parts=parts)  # fmt: skip
    return book.total_bytes == int(match.group(1).replace(",", ""))


def _sglang_fused_shared(arch: str, check: StageCheck, text: str) -> bool:
    """kvtop short by the shared expert's other TP shards on each MoE layer of an EP stage."""
    width = _config_value(check.config, "shared_expert_intermediate_size")
    if arch != "Qwen3NextForCausalLM" or "EP" not in check.layout or width != _config_value(check.config, "moe_intermediate_size"):
        return False
    tp, delta, hidden = _tp(check), _weights_delta(text), _config_value(check.config, "hidden_size")
    layers = check.layers[1] - check.layers[0]
    return delta is not None and -delta == layers * 3 * width * hidden * 2 * (tp - 1) // tp


def arch_reading(arch: str, check: StageCheck, text: str) -> str:
    for rule_id, applies, reading in ARCH_RULES:
        if applies(arch, check, text):
            return f"{rule_id} {reading}"
    return "? unexplained"


def architecture(config: str) -> str:
    data = json.loads(config_path(config).read_text())
    names = data.get("architectures") or [data.get("model_type", "?")]
    return str(names[0])


def _is_language(child: str) -> bool:
    """A top-level child of the language model; BLIP-2's `language_projection` (the Q-Former's projector into
    the text width, vLLM blip2.py) is the multimodal stack's, not the language model's."""
    if child.endswith(".text_model"):  # Idefics3 / SmolVLM's model.text_model (vllm_runner._param_bytes)
        return True
    if child.startswith("thinker."):  # SGLang's Qwen3-Omni thinker.model / thinker.lm_head (sglang_standins)
        return _is_language(child.split(".", 1)[1])
    return child in LANGUAGE_CHILDREN or ("language" in child and not child.endswith("_projection"))


def _language_bytes(param_bytes: dict[str, int]) -> tuple[int, int]:
    language = sum(b for child, b in param_bytes.items() if _is_language(child))
    return language, sum(param_bytes.values()) - language


def _engine_kv(layer_specs: list[dict[str, Any]]) -> dict[str, tuple[int, float]]:
    """kvtop pool name -> (layers, bytes per layer per token; per request for state)."""
    out: dict[str, tuple[int, float]] = {}
    for spec in layer_specs:
        kind = KV_KIND.get(spec["kind"].split("[")[0], spec["kind"])
        if str(spec.get("first", "")).endswith(INDEXER_CACHE_SUFFIXES):
            kind = "dsa_index"
        per = spec["page_size_bytes"] if kind == "state" else spec["page_size_bytes"] / spec["block_size"]
        layers, seen = out.get(kind, (0, per))
        out[kind] = (layers + spec["layers"], seen if seen == per else -1.0)  # -1: layers of one kind differ
    return out


def _dsv4_roles(layer_specs: list[dict[str, Any]]) -> dict[str, int]:
    """DeepSeek-V4's specs on vLLM by role (the layer's module after `attn`: swa_cache, compressor.state_cache,
    indexer.k_cache, ...; the compressed latent itself is `attn`), type, tokens a block and page bytes -> layers:
    its kinds mix page sizes and blocks, which _engine_kv's pool-by-kind view folds together."""
    out: dict[str, int] = {}
    for spec in layer_specs:
        role = str(spec["first"]).split(".attn", 1)[1].lstrip(".") or "attn"
        key = f"{role} {spec['kind']} block {spec['block_size']} page {spec['page_size_bytes']}"
        out[key] = out.get(key, 0) + spec["layers"]
    return out


def _kvtop_kv(pools: list[dict[str, Any]], engine: str, plan: dict[str, Any]) -> dict[str, tuple[int, float]]:
    """kvtop's pools of one rank in the engine's terms (pool name -> layers, bytes per layer per token; per
    request for state). For vLLM, as kvtop's vLLM budget lays them out: a config whose sliding_window covers
    every layer (no sliding pool of its own) is one windowed group (engines/vllm/budget.py, vllm.md §3.4), so
    the pool kvtop names full compares with the engine's SlidingWindowSpec layers; a hybrid's Mamba page is
    kvtop's attention page of one layer, block × bytes per layer per token (HybridBlocks.page_bytes,
    engines/vllm/hybrid.py, vllm.md §4.4), as vLLM's MambaSpec.page_size_bytes is the state padded to it."""
    by_name = {pool["name"]: pool for pool in pools}
    out: dict[str, tuple[int, float]] = {}
    for name, pool in by_name.items():
        if name == "state":
            per_request = pool["bytes_per_request"] / max(pool["layers"], 1)
            full = by_name.get("full")
            if engine == "vllm" and full is not None and plan.get("block_size"):
                per_request = float(plan["block_size"] * int(full["bytes_per_layer_token"]))
            out["state"] = (pool["layers"], per_request)
        elif name == "full" and engine == "vllm" and plan.get("config_sliding_window") and "swa" not in by_name:
            out["swa"] = (pool["layers"], pool["bytes_per_layer_token"])
        else:
            out[name] = (pool["layers"], pool["bytes_per_layer_token"])
    return out


def stage_checks(result: dict[str, Any], engine: str, version: str, plan: dict[str, Any]) -> list[StageCheck]:
    """Each stage of one engine run against kvtop's rank of the same stage."""
    layout = f"TP{result['tp']}" + (f"×PP{result.get('pp', 1)}" if result.get("pp", 1) > 1 else "")
    if result.get("variant", "default") == "ep":
        layout += "+EP"
    checks = []
    for index, stage in enumerate(result.get("stages") or []):
        ours = next((s for s in plan["stages"] if s["pp_rank"] == index), None)
        language, towers = _language_bytes(stage["param_bytes"])
        differences: list[str] = []
        if ours is None:
            differences.append(f"stage {index}: kvtop has no rank for it")
        else:
            vision = int(ours.get("vision_bytes", 0))  # kvtop's tower row, compared with the engine's towers
            if ours["weights_bytes"] - vision != language:
                differences.append(
                    f"stage {index} weights: kvtop {ours['weights_bytes'] - vision:,} B, engine {language:,} B "
                    f"({ours['weights_bytes'] - vision - language:+,})"
                )
            if vision and vision != towers:
                differences.append(f"stage {index} towers: kvtop {vision:,} B, engine {towers:,} B ({vision - towers:+,})")
            if vision:
                towers = 0  # held in kvtop's book: not reported beside
            if "layer_specs" in stage and plan.get("dsv4_specs"):  # DeepSeek-V4 on vLLM: spec by spec
                roles, mine = _dsv4_roles(stage["layer_specs"]), plan["dsv4_specs"]
                for key in sorted(set(roles) | set(mine)):
                    if roles.get(key) != mine.get(key):
                        differences.append(f"stage {index} KV {key} (layers): kvtop {mine.get(key)}, engine {roles.get(key)}")
            elif "layer_specs" in stage:
                theirs, mine = _engine_kv(stage["layer_specs"]), _kvtop_kv(ours["kv_pools"], engine, plan)
                for kind in sorted(set(theirs) | set(mine)):
                    if theirs.get(kind) != mine.get(kind):
                        differences.append(
                            f"stage {index} KV {kind} (layers, B/layer/token): kvtop {mine.get(kind)}, engine {theirs.get(kind)}"
                        )
        span = (int(ours["layers"][0]), int(ours["layers"][1])) if ours is not None else (0, 0)
        checks.append(StageCheck(engine, version, result["config"], layout, tuple(differences), towers, index, span))
    return checks


def architecture_rows(table: list[Row]) -> dict[str, dict[str, Any]]:
    """architecture -> {configs, layouts, equal, different (first differences), not modelled, towers}."""
    out: dict[str, dict[str, Any]] = {}
    for fixture in load_fixtures():
        engine, version = fixture["engine"], fixture["version"]
        for result in fixture["results"]:
            if result.get("kv_dtype") not in ("auto",) or result.get("variant", "default") not in ("default", "pp2", "pp4", "ep"):
                continue
            if result.get("gpu") != "sm90":
                continue
            entry = out.setdefault(
                architecture(result["config"]),
                {"configs": set(), "layouts": set(), "equal": 0, "different": [], "refused": [], "towers": 0,
                 "engines": set(), "not_run": 0, "engine_refused": 0},
            )  # fmt: skip
            entry["configs"].add(result["config"])
            if result["status"] != "ok" or "stages" not in result:
                entry["engine_refused" if result["status"] == "refused" else "not_run"] += 1
                continue
            plan = kvtop_plan(engine, version, result)
            if plan["status"] != "ok":
                entry["refused"].append(plan["message"])
                continue
            for check in stage_checks(result, engine, version, plan):
                entry["layouts"].add(check.layout)
                entry["engines"].add(f"{engine} {version}")
                entry["towers"] = max(entry["towers"], check.towers_bytes)
                if check.differences:
                    entry["different"].append(check)
                else:
                    entry["equal"] += 1
    return out


def render_architectures(table: list[Row]) -> list[str]:
    lines = [
        "",
        "## Architectures: the engines' own model classes against kvtop's books",
        "",
        "Each stage of each run built on meta (sm90, KV auto, the default grid's TP sizes and the PP/EP flag sets):",
        "the language model's parameter bytes per rank against kvtop's weights book, and (vLLM) each layer's KV",
        "cache spec against kvtop's KV pools; where kvtop's weights book holds the vision tower (its vision row),",
        "that row against the engine's tower and projector bytes. Towers: the largest vision/audio tower and",
        "projector bytes of one rank where kvtop's book does not hold them (its `not_modelled`). Readings: the",
        "A-rules below.",
        "",
        "| architecture | configs | engines | layouts | stages equal | stages different (by reading) | verdict | first difference |",
        "|---|---|---|---|---|---|---|---|",
    ]
    used: dict[str, str] = {}
    for arch, entry in sorted(architecture_rows(table).items()):
        different: list[StageCheck] = entry["different"]
        by_reading: dict[str, int] = {}
        for check in different:
            for rule in {arch_reading(arch, check, text) for text in check.differences}:
                rule_id, _, text = rule.partition(" ")
                used[rule_id] = text
                by_reading[rule_id] = by_reading.get(rule_id, 0) + 1
        if entry["equal"] == 0 and not different:
            if entry["refused"]:
                verdict, detail = "not modelled", "kvtop refuses: " + entry["refused"][0]
            elif entry["engine_refused"]:
                verdict, detail = "engine refuses", "every engine run of it refused the launch (see the rows)"
            else:
                verdict, detail = "not run", "no engine run built it (see the rows: harness errors)"
        else:
            verdict = "different" if different else "equal"
            detail = ""
            if different:
                first = different[0]
                detail = f"{first.engine} {first.version} {first.config} {first.layout}: {first.differences[0]}"
        if entry["towers"]:
            detail = (detail + "; " if detail else "") + f"towers {entry['towers']:,} B not in kvtop's book"
        readings = ", ".join(f"{rule_id} {n}" for rule_id, n in sorted(by_reading.items())) or "0"
        lines.append(
            f"| {arch} | {', '.join(sorted(entry['configs']))} | {', '.join(sorted(entry['engines'])) or '–'} | "
            f"{', '.join(sorted(entry['layouts'])) or '–'} | {entry['equal']} | {readings} | {verdict} | "
            f"{clip(detail)} |"
        )
    lines += ["", "| id | reading of an architecture difference |", "|---|---|"]
    lines += [f"| {rule_id} | {text} |" for rule_id, text in sorted(used.items())]
    return lines
