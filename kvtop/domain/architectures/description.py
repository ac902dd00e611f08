"""One architecture, described as data: which config fields mean what, and how its layers are laid out.

An `Architecture` is read by one generic reader (`reader.read_architecture`) into a `ModelSpec`, which the
weights book, the KV book, every engine and explain read. A new family is a new entry in a table module
(`table_*.py`) and its test, not a new code path: its config class defaults, the field names of its
geometry, its layer rule (`layer_rules`), its experts (`moe_rules`), its recurrent state (`state_rules`),
its latent attention, and the small tensors its modules hold (`BodyShape`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kvtop.domain.architectures.defaults import DefaultValue
from kvtop.domain.architectures.layer_rules import ALL_FULL, LayerRule
from kvtop.domain.architectures.moe_rules import Moe
from kvtop.domain.architectures.state_rules import StateRule
from kvtop.domain.architectures.towers import Tower
from kvtop.domain.model import BodyShape, LayerKind


@dataclass(frozen=True)
class WidthAdjust:
    """An MLP width the model derives from the stated one where `flag` is on (LFM2's block_auto_adjust_ff_dim):
    int(2/3 of it), times `multiplier` where stated (int), rounded up to a multiple of `multiple_of`. vLLM
    0.33.0 lfm2.py / SGLang 0.5.23 lfm2.py Lfm2MLP and transformers' modeling_lfm2.py Lfm2MLP build it so."""

    flag: str
    multiplier: str
    multiple_of: str


@dataclass(frozen=True)
class Geometry:
    """The config fields of the decoder's shape, where a family names them its own way (ChatGLM, Qwen-1)."""

    layers: str = "num_hidden_layers"
    # kvtop layers per decoder layer the `layers` field counts: LongCat-Flash's layer holds two attention blocks,
    # each its own KV layer, read as two kvtop layers (transformers' LongcatFlashConfig: num_hidden_layers = 2 × num_layers)
    blocks_per_layer: int = 1
    heads: str = "num_attention_heads"
    kv_heads: str | None = "num_key_value_heads"  # None: every head keeps its own KV (MHA)
    # `kv_heads` must be stated: the family's class leaves it None and the engine takes no fallback (TeleChat2)
    kv_heads_required: bool = False
    kv_heads_if: str | None = (
        None  # a flag that must be on for `kv_heads` to apply (ChatGLM multi_query_attention); it wins over …
    )
    multi_query_flag: str | None = None  # … a flag that makes one KV head (GPTBigCode multi_query, Falcon)
    head_dim: str | None = "head_dim"  # None: hidden ÷ heads
    intermediate: str | None = "intermediate_size"  # None: always `intermediate_default_factor` × hidden (BLOOM)
    intermediate_divisor: int = 1  # Qwen-1 states twice the MLP width
    intermediate_default_factor: int = 0  # absent width = factor × hidden (GPT-2's n_inner None: 4)
    vocab: str = "vocab_size"
    positions: str = "max_position_embeddings"
    embedding_width: str | None = None  # the embedding's own width where it may differ from hidden (OPT)
    intermediate_adjust: WidthAdjust | None = None  # the MLP width derived from the stated one (LFM2)


@dataclass(frozen=True)
class Attention:
    """The attention projections' extras: biases, per-head norms, sinks."""

    qkv_bias: bool = False  # q, k, v carry a bias whatever the config says (Qwen2Attention: bias=True)
    bias_fields: tuple[str, ...] = ("attention_bias",)  # config flags that add q, k, v biases when true
    o_bias_fields: tuple[str, ...] = ()  # config flags that add an o_proj bias when true
    qk_norm: bool = False  # per-head RMSNorm on q and k whatever the config says
    qk_norm_field: str | None = "use_qk_norm"
    sinks: bool = False  # a learned sink logit per head (gpt-oss)
    sink_keys_field: str | None = None  # a flag: a learned sink key per KV head (IQuest-Q1 enable_sink_attention)
    output_gate: bool = False  # q_proj also emits a per-head output gate (Qwen3-Next): twice its width
    output_gate_field: str | None = None  # … where a config flag says so (Qwen3.5 attn_output_gate)
    head_gate_field: str | None = None  # a flag: g_proj, one gate per head (heads × hidden: Laguna `gating`)
    output_gate_proj: bool = False  # its own module: heads × head_dim × hidden (Muse-Glimmer output_gate_proj)
    output_gate_proj_field: str | None = None  # … where a config flag says so (MiniCPM-SALA attn_use_output_gate: o_gate)
    output_gate_bias: bool = False  # … and a bias per head on that gate (Beam gate_bias [heads], split with them)
    latent_gate_field: str | None = None  # a flag: MLA's g_proj, hidden → heads × v_head_dim (Kimi-K3)
    # a field naming MLA's g_proj granularity: "head_wise" hidden → heads, "element_wise" hidden → heads × v_head_dim
    # (Ling-3 gated_attention_proj_granularity_type; both engines' bailing_moe_v3.py), absent or other: none
    latent_gate_kind_field: str | None = None
    latent_gate_if: str | None = None  # a flag that must be on for that granularity to apply (Hunyuan-V4 gated_mla)
    latent_sink_field: str | None = None  # a flag: MLA's fp32 sink logit per head (Hunyuan-V4 learnable_sink)
    heads_per_layer_field: str | None = None  # query heads per layer, a list (Laguna num_attention_heads_per_layer)
    # a field whose value "fused_qkv" says the checkpoint's qkv_proj holds all Q rows, then each KV head's K and V
    # rows together, one chunk per KV head (MiMo-V2's attention_projection_layout)
    fused_qkv_field: str | None = None
    # FoPE's cos_coef and sin_coef (Intern-S1-Pro; architectures/fope.py), read from rope_scaling's FoPE keys
    fope: bool = False
    # a field giving a low-rank query's width (Step-3's share_q_dim: BodyShape.q_low_rank)
    q_low_rank_field: str | None = None


@dataclass(frozen=True)
class ParallelNorms:
    """Norms a layer holds where the config decides (Falcon, vLLM `FalconDecoderLayer`): a sequential block
    (`parallel_field` false) two; a parallel one `count_field`, absent: two where `two_when` is on, else one."""

    parallel_field: str = "parallel_attn"
    count_field: str = "num_ln_in_parallel_attn"
    two_when: str = "new_decoder_architecture"


@dataclass(frozen=True)
class KindGeometry:
    """The shape of one kind of layer where it differs from the model's own (fields; None keeps the model's).

    Gemma-4's global layers: `num_global_key_value_heads` × `global_head_dim`, V = K where `attention_k_eq_v`;
    MiMo-V2's sliding layers: `swa_num_key_value_heads` × `swa_head_dim` / `swa_v_head_dim`.
    """

    kind: LayerKind
    heads: str | None = None
    kv_heads: str | None = None
    head_dim: str | None = None
    v_head_dim: str | None = None
    k_eq_v_field: str | None = None
    sinks_field: str | None = None  # a flag: this kind's layers carry a sink logit per head


@dataclass(frozen=True)
class Latent:
    """Multi-head latent attention (and DeepSeek's sparse indexer): the fields of its ranks and dims."""

    kv_lora: str = "kv_lora_rank"
    # a flag whose false says the layers attend plainly (heads × hidden/heads), the latent fields 0: DeepSeek-OCR's
    # language_config (SGLang 0.5.23 deepseek_ocr.py builds DeepseekForCausalLM where `use_mla` is false)
    use_field: str | None = "use_mla"
    q_lora: str = "q_lora_rank"
    rope: str = "qk_rope_head_dim"
    nope: str = "qk_nope_head_dim"
    v_dim: str = "v_head_dim"
    index_dim: str | None = "index_head_dim"
    index_heads: str = "index_n_heads"
    # which layers keep their own indexer: `indexer_types` ("shared": reuse the previous top-k), else every
    # `index_topk_freq`-th from `index_skip_topk_offset` (vLLM's default offset 2; GLM-5.2)
    index_types: str = "indexer_types"
    index_freq: str = "index_topk_freq"
    index_offset: str = "index_skip_topk_offset"
    # the indexer's rope interleaved rather than NeoX style (GLM-5: true; DeepSeek-V3.2 states none: NeoX), which
    # decides whether SGLang fuses its wk with weights_proj (engines/sglang/layer_build.py)
    index_rope_interleave: str = "indexer_rope_interleave"
    # a field naming each layer's attention, where only `sparse_words` layers run DSA (the others attend plainly and
    # keep no indexer); the engines disagree where it is absent, so it must be stated (Hunyuan-V4 layer_types)
    sparse_types: str | None = None
    sparse_words: tuple[str, ...] = ("sparse_attention", "sparse", "indexed_attention", "deepseek_sparse_attention")


@dataclass(frozen=True)
class SparseIndex:
    """A lightning indexer beside standard attention (MiniMax-M3): `sparse_attention_config`'s layer flags and
    index key; the key cache is one bf16 head of `sparse_index_dim` per indexed layer."""

    section: str = "sparse_attention_config"
    # where the config has no sparse_attention_config, the class default (vLLM MiniMaxM3TextConfig): every
    # layer from the 4th, an index key of 128
    absent_first_plain: int = 3
    absent_index_dim: int = 128


@dataclass(frozen=True)
class Compressed:
    """DeepSeek-V4's compressed attention: the fields of its per-layer compress ratios (one per layer, then one per
    MTP layer), window, q/o LoRAs, hyper-connections and indexer; `refused_fields`: layouts its classes also
    build that no entry reads (a layer reading another's KV, engram tables), refused where a config states one."""

    ratios: str = "compress_ratios"
    window: str = "sliding_window"
    q_lora: str = "q_lora_rank"
    o_groups: str = "o_groups"
    o_lora: str = "o_lora_rank"
    hc_mult: str = "hc_mult"
    index_dim: str = "index_head_dim"
    index_heads: str = "index_n_heads"
    rope: str = "qk_rope_head_dim"
    hash_layers: str = "num_hash_layers"
    refused_fields: tuple[tuple[str, str], ...] = (
        ("kv_source_layer_ids", "layers reading another layer's compressed KV"),
        ("index_source_layer_ids", "layers reading another layer's indexer"),
        ("engram_layer_ids", "engram n-gram embedding tables"),
    )


@dataclass(frozen=True)
class SharedBlocks:
    """Zamba2's shared transformer blocks (`SharedBlockSpec`): the fields of their count, input width, adapters."""

    blocks: str = "num_mem_blocks"
    # the block's input (and attention) width in hiddens: transformers' Zamba2Config derives attention_hidden_size
    # 2 × hidden and attention_head_dim 2 × hidden ÷ heads whatever the file states
    width_factor: int = 2
    adapter_rank: str = "adapter_rank"
    attention_adapters: str = "use_shared_attention_adapter"


@dataclass(frozen=True)
class Architecture:
    """One `model_type` as kvtop reads it (see the module docstring)."""

    model_type: str
    config_class: str
    source: str  # where the class defaults and the reading come from
    defaults: Mapping[str, DefaultValue]
    architectures: tuple[str, ...] = ()  # the engines' architecture class names this entry serves
    geometry: Geometry = Geometry()
    layers: LayerRule = ALL_FULL
    layer_type_words: Mapping[str, LayerKind] | None = None  # `layer_types` vocabulary (None: the shared one)
    window_field: str = "sliding_window"
    chunked_local: bool = False  # windowed layers are chunked local attention (Llama 4)
    # the config's window counts the tokens before the query, not the query (Cohere-2: a sliding layer sees
    # [pos - sliding_window, pos], window + 1 tokens); each engine builds its spec from it its own way (vLLM: windows.py)
    window_excludes_query: bool = False
    attention: Attention = Attention()
    kind_geometry: tuple[KindGeometry, ...] = ()
    latent: Latent | None = None
    sparse_index: SparseIndex | None = None
    compressed: Compressed | None = None
    moe: Moe | None = None
    state: StateRule | None = None
    parallel_state: bool = False  # a state mixer beside attention in every attention layer (Falcon-H1)
    mtp_fields: tuple[str, ...] = ("num_nextn_predict_layers",)  # the first one stated counts MTP layers
    # the MTP layers the checkpoint ships where the config states none of `mtp_fields` (Qwen3-Next: one `mtp.*`
    # layer, which vLLM reads as getattr(config, "num_nextn_predict_layers", 1), qwen3_next_mtp.py)
    mtp_unstated: int = 0
    mlp_gated: bool = True
    mlp_bias_fields: tuple[str, ...] = ("mlp_bias",)  # config flags that add MLP biases (LlamaMLP: mlp_bias)
    body: BodyShape = BodyShape()
    norms: ParallelNorms | None = None  # norms per layer from the config (else `body.norms_per_layer`)
    # (a field, (its value, norms per layer) …): norms per layer by a word (GigaChat-3.5 layernorm_type pre / pre_post)
    norms_by_word: tuple[str, tuple[tuple[str, int], ...]] | None = None
    # (a field, the words that gate, the gate's rank): a low-rank gate on every norm (GigaChat-3.5 norm_type)
    norm_gate: tuple[str, tuple[str, ...], int] | None = None
    final_norm_field: str | None = None  # a flag that must be on for the final norm (OPT do_layer_norm_before)
    kv_shared_field: str | None = None  # the last N layers read another layer's KV (Gemma-3n/4)
    # a flag: those KV-shared layers' dense MLP is twice intermediate_size (Gemma-4's use_double_wide_mlp)
    kv_shared_wide_field: str | None = None
    # Gemma-4's per-layer embeddings: the width each layer's input from them has (hidden_size_per_layer_input; 0 or
    # absent: none), their table's rows (vocab_size_per_layer_input, else vocab_size)
    per_layer_input_field: str | None = None
    per_layer_vocab_field: str | None = None
    # Gemma-3n's laurel rank and AltUp inputs (BodyShape.laurel_rank / altup_inputs)
    laurel_field: str | None = None
    altup_field: str | None = None
    per_layer_config_field: str | None = None  # per-layer overrides by layer index (Gemma-4's head_dim)
    tower: Tower | None = None  # the vision tower a `vision_config` sizes (None: its bytes are not modelled)
    not_modelled: tuple[str, ...] = ()  # parts whose bytes kvtop leaves out, said aloud
    not_modelled_when: tuple[tuple[str, str], ...] = ()  # (a config field, what kvtop leaves out where it is set)
    # (a config flag, what it is): a layout kvtop does not model, refused by name where the flag is on
    refused_when: tuple[tuple[str, str], ...] = ()
    # (a config field, the most it may be, what it is): a larger value is refused by name, never planned
    refused_over: tuple[tuple[str, int, str], ...] = ()
    # passes over the weight-tied layers, each keeping KV of its own (Nanbeige's num_loops): the KV book counts the
    # attention layers this many times, the weights book once (ModelSpec.kv_passes)
    kv_passes_field: str | None = None
    # the window the passes after the first keep KV of (ModelSpec.later_passes_slide: IQuest's loop_window_size)
    kv_pass_window_field: str | None = None
    # (ratio, split, neighbour) fields of n-gram embedders beside the token embedding (LongCat-Flash-Lite:
    # ngram_vocab_size_ratio, emb_split_num, emb_neighbor_num; BodyShape.ngram_tables), read where the ratio is set
    ngram_fields: tuple[str, str, str] | None = None
    # an encoder-decoder's encoder layer count (Whisper's encoder_layers: ModelSpec.encoder_layers), which SGLang's
    # one token pool also sizes
    encoder_layers_field: str | None = None
    # a field whose being set adds attention residual blocks (Kimi-K3 attn_res_block_size: BodyShape.attention_residuals)
    attention_residual_field: str | None = None
    # a field listing the layers that attend to an encoder's states (Mllama cross_attention_layers: ModelSpec)
    cross_attention_field: str | None = None
    shared_blocks: SharedBlocks | None = None  # full-attention layers run shared blocks (Zamba2)
    # fields an engine's class reads with no default (LongCat-Flash: vLLM's mla_scale_*, zero_expert_type; SGLang's
    # rope_scaling.rope_theta): those the config leaves unstated go to ModelSpec.unstated_fields for the engines
    engine_read_fields: tuple[str, ...] = ()
    # (a field, another, what differs): both stated and unequal is refused by name (the engines read one each: HY-V3)
    refused_unequal: tuple[tuple[str, str, str], ...] = ()
    # (a field, the one value the entry describes as the config writes it, what): any other value, or none, is refused
    # by name (one model_type over language models of several shapes: MiniCPM-V's `version`)
    refused_unless: tuple[tuple[str, str, str], ...] = ()
    # defaults that are kvtop's own figure, not the config class's (its field absent there): (field, what it is), said
    # as such where the file leaves it out (a ConfigDefault of kind KVTOP_NOMINAL), never as a class default
    own_defaults: tuple[tuple[str, str], ...] = ()
    # (a flag, the streams' field): hyper-connections where the flag is on (Hunyuan-V4 enable_ihc, hc_mult: BodyShape)
    hyper_connection_fields: tuple[str, str] | None = None
