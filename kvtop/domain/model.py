"""ModelSpec: the architecture facts kvtop needs, normalised from any config family.

One frozen `ModelSpec` per model. `kvtop.domain.model_config.model_from_config` builds it from a
Hugging Face `config.json` through the family's entry in `kvtop.domain.architectures`; those entries
import these types, so this module imports none of them.
"""

from __future__ import annotations

from enum import Enum
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kvtop.domain.compressed_spec import CompressedSpec
from kvtop.domain.config_default import ConfigDefault, DefaultKind
from kvtop.domain.quant import NO_QUANT, QuantSpec
from kvtop.domain.tower_spec import TowerSpec
from kvtop.domain.unchecked_class import UncheckedClass


class AttentionKind(str, Enum):
    MHA = "MHA"
    GQA = "GQA"
    MQA = "MQA"
    MLA = "MLA"
    DSA = "DSA"  # MLA plus a sparse-attention indexer key cache (DeepSeek-V3.2)


class LayerKind(str, Enum):
    FULL = "full"  # full attention: KV for every token
    SLIDING = "sliding"  # sliding-window (or chunked) attention: its own, smaller pool
    LINEAR = "linear"  # linear attention / Mamba: a fixed state per request, no KV
    NONE = "none"  # an MLP-only block (Nemotron-H '-'/'E' layers): neither KV nor state
    SHARED = "kv_shared"  # attention reading another layer's KV (Gemma-3n/4, CLA): weights, no KV of its own


class MlpKind(str, Enum):
    DENSE = "dense"
    MOE = "moe"
    NONE = "none"


class MlaSpec(BaseModel):
    model_config = ConfigDict(frozen=True)
    kv_lora_rank: int
    q_lora_rank: int | None
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int


class MoeSpec(BaseModel):
    model_config = ConfigDict(frozen=True)
    num_routed_experts: int
    experts_per_token: int
    expert_intermediate_size: int
    shared_intermediate_size: int  # all shared experts together; 0 if none
    shared_expert_gate: bool = False  # Qwen-style sigmoid gate on the shared expert
    expert_bias: bool = False  # gpt-oss experts carry biases
    router_bias: bool = False  # a bias per expert on the router (DeepSeek-V3's score correction, gpt-oss)
    router_bias_fp32: bool = True  # … in fp32 (DeepSeek's e_score_correction_bias); gpt-oss's is a bf16 Linear bias
    router_fp32: bool = False  # the router's matrix is kept in fp32 (GLM-4.5's and MiMo-V2's gate)
    latent_size: int = 0  # experts work in a latent width, with projections in and out (Nemotron-3 Ultra)
    latent_modules: tuple[str, str] = ("fc1_latent_proj", "fc1_latent_proj")  # the projections in and out, by name
    latent_norm: bool = False  # an RMSNorm on the latent (Kimi-K3 routed_expert_norm)
    extra_norms: int = 0  # hidden-wide vectors an MoE layer holds beside (Gemma-4: 3 norms and the router scale)
    per_expert_scale: bool = False  # a scale per expert on the router (Gemma-4)
    # the experts are the layer's own module beside its dense MLP (Gemma-4's `layers.N.experts`, vLLM 0.33.0
    # gemma4.py), not inside it (`layers.N.mlp.experts`): a checkpoint's `layers.N.mlp*` exclusion spares only the MLP
    experts_beside_mlp: bool = False
    # the first N MoE layers route by the token's id (a [vocab, top-k] int32 table) rather than by score, and
    # hold no score-correction bias (DeepSeek-V4's `num_hash_layers`; SGLang 0.5.23 deepseek_v2.py `is_hash`)
    hash_layers: int = 0
    gated_experts: bool = False  # experts gate and up (w13) whatever the dense MLP (Moondream3's GeGLU experts)
    # zero-computation experts (LongCat-Flash): rows of the router and its score bias, no weights of their own
    zero_experts: int = 0
    zero_expert_type: str | None = None  # their kind as the config states it ("" where it states none)
    # a second routed group beside the first, on the same layers, with its own router and score-bias rows (ERNIE-4.5-VL's
    # vision experts: vLLM 0.33.0 ernie45_vl_moe.py / SGLang 0.5.23 ernie45_moe_vl.py `vision_experts`); the first
    # group (num_routed_experts, expert_intermediate_size) is the text one, which the shared experts are sized by
    second_group_experts: int = 0
    second_group_intermediate_size: int = 0
    # a router MLP in place of the router matrix (ZayaRouter): its width (0: none), EDA scale, skip route
    router_mlp: int = 0
    router_mlp_eda: bool = False
    router_mlp_skip: bool = False

    def expert_names(self, layer: int) -> tuple[str, str]:
        """The checkpoint names of `layer`'s experts the quant config is asked about (module, first expert's
        down_proj): inside the MLP, or the layer's own module beside it (`experts_beside_mlp`)."""
        at = f"model.layers.{layer}" + ("" if self.experts_beside_mlp else ".mlp")
        return at + ".experts", at + ".experts.0.down_proj"


