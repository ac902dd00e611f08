"""ModelSpec: the architecture facts kvtop needs, normalised from any config family.

One frozen `ModelSpec` per model. `kvtop.domain.model_config.model_from_config` builds it from a
Hugging Face `config.json` through the family's entry in `kvtop.domain.architectures`; those entries
import these types, so this module imports none of them. The parts it is made of are their own modules, by what
they describe: `model_layers` (the kinds of layer and their attention, MoE and recurrent-state shapes) and
`model_body` (the small tensors around the matrices, shared blocks, the vision section, an Eagle-3 head); they are
re-exported here, where every reader imports them from.
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal

from pydantic import ConfigDict

from kvtop.domain.compressed_spec import CompressedSpec
from kvtop.domain.config_default import ConfigDefault, DefaultKind
from kvtop.domain.fresh_copy import FreshCopyModel
from kvtop.domain.model_body import BodyShape, Eagle3Head, SharedBlockSpec, VisionSpec
from kvtop.domain.model_layers import (
    MLA_KINDS,
    AttentionGeometry,
    AttentionKind,
    LayerKind,
    MlaSpec,
    MlpKind,
    MoeSpec,
    StateKind,
    StateSpec,
)
from kvtop.domain.quant import NO_QUANT, QuantSpec
from kvtop.domain.tower_spec import TowerSpec
from kvtop.domain.unchecked_class import UncheckedClass


class ModelSpec(FreshCopyModel):
    """One model's geometry, whatever family its config came from."""

    model_config = ConfigDict(frozen=True)

    name: str
    source: str
    architecture: str
    model_type: str
    dtype_bytes: int
    # the 16-bit dtype `--dtype auto` serves it in, by the config's name (architectures/config_dtype.py): what a
    # 2-byte KV cache under `auto` is called (the same bytes either way)
    half_dtype: Literal["bf16", "fp16"] = "bf16"
    hidden_size: int
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    v_head_dim: int
    attention_kind: AttentionKind
    attention_bias: bool = False
    qk_norm: bool = False
    # the config's own q/k-norm flag (the entry's `qk_norm_field`, use_qk_norm) is on; a family that has the norms
    # whatever the config says may meet an engine class that builds them only where this is on (SGLang's HunYuan)
    qk_norm_stated: bool = False
    attention_sinks: bool = False
    vocab_size: int
    tie_word_embeddings: bool
    # a wrapper's own tie_word_embeddings where its config states one beside a text section (None otherwise): vLLM
    # 0.33.0 builds a multimodal model's language model with it, whatever the text section says (engines/vllm)
    outer_tie_word_embeddings: bool | None = None
    intermediate_size: int
    mlp_gated: bool = True
    moe: MoeSpec | None = None
    layer_attention: tuple[LayerKind, ...]
    # per layer, the kind the config's pattern gives it before the KV-shared layers are marked (Gemma-3n/4's
    # layer_types; empty where no layer shares): an engine that pools the shared layers anyway puts each in its own
    # kind's pool (`KvStorage.shared_layers_keep_kv`: SGLang's get_hybrid_layer_ids reads layer_types)
    kv_shared_kinds: tuple[LayerKind, ...] = ()
    layer_mlp: tuple[MlpKind, ...]
    # passes over the weight-tied layers, each keeping KV of its own (Nanbeige num_loops; SGLang 0.5.23
    # num_attention_layers = layers × passes): the KV book counts each attention layer this many times
    kv_passes: int = 1
    # the passes after the first keep KV of the last `sliding_window` tokens only, a sliding-window layer each
    # (IQuest-LoopCoder's loop_window_size: vLLM 0.33.0 / SGLang 0.5.23 iquest_loopcoder.py, an attention per loop,
    # loop 0 full and the others windowed); False: every pass keeps the layers' own kinds (Nanbeige)
    later_passes_slide: bool = False
    # layers that attend to the image encoder's states (Mllama): q/k norms and two tanh gates beside the layer's
    # weights; their KV sits in the same pool as the other layers' (SGLang 0.5.23 mllama.py, RadixAttention
    # is_cross_attention), so the KV book counts them as full-attention layers
    cross_attention_layers: tuple[int, ...] = ()
    # an encoder-decoder's encoder layers (Whisper's encoder_layers; 0: none): SGLang 0.5.23 gives each a layer of its
    # one token pool beside the decoder's (configs/model_config.py num_attention_layers), kv.py `KvStorage.encoder_decoder`
    encoder_layers: int = 0
    shared_block: SharedBlockSpec | None = None  # Zamba2: its full-attention layers run a shared block
    sliding_window: int | None = None
    # the config's `sliding_window` where the family gives no window pattern and no `layer_types` (Mistral,
    # Phi-3): kvtop reads those layers as full attention; vLLM windows every layer with it (vllm.md §3.4)
    config_sliding_window: int | None = None
    # the config states a sliding window (> 0), whatever its layers (SGLang 0.5.23 takes Laguna as hybrid SWA by it)
    sliding_window_stated: bool = False
    # the config opts into SGLang's sliding-window pool itself (`is_hybrid_swa`: Spark-2.5's and IQuest-Q1's config
    # classes set it where any layer slides; SGLang 0.5.23 is_hybrid_swa_model reads it beside its class list)
    hybrid_swa_stated: bool = False
    # the words of the config's per-layer block list, sorted (Nemotron-H's layers_block_type: SGLang 0.5.23 reads
    # mamba/attention/mlp/moe, transformers 5.x and vLLM 0.33.0 also linear_attention/full_attention)
    block_words: tuple[str, ...] = ()
    # fields an engine's class reads with no default of its own that this config leaves unstated (the entry's
    # `engine_read_fields`; each engine package refuses those its release fails on: LongCat-Flash)
    unstated_fields: tuple[str, ...] = ()
    mla: MlaSpec | None = None
    dsa_index_head_dim: int | None = None
    dsa_index_heads: int | None = None
    dsa_indexed: tuple[bool, ...] = ()  # per layer: it keeps its own indexer (empty: every attention layer)
    dsa_index_rope_interleaved: bool = False  # the indexer's rope interleaved (GLM-5's indexer_rope_interleave)
    # the index key cache: DeepSeek's FP8 key with an fp32 scale per 128 (index_head_dim + dim/128 × 4 B), or a
    # bf16 key (MiniMax-M3's lightning indexer: MLAAttentionSpec of one head of sparse_index_dim, 2 B each)
    index_key_bf16: bool = False
    compressed: CompressedSpec | None = None  # DeepSeek-V4's compressed attention (None: any other model)
    state: StateSpec | None = None
    mtp_layers: int = 0
    max_position_embeddings: int
    # the config field the positions were read from: the schema's max_position_embeddings (which reads each of its
    # aliases: max_sequence_length, seq_length, n_positions, model_max_length, max_seq_len), or the entry's own
    # (Whisper's decoder: max_target_positions); an engine that looks for context keys reads this
    positions_field: str = "max_position_embeddings"
    # the embedding's (and a tied LM head's) width where it differs from hidden_size, with a projection in and out
    # (OPT-350m's word_embed_proj_dim 512 under hidden 1,024); None: hidden_size
    embedding_size: int | None = None
    # Gemma-4's per-layer embeddings (PLE): each layer's input width from them (0: none) and their table's rows; the
    # table is num_layers × that wide, projected from hidden by one matrix, gated and projected back in each layer
    per_layer_input_size: int = 0
    per_layer_vocab: int = 0
    # the config states the per-layer input width at all (0 included): an engine that reads the config through a
    # class with a default for it builds that default where this is off (SGLang's Gemma-4 Unified)
    per_layer_input_stated: bool = False
    # per layer where attention layers differ in shape (empty: every layer is the model's own heads and dims)
    layer_geometry: tuple[AttentionGeometry, ...] = ()
    layer_intermediate: tuple[int, ...] = ()  # per layer where dense MLP widths differ (empty: intermediate_size)
    parallel_state: bool = False  # every attention layer also runs a state mixer beside it (Falcon-H1)
    chunked_local: bool = False  # its windowed layers are chunked local attention (Llama 4), not a sliding window
    # the config's sliding_window counts the tokens before the query (Cohere-2: a layer sees window + 1 tokens); vLLM
    # v0.29.0+ builds its SlidingWindowSpec at window + 1 (engines/vllm/windows.py)
    window_excludes_query: bool = False
    body: BodyShape = BodyShape()
    reading: str = ""  # how the config was read: the architecture entry, or a generic reading and what it assumed
    # the file was not a config.json: how kvtop read it (Mistral's params.json: kvtop.domain.mistral_params.NOTE)
    config_format: str = ""
    # parts read from outside the file, said as notes: a language model named by checkpoint id whose published config
    # kvtop holds (Ultravox's text_model_id: kvtop.domain.architectures.named_text; the copies examples/models/named/)
    read_from: tuple[str, ...] = ()
    # the config's class is a speculative-decoding draft read through its model_type's entry: why it is not
    # planned as the served model ('' for any other model; coverage.draft_reason)
    speculative_draft: str = ""
    # the config's class has no entry of its own and is read through another (its model_type's or its text
    # section's): said in every view (kvtop.domain.unchecked_class); None where the class is checked or read generically
    unchecked_class: UncheckedClass | None = None
    quant: QuantSpec = NO_QUANT
    multimodal: bool = False
    vision: VisionSpec | None = None  # None: no `vision_config` (SGLang then skips its VLM fraction rule)
    tower: TowerSpec | None = None  # the vision tower's weights, where the entry describes its tower
    not_modelled: tuple[str, ...] = ()  # parts whose bytes kvtop leaves out, said aloud
    checkpoint_bytes: int | None = None  # all tensors of the checkpoint, from safetensors headers
    # the checkpoint's image processor's (shortest_edge, longest_edge) pixels, from the preprocessor_config.json beside
    # its config (kvtop.domain.processor_config); None: not given, an engine's rule assumes the family's published sizes
    image_pixels: tuple[int, int] | None = None
    # the checkpoint's tensors are resident as stored (a GGUF file: its quantised blocks load as they are), so a
    # rank holding the whole model holds `checkpoint_bytes` of weights, whatever the config's dtype says
    weights_as_stored: bool = False
    config_model_type: str = ""  # what config.json calls it, when read as another family (--model-family)
    # fields the file left out, each with the value read: the class's default, or kvtop's own nominal figure where
    # the config class has none (a state-only model's head); in the order of their names
    config_defaults: tuple[ConfigDefault, ...] = ()
    # config.json's `auto_map` entries of model classes (`AutoModel…`, remote code): (key, "module.Class")
    auto_map_models: tuple[tuple[str, str], ...] = ()
    # the language model's RoPE type as config.json states it (`rope_scaling` / `rope_parameters`: `rope_type`, or
    # the legacy `type`); '' where none is stated or it is nested by layer type (engines refuse types they lack)
    rope_type: str = ""
    # that rope block's `factor` (1.0 where none is stated or nested by layer type): a `linear` rope's cos/sin cache
    # is the positions × factor long (an engine's rule: vLLM's LinearScalingRotaryEmbedding)
    rope_factor: float = 1.0
    # that rope block's `original_max_position_embeddings`, else the section's own beside a rope block (0: not stated):
    # a YaRN rope's cos/sin cache is these × its factor long, a longrope's short cache these long (each engine's
    # rope_rows.py)
    rope_original_positions: int = 0
    # the share of the head the rope turns (config.json's `partial_rotary_factor`, flat or in its rope block, else
    # the family's class default; 1.0: the whole head): the engines' rope cache is head × factor wide
    # (architectures/rotary_factor.py)
    partial_rotary_factor: float = 1.0
    # that rope block states `mrope_section`: multimodal rotary sections (Qwen2-VL, Qwen2.5-VL, Qwen3-VL), for which an
    # engine may build its own rope module (vLLM's get_rope: MRotaryEmbedding, an engine's rule)
    mrope: bool = False
    # the config's section holding the language model (`text_config`, `llm_config`, …; '' where its fields are flat): an
    # engine's override may name it (vLLM's `--hf-overrides '{"text_config": …}'`, rope_override.py)
    text_section: str = ""
    # config.json's top-level model_type is its nested text_config's own: the text model's config class, which
    # takes no text_config, so that section stays a plain dict (MLC's ministral3 preset; vLLM refuses it)
    text_config_of_own_type: bool = False
    # config fields a transformers 5.x strict config class types otherwise than config.json states them (DBRX's
    # ffn_config.moe_normalize_expert_weights: 1, typed float): that class refuses the config (architectures/strict_fields)
    strict_type_mismatches: tuple[str, ...] = ()
    eagle3: Eagle3Head | None = None  # an Eagle-3 draft head's fusion and vocabulary (None: any other model)
    # a DFlash drafter's fc over the target's hidden states (`dflash_config.target_layer_ids`; None: any other model)
    dflash_fusion: Eagle3Head | None = None
    # LLaVA-NeXT's `mm_patch_merge_type` ("spatial_unpad", "flat", ...; '' where unstated): its "unpad" merge adds
    # an image_newline vector to the language model in the classes that build one (an engine's rule)
    mm_patch_merge_type: str = ""
    # a rope stated at the config's top level (`rope_type` beside `original_max_position_embeddings` and
    # `scaling_factor`, xAI's Grok-2 config.json): (positions = original × factor, rotary width: head_dim, halved
    # under `rope_rotate_half_dims`), which SGLang's grok.py builds per layer (an engine's rule); () where not stated
    top_level_rope: tuple[int, int] | tuple[()] = ()
    audio_tower: bool = False  # config.json has an `audio_config` section: an audio encoder (an engine may refuse it)

    def layers_of(self, kind: LayerKind) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self.layer_attention) if k is kind)

    def geometry(self, layer: int) -> AttentionGeometry:
        """The attention shape of `layer` (the model's own unless its layers differ)."""
        return self.layer_geometry[layer] if self.layer_geometry else self.own_geometry

    @cached_property  # frozen: built once (the books ask for it per layer)
    def own_geometry(self) -> AttentionGeometry:
        """The model's own attention shape: its heads, KV heads and head dims."""
        return AttentionGeometry(
            heads=self.num_attention_heads,
            kv_heads=self.num_kv_heads,
            head_dim=self.head_dim,
            v_head_dim=self.v_head_dim,
        )

    def indexed(self, layer: int) -> bool:
        """Whether `layer` keeps its own DSA indexer (and its key cache)."""
        return self.dsa_index_head_dim is not None and (not self.dsa_indexed or self.dsa_indexed[layer])

    @property
    def index_key_bytes(self) -> int:
        """Bytes one token's index key takes in one indexed layer (0 without an indexer)."""
        dim = self.dsa_index_head_dim or 0
        return 2 * dim if self.index_key_bf16 else dim + dim // 128 * 4

    def intermediate(self, layer: int) -> int:
        """The dense MLP width of `layer`."""
        return self.layer_intermediate[layer] if self.layer_intermediate else self.intermediate_size

    def has_state(self, layer: int) -> bool:
        """Whether `layer` keeps a recurrent state (a linear layer, or any attention layer of a parallel hybrid)."""
        kind = self.layer_attention[layer]
        return kind is LayerKind.LINEAR or (self.parallel_state and kind in (LayerKind.FULL, LayerKind.SLIDING))

    @property
    def attention_free(self) -> bool:
        """No layer attends (Mamba, Mamba2, FalconMamba): every request holds one fixed state and no KV per token;
        the nominal head the config reading needs is read by no book."""
        return self.state is not None and all(kind is LayerKind.LINEAR for kind in self.layer_attention)

    @property
    def reading_notes(self) -> tuple[str, ...]:
        """How the config was read, said as notes by every view: its format where not a config.json, parts read
        from elsewhere, and a class read through an entry that does not list it (`unchecked_class`)."""
        unchecked = (self.unchecked_class.said,) if self.unchecked_class is not None else ()
        return ((self.config_format,) if self.config_format else ()) + self.read_from + unchecked

    @property
    def is_mla(self) -> bool:
        return self.mla is not None

    @property
    def defaults_used(self) -> tuple[ConfigDefault, ...]:
        """The fields the file left out that take their config class's default."""
        return tuple(d for d in self.config_defaults if d.kind is DefaultKind.CLASS_DEFAULT)

    @property
    def assumed_defaults(self) -> tuple[ConfigDefault, ...]:
        """The fields the file left out whose handling by the engines kvtop assumes (a missing torch_dtype: served
        in 16 bit), said beside the class defaults (`config_defaults_used`) and in the notes."""
        return tuple(d for d in self.config_defaults if d.kind is DefaultKind.ENGINE_ASSUMED)

    @property
    def nominal_defaults(self) -> tuple[ConfigDefault, ...]:
        """The fields the file left out that kvtop fills with a figure of its own (the class has no such field)."""
        return tuple(d for d in self.config_defaults if d.kind is DefaultKind.KVTOP_NOMINAL)

    @property
    def positions_nominal(self) -> bool:
        """max_position_embeddings is kvtop's nominal figure: the config class names no position field (BLOOM, the
        state-only models: architectures.defaults.NOMINAL_POSITIONS), so an engine that takes a stated context as it
        is there refuses none above it."""
        return any(d.field == "max_position_embeddings" for d in self.nominal_defaults)


__all__ = [
    "MLA_KINDS", "AttentionGeometry", "AttentionKind", "BodyShape", "CompressedSpec", "Eagle3Head", "LayerKind",
    "MlaSpec", "MlpKind", "ModelSpec", "MoeSpec", "SharedBlockSpec", "StateKind", "StateSpec", "VisionSpec",
]  # fmt: skip
