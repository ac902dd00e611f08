"""Launches SGLang sizes but refuses at start (docs/engines/sglang.md §4.6), as `kvtop.domain.refusals` values.

- A `--context-length` above the model's positions: `ModelConfig.__init__` (srt/configs/model_config.py)
  compares it with the derived context length and raises ValueError ("User-specified context_length (…)
  is greater than the derived context_length (…)") unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN reads true,
  or is unset from 0.4.4 to 0.5.0rc2, whose default was "True" (then planned, with a note: long_context.py).
- `--pp-size` > 1 on a class that cannot pipeline (`PP_REFUSED_ERAS`, from 0.5.23's engine-diff runs at PP 2 and
  4): `ModelRunner.__init__` asserts `self.support_pp` ("Pipeline Parallel is not compatible with this model.":
  the class's forward takes no pp_proxy_tensors), or the class's constructor asserts a single stage
  (Qwen3NextForCausalLM, FalconH1ForCausalLM: `assert self.pp_group.is_first_rank and self.pp_group.is_last_rank`).
- A `--kv-cache-dtype` other than auto, bf16/bfloat16 or fp8_e4m3 for a DeepSeek DSA model (DeepSeek-V3.2, GLM-5) on
  CUDA: `_dsa_kv_cache_dtype_default` (0.5.23, srt/arg_groups/overrides.py) asserts "DeepSeek DSA only supports
  bf16/bfloat16 or fp8_e4m3 kv_cache_dtype"; server_args.py of the releases before (from the DSA support, v0.5.3,
  as dsa.py's eras) asserts it as "DeepSeek NSA only supports …" (engine-diff's fp8_e5m2 flag set, reading S19).
- `--tp-size` > 1 on a bitsandbytes checkpoint: `BitsAndBytesModelLoader._load_weights` (0.5.23
  srt/model_loader/loader.py) reads every config.json that names bitsandbytes as pre-quantized and raises
  "Prequant BitsAndBytes models with TP is not supported.Please try with PP." (the quant states cannot follow a
  split weight); the engine-diff runner calls that function, the recon bnb-4bit/-8bit rows refuse at TP 2.
- A MiniCPM with experts (MiniCPM-MoE-8x2B's `num_experts`): 0.5.23's MiniCPMDecoderLayer (srt/models/minicpm.py)
  builds a dense MiniCPMMLP whatever `num_experts` says, while MiniCPMForCausalLM.load_weights maps the checkpoint's
  `experts.N.w1/w2/w3` onto `ws` / `w2s` parameters it never built (`params_dict[name]`: KeyError), so the launch
  fails at weight load; the meta build (registry sweep) sizes the dense model. Releases before not checked.
  XVERSE-MoE-A4.2B alike: its checkpoint names XverseForCausalLM (num_experts 64), which 0.5.23's srt/models/xverse.py
  builds as a dense Llama (XverseMLP) and whose load_weights meets mlp.experts.N.* / mlp.router with no parameter.
- A Bailing omni checkpoint (Ming-Omni: `audio_config`) on BailingMMNativeForConditionalGeneration /
  BailingMM2NativeForConditionalGeneration: 0.5.23's srt/models/bailing_mm.py (the classes' first release; 0.5.6.post2
  has none) raises "Audio is not supported by the Bailing SGLang port; use an image/video-only checkpoint" when
  `config.audio_config` is set (`audio_refusal`; held-out inclusionAI/Ming-Lite-Omni-Preview: the engine refuses it).
- A tower whose encoder SGLang splits whatever its heads (`TOWER_SPLIT.blocks`, "always") at a TP its heads do not
  divide by: Qwen3-Omni's / Qwen3-ASR's audio encoder (20 heads) at TP 8, VisionAttention's `dist_utils.divide`
  asserts (registry sweep, 0.5.23: the Qwen3-Omni-30B-A3B recon config refuses at TP 8 with an AssertionError).
- `--pp-size` > 1 on a class that ties its LM head to the embedding by attribute (`PP_TIED_HEAD_ERAS`,
  GraniteMoeHybridForCausalLM with tie_word_embeddings: 0.5.23 srt/models/granitemoehybrid.py sets
  `self.lm_head.weight = self.model.embed_tokens.weight`, a PPMissingLayer on a later stage: AttributeError).
- A dense MLP whose intermediate width does not divide by TP (`TP_WIDTHS`, `kvtop.domain.tp_widths`): srt/layers/
  linear.py MergedColumnParallelLinear asserts every width divides (bare AssertionError), ColumnParallelLinear
  `divide()`s a plain up projection ("X is not divisible by Y"); on a GPU nothing pads them (update_config.py's
  adjust_config_with_unaligned_cpu_tp pads heads and MLP widths only where the device is the CPU). Read in
  0.5.6.post2 and 0.5.23.
- From 0.5.22, a multimodal encoder whose VisionAttention splits over attention TP but all-reduces over TP, where
  1 < attention TP < TP (attention DP) and no `--mm-enable-dp-encoder` builds it data-parallel: ValueError
  (`vision_tp_reduce`, srt/layers/dp_attention.py reject_attn_tp_shard_with_tp_reduce).
- `--enable-dp-lm-head` at dp > 1 without DP attention: server_args.py asserts "Please enable dp attention when
  setting enable_dp_lm_head." (0.4.6.post5 … 0.5.20; 0.5.23 arg_groups/overrides.py `_dp_lm_head_validation`:
  "--enable-dp-lm-head requires attention DP (--attn-dp-size)."); under DP attention on a class whose head split
  kvtop has not read, refused as not modelled (`vocab_launch.dp_head_refusal`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT
from kvtop.domain.engines.sglang.awq_bits import awq_bits_refusal
from kvtop.domain.engines.sglang.long_context import long_context_refusal
from kvtop.domain.engines.sglang.params_json import params_json_refusal
from kvtop.domain.engines.sglang.vision_tp_reduce import vision_tp_reduce_refusal
from kvtop.domain.engines.sglang.vocab_launch import dp_head_refusal
from kvtop.domain.engines.sglang.weights_built import CHECKED_ERAS
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.model import AttentionKind
from kvtop.domain.refusals import Refusal, dense_only_refusal, tower_blocks_refusal
from kvtop.domain.tp_widths import DivideCheck, TpWidths, mlp_width_refusal

if TYPE_CHECKING:
    from kvtop.domain.ledger import Ledger

_LINEAR = "srt/layers/linear.py"
TP_WIDTHS = TpWidths(
    gated=DivideCheck(
        words="AssertionError: 'assert all(output_size % tp_size == 0 for output_size in output_sizes)'",
        source=f"{_LINEAR} MergedColumnParallelLinear.__init__ (0.5.6.post2, 0.5.23 read; earlier taken alike)",
    ),
    plain=DivideCheck(
        words="'{width} is not divisible by {tp}'",
        source=f"{_LINEAR} ColumnParallelLinear.__init__: divide(output_size, tp_size), srt/distributed/utils.py "
        "ensure_divisibility (0.5.6.post2, 0.5.23 read; earlier taken alike)",
    ),
)


_NO_PP_PROXY = "model_executor/model_runner.py ModelRunner.__init__: assert self.support_pp"
_ONE_STAGE = "the model class's constructor: assert self.pp_group.is_first_rank and self.pp_group.is_last_rank"
PP_REFUSED_ERAS: Eras[dict[str, str]] = Eras((
    Era("", {}, "not checked before 0.5.23: no PP refusal known"),
    Era("0.5.23", {
        "Gemma3ForConditionalGeneration": _NO_PP_PROXY,
        "Llama4ForConditionalGeneration": _NO_PP_PROXY,
        "InternVLChatModel": _NO_PP_PROXY,  # models/internvl.py InternVLChatModel.forward takes no pp_proxy_tensors
        "MiMoForCausalLM": _NO_PP_PROXY,  # models/mimo.py MiMoForCausalLM.forward takes no pp_proxy_tensors
        "Qwen3NextForCausalLM": f"models/qwen3_next.py, {_ONE_STAGE}",
        "FalconH1ForCausalLM": f"models/falcon_h1.py, {_ONE_STAGE}",
    }, "engine-diff runs at PP 2 and 4 (tests/data/engine_diff/sglang-0.5.23.flags.json: the engine refuses)"),
))  # fmt: skip


DSA_KV_DTYPES = ("auto", "bf16", "bfloat16", "fp8_e4m3")  # what the DSA assertion lets through
DSA_KV_ERAS: Eras[tuple[str, str] | None] = Eras((
    Era("", None, "no DSA model support"),
    Era("0.5.3", ("NSA", "server_args.py ServerArgs: assert kv_cache_dtype in ['bfloat16', 'fp8_e4m3'] for DeepSeek NSA"),
        "with the DSA support (dsa.py DSA_KV_DEFAULT_ERAS); wording read in a 0.5.x server_args.py"),
    Era("0.5.23", ("DSA", "srt/arg_groups/overrides.py _dsa_kv_cache_dtype_default"),
        "read at 0.5.23 (engine-diff's fp8_e5m2 flag set: the engine refuses)"),
))  # fmt: skip


def dsa_kv_refusal(ledger: Ledger) -> Refusal | None:
    """A DSA model's KV dtype SGLang asserts against before it builds the model."""
    rule, dtype = DSA_KV_ERAS.at(ledger.version), ledger.settings.kv_cache_dtype
    if rule is None or ledger.model.attention_kind is not AttentionKind.DSA or dtype in DSA_KV_DTYPES:
        return None
    name, source = rule
    return Refusal(
        field="--kv-cache-dtype",
        message=f"SGLang {ledger.version.label} refuses --kv-cache-dtype {dtype} for {ledger.model.architecture} "
        f"('DeepSeek {name} only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype'); use fp8_e4m3 or bfloat16",
        source=source,
    )