class StateKind(str, Enum):
    """Which recurrent mixer a state layer runs: its weights differ; its state is read from `StateSpec`."""

    MAMBA2 = "mamba2"  # z, x, B, C, dt in one projection (Nemotron-H, Granite-4, Falcon-H1, Mamba2)
    MAMBA1 = "mamba1"  # x/z in, conv, x_proj (dt, B, C), dt_proj (Jamba, Mamba, FalconMamba)
    GATED_DELTA_NET = "gated_delta_net"  # qkvz and beta/alpha projections (Qwen3-Next, Qwen3.5)
    KIMI_DELTA = "kimi_delta"  # KDA: q, k, v each with a short conv, a gate and beta (Kimi-Linear)
    SHORT_CONV = "short_conv"  # a gated short convolution, conv state only (LFM2)
    LIGHTNING = "lightning"  # lightning attention: qkv, an output gate and its group norm, no conv (Ling-2.5)
    JET = "jet"  # JetBlock: q, k, v, a, b, z in one projection, a dynamic conv over v from a kernel generator MLP
    CCA = "cca"  # compressed convolutional attention beside its layer's attention: value projections, conv stages (Zaya)


class StateSpec(BaseModel):
    """Per-layer recurrent state of a linear-attention / Mamba layer (whole model, before TP).

    Conv state: (inner_size + 2 × n_groups × state_size) channels × (conv_kernel − 1); temporal state:
    num_heads × head_dim × state_size elements. Mamba1 reads as num_heads = d_inner, head_dim 1.
    """

    model_config = ConfigDict(frozen=True)
    kind: StateKind = StateKind.MAMBA2
    conv_dim: int  # channels of the causal conv
    conv_kernel: int
    num_heads: int
    head_dim: int
    state_size: int
    n_groups: int
    inner_size: int  # value width (heads × head_dim)
    ssm_dtype_bytes: int = 4
    ssm_dtype_stated: bool = False  # the config names it (NemotronH's mamba_ssm_cache_dtype); else a default
    dt_rank: int = 0  # Mamba1's dt projection rank (weights only)
    gated_norm: bool = True  # Mamba2's gated RMSNorm over the inner width (Falcon-H1 without mamba_rms_norm: none)
    dt_bc_norms: bool = False  # Jamba's RMSNorms on dt, B and C (weights only)
    a_log_fp32: bool = True  # a gated delta net's A_log in fp32 (Qwen3-Next); False: the model dtype (OLMo-Hybrid)
    full_rank_gate: bool = False  # KDA's output gate one hidden → inner projection, not low rank (Kimi-K3; weights)
    # KDA's forget gate one hidden → inner projection (f_proj), not f_a / f_b (Ling-3 no_kda_lora; weights)
    full_rank_forget: bool = False
    qk_norm: bool = False  # lightning attention's per-head q/k RMSNorms, head_dim each, whole on every rank (weights)
    # lightning attention's output gate, hidden → inner split over TP (Ling-2.5 g_proj, MiniCPM-SALA z_proj; weights);
    # its group RMSNorm over the inner width is `gated_norm`
    gate_proj: bool = True
    # lightning attention's width where an engine's config class replaces head_dim with qk_rope_head_dim
    # (transformers' BailingHybridConfig, which vLLM reads): `LoadCasts.state_width_from_rope`; 0: none
    rope_head_dim: int = 0
    # JetBlock's dynamic conv: its kernel generator's hidden width is inner_size ÷ this (dconv_generator_reduction;
    # weights only); 0: none
    dconv_reduction: int = 0
    whole_conv: int = 0  # a second conv buffer, channels × 1 position whole on every rank (Zaya CCA's hidden)
    conv_kernels: tuple[int, ...] = ()  # CCA's two conv stages' kernels (cca_time0, cca_time1; weights only)


