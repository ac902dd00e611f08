"""Parameters one SGLang class builds beside the checkpoint's tensors, or wider than it stores them
(docs/engines/sglang.md §20).

FalconH1ForCausalLM (models/falcon_h1.py, read in the 0.5.6.post2 and 0.5.23 wheels; checked on 0.5.23's meta
build, docs/fidelity_registry.md's held-out `tiiuae--Falcon-H1-0.5B`):
- each decoder layer builds `q_norm` and `k_norm`, RMSNorm(head_dim) in the model dtype, that the checkpoint has
  no tensor for and the forward never calls (vLLM's class has none);
- `self.lm_head = self.lm_head.float()` after building the head: the head (or, tied, the embedding it is) is
  held in fp32, 4 B a parameter, where the book counts the model dtype. A head the checkpoint's quant config
  claims is left to the book (no such checkpoint checked).
Releases before 0.5.6.post2 are not read, so the book's count stands for them (`CLASS_RULE_ERAS`).

BailingMoeV2_5ForCausalLM (models/bailing_moe_linear.py, read in 0.5.23, its first release) builds its untied LM
head with params_dtype float32: 4 B a parameter where the book counts the model dtype (`_fp32_head`; Ring-V2.5's
class defaults: 157,184 × 2,048 × 2 B = 643,825,664 B more at TP 1, the 0.5.23 meta build's).

Lfm2ForCausalLM (models/lfm2.py, read in 0.5.23; 0.5.6.post2 has no LFM2 class) always builds its own `lm_head`
(ParallelLMHead, vocab × hidden ÷ TP) and, for a tied checkpoint, copies embed_tokens into it at load
(`load_weights`: "Handle tied lm_head weight"): a tied config holds the matrix twice, where the book counts one.
lfm2_moe.py's Lfm2MoeForCausalLM does the same; Lfm2VlForConditionalGeneration (lfm2_vl.py) builds its language
model as Lfm2ForCausalLM (`_own_head_when_tied`;
transformers' default LFM2 config, tied: 65,536 × 2,560 × 2 B = 335,544,320 B more, the 0.5.23 meta build's).

Gemma4UnifiedForConditionalGeneration (models/gemma4_unified.py, read in 0.5.23): SGLang reads a `gemma4_unified`
config through `_Gemma4UnifiedConfigAlias`, transformers' Gemma4Config (utils/hf_transformers/common.py), so its
text config is a Gemma4TextConfig whose defaults fill what the config leaves out: hidden_size_per_layer_input 256,
vocab_size_per_layer_input 262,144 (transformers' own Gemma4UnifiedTextConfig has no per-layer input at all).
gemma4_causal.py's Gemma4TextModel then builds the per-layer embeddings (`getattr(config,
"hidden_size_per_layer_input", None) or 0`): a config that does not state the width gets the default's
(`_defaulted_per_layer_input`, the book of the model with them less the book without; `PLE_DEFAULT_ERAS`).

MuseGlimmerForCausalLM / MuseGlimmerForConditionalGeneration (models/muse_glimmer.py, read in 0.5.23) pad the LM
head's vocabulary to 128 rows (`padding_size=128`) where the book pads to 64 (`_head_padded_to_128`).

LlavaLlamaForCausalLM, LlavaQwenForCausalLM, LlavaMistralForCausalLM (models/llava.py) and LlavaVidForCausalLM
(models/llavavid.py), read in 0.5.6.post2 and 0.5.23: where the config's `mm_patch_merge_type` holds "unpad" each
sets `language_model.model.image_newline = nn.Parameter(torch.empty(hidden_size, dtype=torch.float16))` after
building the language model, on every rank, whole (`_image_newline`; meta-built on 0.5.23:
liuhaotian/llava-v1.6-vicuna-7b 4,096 × 2 B = 8,192 B, lmms-lab/llava-onevision-qwen2-7b-ov 3,584 × 2 B at TP 1
and TP 2).

HunYuanDenseV1ForCausalLM (models/hunyuan.py, read in 0.5.6.post2 and 0.5.23) builds query_layernorm /
key_layernorm only where `getattr(config, "use_qk_norm", False)`, where transformers' class (the family's
entry) always has them: a config that does not state the flag gets none (`with_stated_qk_norm`, through the stage
parts; transformers' default config: 32 × 2 × 128 × 2 B = 16,384 B less, the 0.5.23 meta build's).
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT
from kvtop.domain.engines.sglang.lm_head import quantizes_head
from kvtop.domain.engines.sglang.weights_built import SCALE_FP32
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import ParallelLayout, StageParts
from kvtop.domain.model import LayerKind, ModelSpec
from kvtop.domain.rounding import ceil_div, round_up
from kvtop.domain.vocab_rows import vocab_parallel_rows
from kvtop.domain.weights import WeightRow, weights_book

UNUSED_QK_NORMS = frozenset({"FalconH1ForCausalLM"})  # falcon_h1.py FalconH1HybridAttentionDecoderLayer
# the LM head held in fp32, by class -> whether a tied head (the embedding itself) is cast too: falcon_h1.py
# FalconH1ForCausalLM.__init__ lm_head.float() (a tied head is the embedding, cast too: True);
# bailing_moe_linear.py BailingMoeV2_5ForCausalLM.__init__ ParallelLMHead(params_dtype=torch.float32) unless
# tie_word_embeddings (the head is then word_embeddings, in the model dtype: False; read in 0.5.23, the class's first
# release: Ring-V2.5's class defaults, 157,184 × 2,048 × 2 B more at TP 1, the meta build's)
FP32_HEAD: dict[str, bool] = {"FalconH1ForCausalLM": True, "BailingMoeV2_5ForCausalLM": False}
ATTENTION_KINDS = (LayerKind.FULL, LayerKind.SLIDING)
QK_NORM_WHEN_STATED = frozenset({"HunYuanDenseV1ForCausalLM"})  # hunyuan.py HunYuanAttention: use_qk_norm
CLASS_RULE_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before 0.5.6.post2: the book's count"),
    Era("0.5.6.post2", True, "falcon_h1.py and hunyuan.py as below (read in 0.5.6.post2 and 0.5.23)"),
))  # fmt: skip
# muse_glimmer.py MuseGlimmerForCausalLM.__init__: ParallelLMHead(vocab, hidden, padding_size=128) ("Pad vocab to
# 128-align for the MXFP8 kernel"); its embedding keeps the default 64 (read in 0.5.23, where the class is)
HEAD_PADDED_128 = frozenset({"MuseGlimmerForCausalLM", "MuseGlimmerForConditionalGeneration"})
HEAD_PADDING = 128
HEAD_PADDED_ERAS: Eras[bool] = Eras((
    Era("", False, "no MuseGlimmer class before 0.5.23"),
    Era("0.5.23", True, "models/muse_glimmer.py lm_head padding_size=128 (read in 0.5.23)"),
))  # fmt: skip
OWN_HEAD_WHEN_TIED = frozenset({"Lfm2ForCausalLM", "Lfm2VlForConditionalGeneration", "Lfm2MoeForCausalLM"})
# llava.py / llavavid.py: `if "unpad" in getattr(config, "mm_patch_merge_type", "")`, a float16 vector of hidden_size
IMAGE_NEWLINE = frozenset({"LlavaLlamaForCausalLM", "LlavaQwenForCausalLM", "LlavaMistralForCausalLM",
                           "LlavaVidForCausalLM"})  # fmt: skip
IMAGE_NEWLINE_BYTES = 2  # torch.float16, whatever the model dtype
PLE_DEFAULTED = frozenset({"Gemma4UnifiedForConditionalGeneration"})  # read as Gemma4Config (common.py)
GEMMA4_TEXT_PLE_DEFAULTS = (256, 262_144)  # Gemma4TextConfig: hidden_size_ and vocab_size_per_layer_input
PLE_DEFAULT_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before 0.5.23: the config's own fields"),
    Era("0.5.23", True, "common.py _Gemma4UnifiedConfigAlias (read in 0.5.23)"),
))  # fmt: skip


def class_rows(
    model: ModelSpec, layout: ParallelLayout, layers: range, version: ResolvedVersion
) -> tuple[WeightRow, ...]:
    """The rows `model`'s class adds to the book on one rank of the stage holding `layers`."""
    if not CLASS_RULE_ERAS.at(version):
        return ()
    rows = (
        _unused_qk_norms(model, layers),
        _fp32_head(model, layout, layers, version),
        _defaulted_per_layer_input(model, layout, layers, version),
        _head_padded_to_128(model, layout, layers, version),
        _own_head_when_tied(model, layout, layers),
        _image_newline(model),
    )
    return tuple(row for row in rows if row is not None)