DSV4_KV_DTYPES = ("auto", "fp8_e4m3", "bfloat16", "bf16")  # what _deepseek_v4_kv_cache_dtype lets through (0.5.23)


def dsv4_kv_refusal(ledger: Ledger) -> Refusal | None:
    """DeepSeek-V4's KV dtype SGLang asserts against (arg_groups/overrides.py `_deepseek_v4_kv_cache_dtype`, 0.5.23:
    auto becomes fp8_e4m3; anything but fp8_e4m3 or bfloat16 is "not supported")."""
    dtype = ledger.settings.kv_cache_dtype
    if ledger.model.compressed is None or dtype in DSV4_KV_DTYPES or not CHECKED_ERAS.at(ledger.version):
        return None
    return Refusal(
        field="--kv-cache-dtype",
        message=f"SGLang {ledger.version.label} refuses --kv-cache-dtype {dtype} for {ledger.model.architecture} "
        f"('{dtype} is not supported for DeepseekV4ForCausalLM'); use fp8_e4m3 or bfloat16",
        source="srt/arg_groups/overrides.py _deepseek_v4_kv_cache_dtype",
    )


BNB_TP_ERAS: Eras[bool] = Eras((
    Era("", False, "not checked before 0.5.6.post2: no refusal known"),
    Era("0.5.6.post2", True, "read at 0.5.6.post2 and 0.5.23 (between not checked): srt/model_loader/loader.py "
                             "BitsAndBytesModelLoader._load_weights: pre_quant and tp_size > 1 (engine-diff's recon "
                             "bnb rows at TP 2, 0.5.23: the engine refuses)"),
))  # fmt: skip
BNB_TP_SOURCE = "srt/model_loader/loader.py BitsAndBytesModelLoader._load_weights: pre_quant and tp_size > 1"