class AttentionGeometry(BaseModel):
    """One attention layer's shape where layers differ (Gemma-4's global layers, MiMo's SWA layers, DeciLM)."""

    model_config = ConfigDict(frozen=True)
    heads: int
    kv_heads: int
    head_dim: int
    v_head_dim: int
    kv_projections: int = 2  # K and V projection matrices the checkpoint holds (1: V is K, Gemma-4 global)
    sinks: bool = False  # a learned sink logit per head on this layer (MiMo-V2's sliding layers)


class BodyShape(BaseModel):
    """The small tensors around the big matrices, as the family's modules hold them (weights only)."""

    model_config = ConfigDict(frozen=True)
    norms_per_layer: int = 2  # input + post-attention; Gemma-2/3/4 four; parallel blocks (GPT-J, Cohere) one
    norm_bias: bool = False  # LayerNorm (weight and bias) rather than RMSNorm (weight)
    mlp_bias: bool = False  # up/gate/down carry biases
    o_bias: bool = False  # the attention output projection carries a bias
    down_bias: bool = False  # the MLP's down projection alone carries a bias (TeleChat2: vLLM drops gate_up's)
    # head: RMSNorm over head_dim; all: over every head, whole (OLMo-2); all_split: split over TP (MiniMax-M2)
    qk_norm_width: Literal["head", "all", "all_split"] = "head"
    qk_norm_bias: bool = False  # the per-head q/k norms are LayerNorms with a bias (Persimmon's nn.LayerNorm(head_dim))
    embedding_extra_rows: int = 0  # rows the embedding holds beyond vocab_size (Mllama's vocab_size + 8), the LM head not
    learned_positions: bool = False  # a learned position table of max_position_embeddings rows (GPT-2, BigCode)
    lm_head_bias: bool = False
    final_norm: bool = True
    q_output_gate: bool = False  # q_proj also emits a per-head output gate (Qwen3-Next, Qwen3.5): twice as wide
    head_gate: bool = False  # g_proj: one output gate per head, heads × hidden, split with the heads (Laguna)
    fused_qkv_chunks: int = 0  # the checkpoint's qkv_proj in K|V chunks, one per config KV head (MiMo-V2); 0: none
    # a separate output gate per channel (Muse-Glimmer output_gate_proj): heads × head_dim × hidden, split with the heads
    output_gate_proj: bool = False
    output_gate_bias: bool = False  # … with a bias per head added before its sigmoid, split with the heads (Beam gate_bias)
    sink_keys: bool = False  # a learned sink key per KV head (IQuest-Q1 sink_k [KV heads, head_dim], split with them)
    first_layer_norms: int = 0  # norms layer 0 holds beside norms_per_layer (IQuest-Q1's ffn_out_norm)
    # a low-rank sigmoid gate on every norm (GigaChat-3.5's gated norms: gate_up [rank, width], gate_down [width,
    # rank] beside the norm's weight, nn.Linear, whole on every rank); 0: plain norms
    norm_gate_rank: int = 0
    # Moondream3's tau scaling: tau_alpha [heads] and tau_wq, tau_wv [heads, 3 × hidden], split with the heads
    tau_scaling: bool = False
    latent_output_gate: bool = False  # MLA's g_proj: hidden → heads × v_head_dim, split with the heads (Kimi-K3)
    latent_head_gate: bool = False  # MLA's g_proj one gate per head: hidden → heads, split with them (Ling-3 head_wise)
    # Kimi-K3's attention residual blocks: each layer two hidden-wide norms and two 1 × hidden score projections,
    # the final norm's stage one more of each (attn_res_block_size)
    attention_residuals: bool = False
    embedding_norm: bool = False  # a norm right after the embedding (BLOOM word_embeddings_layernorm)
    positions_offset: int = 0  # rows of a learned position table beyond max_position_embeddings (OPT: 2)
    # the input norm exists only with the layer's attention and the post-attention norm only with its MLP
    # (DeciLM / Nemotron-NAS no-op sublayers): norms_per_layer counts a layer holding both
    sublayer_norms: bool = False
    # Gemma-3n's laurel block (linear_left [rank, hidden] column-, linear_right [hidden, rank] row-parallel, a
    # post_laurel_norm) and AltUp (per layer correction_coefs [n, n], prediction_coefs [n², n], modality_router
    # [n, hidden], router_norm, an fp32 correct_output_scale; the model's altup_projections and
    # altup_unembed_projections, n − 1 of [hidden, hidden] each, column-parallel); 0: none
    laurel_rank: int = 0
    altup_inputs: int = 0
    mlp_scalars: int = 0  # learned activation scalars per MLP, whole on every rank (Apertus's xIELU alpha_p, alpha_n)
    # FoPE's coefficient width F: cos_coef and sin_coef [KV heads of the rank, F, F], one pair a stage (fope.py); 0: none
    fope_frequencies: int = 0
    # a low-rank query (Step-3's share_q_dim): the fused qkv_proj holds q_low | K | V rows, whole on every rank, then
    # an inter_norm of q_low and wq q_low → heads × head_dim split with the heads (vLLM 0.33.0 step3_text.py); 0: none
    q_low_rank: int = 0
    # an encoder-decoder's cross-attention beside every layer's self-attention (Whisper's encoder_attn): q_proj and
    # out_proj hidden × hidden, k and v hidden × hidden each, all biased (the engines add the K bias the checkpoint
    # lacks), split with the heads but out_proj's bias; its KV over the encoder's states each engine's own
    # (kv.py `KvStorage.encoder_decoder`)
    cross_attention: bool = False
    # a looped decoder's gate per layer mixing the first pass's attention with the pass's own (IQuest-LoopCoder
    # gate_projections.N: ColumnParallelLinear(head_dim, heads, bias), split with the heads; vLLM 0.33.0 / SGLang
    # 0.5.23 iquest_loopcoder.py LoopGateProjection)
    loop_gate: bool = False
    # LongCat-Flash-Lite's n-gram embedders (vLLM 0.33.0 longcat_flash_ngram.py NgramEmbedding): `ngram_tables`
    # tables of ngram_rows rows in all, ngram_width wide, one VocabParallelEmbedding (padded, split over TP), and
    # oe_projection [tables, width, hidden], whole on every rank; built with the embedding (the first stage); 0: none
    ngram_tables: int = 0
    ngram_rows: int = 0
    ngram_width: int = 0
    # hyper-connections (weight_hyper.py): `hc_streams` residual streams, each sub-block (attention, MLP) wrapped by an
    # fp32 mixer, the streams merged by an fp32 head before the final norm; `hc_comb` adds the streams' n × n mixing
    # rows (mHC: DeepSeek-V4) to the pre and post gates each mixer holds (Hunyuan-V4's iHC has none); 0: none
    hc_streams: int = 0
    hc_comb: bool = False
    latent_sinks: bool = False  # MLA's learned sink logit per head, fp32, split with the heads (Hunyuan-V4)
    sinks_fp32: bool = False  # attention sinks (ModelSpec.attention_sinks) held in fp32 (Flint's make_attention_sink)
    residual_scales: int = 0  # hidden-wide scale vectors a layer (Zaya: 4; layer 0 half, the final norm's stage 4)