def _unused_qk_norms(model: ModelSpec, layers: range) -> WeightRow | None:
    """q_norm and k_norm (head_dim each, whole on every rank) on each attention layer of the stage."""
    if model.architecture not in UNUSED_QK_NORMS or model.qk_norm:
        return None
    attention = sum(1 for layer in layers if model.layer_attention[layer] in ATTENTION_KINDS)
    params = attention * 2 * model.head_dim
    if not params:
        return None
    return WeightRow(component="unused_qk_norms", params=params, bytes=params * model.dtype_bytes, shards=1,
                     bytes_per_param=float(model.dtype_bytes),
                     note="SGLang's class builds q_norm and k_norm the checkpoint does not hold (falcon_h1.py)")  # fmt: skip


def _defaulted_per_layer_input(
    model: ModelSpec, layout: ParallelLayout, layers: range, version: ResolvedVersion
) -> WeightRow | None:
    """The per-layer embeddings Gemma4Config's defaults give a Gemma-4 Unified config that states no width: the
    stage's book with them less the book without (the table, projection and norm; each layer's gate, projection
    and norm, as the family's entry books them for SGLang)."""
    if (
        model.architecture not in PLE_DEFAULTED
        or model.per_layer_input_stated
        or model.per_layer_input_size
        or not PLE_DEFAULT_ERAS.at(version)
    ):
        return None
    width, vocab = GEMMA4_TEXT_PLE_DEFAULTS
    built = model.model_copy(update={"per_layer_input_size": width, "per_layer_vocab": vocab})
    first, last = layers.start == 0, layers.stop == model.num_layers
    more = weights_book(built, layout, layers, first_stage=first, last_stage=last, tower_split=TOWER_SPLIT)
    book = weights_book(model, layout, layers, first_stage=first, last_stage=last, tower_split=TOWER_SPLIT)
    params, size = more.total_params - book.total_params, more.total_bytes - book.total_bytes
    return WeightRow(component="per_layer_embeddings_default", params=params, bytes=size, shards=1,
                     bytes_per_param=size / params if params else 0.0,
                     note=f"SGLang reads the config as Gemma4Config: hidden_size_per_layer_input {width}, "
                          f"vocab_size_per_layer_input {vocab} by default (utils/hf_transformers/common.py)")  # fmt: skip