def bnb_tp_refusal(ledger: Ledger) -> Refusal | None:
    """A pre-quantized bitsandbytes checkpoint split over TP, which SGLang's loader refuses."""
    tp, quant = ledger.settings.tp, ledger.model.quant
    if tp <= 1 or quant.scheme != "bitsandbytes" or quant.ignored or not BNB_TP_ERAS.at(ledger.version):
        return None
    return Refusal(
        field="--tp-size",
        message=f"SGLang {ledger.version.label} cannot split a pre-quantized bitsandbytes checkpoint over TP {tp} "
        "('Prequant BitsAndBytes models with TP is not supported.'); use --pp-size",
        source=BNB_TP_SOURCE,
    )


# class → the engine file that builds it dense and fails to load the experts (`params_dict[name]`: KeyError)
DENSE_ONLY_ERAS: Eras[dict[str, str]] = Eras((
    Era("", {}, "not checked before 0.5.23"),
    Era("0.5.23", {
        "MiniCPMForCausalLM": "srt/models/minicpm.py MiniCPMDecoderLayer (MiniCPMMLP only) / "
                              "MiniCPMForCausalLM.load_weights (experts onto ws/w2s it never built)",
        "XverseForCausalLM": "srt/models/xverse.py XverseDecoderLayer (XverseMLP only) / XverseForCausalLM"
                             ".load_weights (mlp.experts.N.*, mlp.router onto parameters it never built)",
    }, "read in 0.5.23's model files"),
))  # fmt: skip