class SharedBlockSpec(BaseModel):
    """Transformer blocks whose weights several layers share (Zamba2's num_mem_blocks), each hybrid layer adding its
    own LoRA adapters and a projection back (vLLM 0.33.0 zamba2.py): the weights book holds each block once."""

    model_config = ConfigDict(frozen=True)
    blocks: int  # shared blocks, used by the hybrid layers in turn
    width: int  # the block's input: the hidden state beside the embedding's (2 × hidden)
    adapter_rank: int
    attention_adapters: bool  # q, k and v LoRA adapters per hybrid layer, besides the MLP's


class VisionSpec(BaseModel):
    """`vision_config`'s tower size: kvtop's reading (`num_layers` and `hidden_size`, taking `depth` and `embed_dim`
    too) and the section's integer fields under the config's own keys (`stated`), which an engine's rule reads through
    its own config class (SGLang's VLM factor: `engines/sglang/multimodal.py`, docs/engines/sglang.md §5)."""

    model_config = ConfigDict(frozen=True)
    num_layers: int = 24  # 24 × 1024 where the section says neither (SGLang's getattr defaults)
    hidden_size: int = 1024
    stated: tuple[tuple[str, int], ...] = ()  # (config key, value), sorted; a filled section: with its class defaults

    def field(self, key: str) -> int | None:
        """The integer the section states under `key` (None: not stated)."""
        return dict(self.stated).get(key)