def _fp32_head(
    model: ModelSpec, layout: ParallelLayout, layers: range, version: ResolvedVersion
) -> WeightRow | None:
    """The LM head's rows on this rank at fp32 less the book's model-dtype count of them (the last stage)."""
    if (
        model.architecture not in FP32_HEAD
        or (model.tie_word_embeddings and not FP32_HEAD[model.architecture])
        or layers.stop != model.num_layers
        or model.dtype_bytes >= SCALE_FP32
    ):
        return None
    if quantizes_head(model, version) or (
        model.quant.mixed and model.quant.format_of(("lm_head",)) is not None
    ):
        return None
    params = vocab_parallel_rows(model.vocab_size, layout.tp) * (model.embedding_size or model.hidden_size)
    more = params * (SCALE_FP32 - model.dtype_bytes)
    return WeightRow(component="fp32_lm_head", params=0, bytes=more, shards=layout.tp, bytes_per_param=0.0,
                     note="SGLang holds this class's LM head in fp32 (falcon_h1.py lm_head.float(), "
                          "bailing_moe_linear.py ParallelLMHead params_dtype float32)")  # fmt: skip


def _head_padded_to_128(
    model: ModelSpec, layout: ParallelLayout, layers: range, version: ResolvedVersion
) -> WeightRow | None:
    """The LM head rows this class pads beyond the book's 64-row padding (the last stage): a vocabulary padded to
    128 rows, split over TP (Muse-Glimmer-30B: 202,048 -> 202,112, 64 rows x 6,656 x 2 B = 851,968 B at TP 1)."""
    if model.architecture not in HEAD_PADDED_128 or layers.stop != model.num_layers or not HEAD_PADDED_ERAS.at(version):
        return None
    padded = round_up(model.vocab_size, HEAD_PADDING)
    rows = ceil_div(padded, layout.tp) - vocab_parallel_rows(model.vocab_size, layout.tp)
    if rows <= 0:
        return None
    params = rows * (model.embedding_size or model.hidden_size)
    return WeightRow(component="lm_head_padding", params=params, bytes=params * model.dtype_bytes, shards=layout.tp,
                     bytes_per_param=float(model.dtype_bytes),
                     note=f"SGLang pads this class's LM head to {HEAD_PADDING} rows (muse_glimmer.py padding_size)")  # fmt: skip
def _own_head_when_tied(model: ModelSpec, layout: ParallelLayout, layers: range) -> WeightRow | None:
    """The LM head this class builds beside a tied embedding (its rows on this rank, the last stage)."""
    if model.architecture not in OWN_HEAD_WHEN_TIED or not model.tie_word_embeddings or layers.stop != model.num_layers:
        return None
    params = vocab_parallel_rows(model.vocab_size, layout.tp) * (model.embedding_size or model.hidden_size)
    return WeightRow(component="lm_head_beside_tied", params=params, bytes=params * model.dtype_bytes,
                     shards=layout.tp, bytes_per_param=float(model.dtype_bytes),
                     note="SGLang's class builds its own LM head and copies the tied embedding into it (lfm2.py)")  # fmt: skip


def _image_newline(model: ModelSpec) -> WeightRow | None:
    """The image_newline vector (hidden_size, float16, whole on every rank) an "unpad" LLaVA class sets."""
    if model.architecture not in IMAGE_NEWLINE or "unpad" not in model.mm_patch_merge_type:
        return None
    params = model.hidden_size
    return WeightRow(component="image_newline", params=params, bytes=params * IMAGE_NEWLINE_BYTES, shards=1,
                     bytes_per_param=float(IMAGE_NEWLINE_BYTES),
                     note="SGLang's LLaVA class adds image_newline (float16) for an unpad merge (llava.py)")  # fmt: skip


def with_stated_qk_norm(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` without q/k norms where this class builds them only on the config's flag and the config has it off."""
    unstated = model.architecture in QK_NORM_WHEN_STATED and model.qk_norm and not model.qk_norm_stated
    if not unstated or not CLASS_RULE_ERAS.at(version):
        return parts
    return parts.model_copy(update={"qk_norm_off": True})