def experts_refusal(ledger: Ledger) -> Refusal | None:
    """A config with experts on a class SGLang builds dense only (DENSE_ONLY_ERAS): its checkpoint's experts cannot load."""
    return dense_only_refusal(ledger, DENSE_ONLY_ERAS.at(ledger.version))


AUDIO_REFUSED_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "no Bailing multimodal class before 0.5.23"),
    Era("0.5.23", frozenset({"BailingMMNativeForConditionalGeneration", "BailingMM2NativeForConditionalGeneration"}),
        "srt/models/bailing_mm.py BailingMMNativeForConditionalGeneration.__init__ (read in 0.5.23)"),
))  # fmt: skip


def audio_refusal(ledger: Ledger) -> Refusal | None:
    """A checkpoint with an audio encoder on a class whose SGLang port serves images and video only."""
    model = ledger.model
    if not model.audio_tower or model.architecture not in AUDIO_REFUSED_ERAS.at(ledger.version):
        return None
    return Refusal(
        field="audio_config",
        message=f"SGLang {ledger.version.label}'s {model.architecture} refuses a checkpoint with an audio tower "
        "('Audio is not supported by the Bailing SGLang port; use an image/video-only checkpoint')",
        source="srt/models/bailing_mm.py BailingMMNativeForConditionalGeneration.__init__",
    )


# Classes whose constructor ties the LM head to the embedding by attribute (`self.lm_head.weight =
# self.model.embed_tokens.weight` where config.tie_word_embeddings), which a stage other than the first holds as a
# PPMissingLayer: "'PPMissingLayer' object has no attribute 'weight'" at model construction (0.5.23 engine-diff
# runs at PP 2 and 4: granite-4.0-h-small's last stage).
PP_TIED_HEAD_ERAS: Eras[dict[str, str]] = Eras((
    Era("", {}, "not checked before 0.5.23"),
    Era("0.5.23", {"GraniteMoeHybridForCausalLM": "srt/models/granitemoehybrid.py GraniteMoeHybridForCausalLM.__init__"},
        "engine-diff runs at PP 2 and 4 (tests/data/engine_diff/sglang-0.5.23.flags.json: the engine fails)"),
))  # fmt: skip


def pp_tied_head_refusal(ledger: Ledger) -> Refusal | None:
    """A class that ties its LM head to a first-stage-only embedding, launched over PP stages."""
    model = ledger.model
    source = PP_TIED_HEAD_ERAS.at(ledger.version).get(model.architecture)
    if ledger.settings.pp < 2 or source is None or not model.tie_word_embeddings:
        return None
    return Refusal(
        field="--pp-size",
        message=f"SGLang {ledger.version.label} cannot build {model.architecture} with tied embeddings over "
        f"{ledger.settings.pp} stages ('PPMissingLayer' object has no attribute 'weight': a later stage ties its LM "
        "head to the embedding only the first holds); use --tp",
        source=source,
    )


def launch_refusals(ledger: Ledger) -> tuple[Refusal, ...]:
    found = [long_context_refusal(ledger), dsa_kv_refusal(ledger),  # unless the launch allows it (long_context.py)
             dsv4_kv_refusal(ledger), bnb_tp_refusal(ledger), experts_refusal(ledger), audio_refusal(ledger),
             # the split the ledger's weights book read (its release and attention-DP ranks: tower_spec.py)
             tower_blocks_refusal(ledger, TOWER_SPLIT.for_launch(ledger.settings.flags, ledger.version.text,
                                                                 ledger.layout.attn_dp)),
             mlp_width_refusal(ledger, TP_WIDTHS), params_json_refusal(ledger), pp_tied_head_refusal(ledger),
             dp_head_refusal(ledger), vision_tp_reduce_refusal(ledger), awq_bits_refusal(ledger)]  # fmt: skip
    pp, model = ledger.settings.pp, ledger.model
    source = PP_REFUSED_ERAS.at(ledger.version).get(model.architecture)
    if pp > 1 and source is not None:
        found.append(Refusal(
            field="--pp-size",
            message=f"SGLang {ledger.version.label} cannot pipeline {model.architecture} over {pp} stages ("
            + ("'Pipeline Parallel is not compatible with this model.': its forward takes no pp_proxy_tensors"
               if source == _NO_PP_PROXY else "its constructor asserts a single stage")
            + "); use --tp",
            source=source,
        ))  # fmt: skip
    return tuple(r for r in found if r is not None)