class Eagle3Head(BaseModel):
    """An Eagle-3 draft head's parts beside its decoder (config.json of a `…Eagle3` class): the fc that fuses the
    target's auxiliary hidden states, and the head's own vocabulary (read by `architectures/eagle3.py`)."""

    model_config = ConfigDict(frozen=True)

    fusion_in: int  # the fc's input width: the target's hidden size × the auxiliary hidden states
    target_hidden_size: int
    aux_states: int
    fusion_bias: bool = False
    norm_before_fusion: bool = False  # one norm over the fc's whole input (norm_before_fc)
    norm_per_aux: bool = False  # a norm of the target's width per auxiliary state (fc_norm / use_aux_norm)
    draft_vocab_size: int | None = None  # the LM head's rows (None: the vocabulary's)


class ModelSpec(BaseModel):
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
    # SGLang builds the vocab embedding without TP under DP attention (DeepseekV2Model, Llama4Model)
    embedding_whole_under_dp_attention: bool = False
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
    # config.json's top-level model_type is its nested text_config's own: the text model's config class, which
    # takes no text_config, so that section stays a plain dict (MLC's ministral3 preset; vLLM refuses it)
    text_config_of_own_type: bool = False
    # config fields a transformers 5.x strict config class types otherwise than config.json states them (DBRX's
    # ffn_config.moe_normalize_expert_weights: 1, typed float): that class refuses the config (architectures/strict_fields)
    strict_type_mismatches: tuple[str, ...] = ()
    eagle3: Eagle3Head | None = None  # an Eagle-3 draft head's fusion and vocabulary (None: any other model)
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
    "AttentionGeometry", "AttentionKind", "BodyShape", "CompressedSpec", "LayerKind", "MlaSpec", "MlpKind",
    "ModelSpec", "MoeSpec",
    "StateKind", "StateSpec", "VisionSpec",
]  # fmt: skip
