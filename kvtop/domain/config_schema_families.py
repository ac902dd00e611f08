"""The config fields of particular families (their own names for shape, biases, norms, experts, Mamba, per-layer
blocks), typed and bounded like the common ones; `config_schema.TextConfig` extends `FamilyFields`.

Each field names the families that state it; a family's own nested sections (Kimi-Linear's `linear_attn_config`,
MiniMax-M3's `sparse_attention_config`, DeciLM's `block_configs`, DBRX's `attn_config` / `ffn_config`) are typed
here too.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from kvtop.domain.config_types import (
    MAX_LAYERS,
    MAX_POSITIONS,
    ConfigSection,
    Dim,
    ExpertGroups,
    Experts,
    Factor,
    Flag,
    HeadDim,
    Heads,
    Intermediate,
    LayerCount,
    LayerIndexGroups,
    LayerIndices,
    LayerNames,
    Layers,
    Name,
    PerLayerFlags,
    PerLayerIntermediate,
    Positions,
    Vocab,
    Window,
)

CompressRatio = Annotated[int, Field(strict=True, ge=0, le=1024)]  # tokens per compressed entry (0: none)
BlockCount = Annotated[int, Field(strict=True, ge=0, le=MAX_POSITIONS)]  # a count of KV blocks (0: none)
SignedWindow = Annotated[int, Field(strict=True, ge=-1, le=MAX_POSITIONS)]  # a window; -1: none


class LinearAttnConfig(ConfigSection):
    """Kimi-Linear's `linear_attn_config`: which layers are KDA (1-based) and their heads."""

    full_attn_layers: Annotated[list[Layers], Field(max_length=MAX_LAYERS)] | None = None
    kda_layers: Annotated[list[Layers], Field(max_length=MAX_LAYERS)] | None = None
    num_heads: Heads | None = None
    head_dim: HeadDim | None = None
    short_conv_kernel_size: Dim | None = None
    use_full_rank_gate: Flag | None = None  # Kimi-K3: g_proj hidden → heads × head_dim (else g_a / g_b, low rank)


class JetBlockSection(ConfigSection):
    """Jet-Nemotron's `efficient_attention_config.jet`: one JetBlock's heads, widths and dynamic conv (SGLang 0.5.23
    configs/jet_nemotron.py JetBlockConfig)."""

    num_heads: Heads | None = None
    head_dim: HeadDim | None = None
    expand_v: Factor | None = None  # value head width = int(head_dim × expand_v)
    conv_size: Dim | None = None
    dconv_generator_reduction: Dim | None = None


class JetSwaSection(ConfigSection):
    """Jet-Nemotron's `efficient_attention_config.swa`: its sliding layers' window."""

    window_size: Window | None = None


class EfficientAttentionConfig(ConfigSection):
    """Jet-Nemotron's `efficient_attention_config`: a section per `layer_types` word it configures."""

    jet: JetBlockSection | None = None
    swa: JetSwaSection | None = None


class SparseAttentionConfig(ConfigSection):
    """MiniMax-M3's `sparse_attention_config`: which layers run the indexed sparse branch, and its index key."""

    sparse_attention_freq: PerLayerFlags | None = None
    sparse_index_dim: HeadDim | None = None
    sparse_num_index_heads: Heads | None = None


class BlockAttention(ConfigSection):
    n_heads_in_group: Heads | None = None
    no_op: Flag | None = None
    replace_with_linear: Flag | None = None


class BlockFfn(ConfigSection):
    ffn_mult: Factor | None = None
    no_op: Flag | None = None
    replace_with_linear: Flag | None = None


class BlockConfig(ConfigSection):
    """One layer of DeciLM's (Nemotron-NAS) `block_configs`."""

    attention: BlockAttention = BlockAttention()
    ffn: BlockFfn = BlockFfn()


class DbrxAttnConfig(ConfigSection):
    """DBRX's `attn_config`: its KV heads."""

    kv_n_heads: Heads | None = None


# Step-3.5's `moe_layers_enum`: layer indices in one comma-separated string (up to MAX_LAYERS of them)
LayerIndexList = Annotated[str, Field(strict=True, max_length=8 * MAX_LAYERS)]


class Step3OtherAttention(ConfigSection):
    """Step-3.5's `attention_other_setting` (its published config.json form): the sliding layers' own heads."""

    num_attention_heads: Heads | None = None
    num_attention_groups: Heads | None = None
    head_dim: HeadDim | None = None


class InfLLMSparseConfig(ConfigSection):
    """MiniCPM-SALA's `sparse_config` (InfLLM-v2 on the minicpm4 layers): the keys SGLang 0.5.23 reads from it
    (layers/attention/minicpm/backend.py MiniCPMAttnBackend.__init__). kvtop reads only that it is there (SGLang's
    configs/minicpm.py has_minicpm_sparse_attention: `sparse_config is not None`), which names the compressed keys the
    plan leaves out (table_lightning.MINICPM_SPARSE); the keys are typed so a malformed section is refused at the file.
    An empty section is still a section (a model is truthy): SGLang turns the backend on, then fails on the keys."""

    kernel_size: Dim | None = None
    kernel_stride: Dim | None = None
    init_blocks: BlockCount | None = None  # the first blocks every query attends (0 allowed)
    block_size: Dim | None = None
    window_size: Window | None = None  # 0: no local window (the backend checks window_size >= 0)
    dense_len: Window | None = None  # tokens attended densely before the sparse path (8,192 in MiniCPM-SALA)
    topk: Dim | None = None


class DbrxFfnConfig(ConfigSection):
    """DBRX's `ffn_config`: its experts."""

    ffn_hidden_size: Intermediate | None = None
    moe_num_experts: Experts | None = None
    moe_top_k: Experts | None = None


def _dict_or_none(value: object) -> object:
    """A section only some family nests (Moondream3's `config`): any other family's non-dict value is not read."""
    return value if isinstance(value, dict) else None


class Moondream3Sections(ConfigSection):
    """Moondream3's `config`: the text model's own settings (`text`, vLLM's Moondream3TextConfig names), not read."""

    text: Annotated[dict[str, object] | None, BeforeValidator(_dict_or_none)] = None


class FamilyFields(ConfigSection):
    """Fields only some families state (see the module docstring)."""

    hidden_act: Name | None = None  # generic reading: relu2 is a non-gated MLP (Cosmos3 Edge)
    # attention fields of other families
    use_qkv_bias: Flag | None = None  # StableLM
    add_qkv_bias: Flag | None = None  # ChatGLM
    use_bias: Flag | None = None  # StarCoder2, Ernie: every linear layer carries a bias
    mlp_bias: Flag | None = None
    qk_layernorm: Flag | None = None  # StableLM 2
    qk_norm: Flag | None = None  # Apertus
    attn_output_gate: Flag | None = None  # Qwen3.5: q_proj also emits a per-head output gate
    headwise_attn_output_gate: Flag | None = None  # Spark-2.5: g_proj, one output gate per head
    num_loops: Layers | None = None  # Nanbeige-4.2: passes over the tied layers, KV per pass
    loop_num: Layers | None = None  # IQuest-LoopCoder: the same, its passes after the first windowed
    loop_window_size: Window | None = None  # … to this many tokens
    # LongCat-Flash-Lite's n-gram tables (ngram_vocab_size_ratio with LongCat-Flash's fields below)
    emb_split_num: Layers | None = None  # … tables per n-gram order
    emb_neighbor_num: Layers | None = None  # … the longest n-gram (orders 2 … n)
    multi_query: Flag | None = None  # GPTBigCode, Falcon: one KV head
    multi_query_attention: Flag | None = None  # ChatGLM: KV heads are multi_query_group_num
    multi_query_group_num: Heads | None = None
    new_decoder_architecture: Flag | None = None  # Falcon-40B/180B: grouped KV heads (num_kv_heads)
    kv_channels: HeadDim | None = None  # ChatGLM, Qwen-1: the head size
    ffn_hidden_size: Intermediate | None = None  # ChatGLM
    padded_vocab_size: Vocab | None = None  # ChatGLM
    num_layers: Layers | None = None  # ChatGLM, Exaone
    n_inner: Intermediate | None = None  # GPT-2, GPT-J, BigCode (None: 4 × hidden)
    parallel_attn: Flag | None = None  # Falcon: attention and MLP from one norm
    num_ln_in_parallel_attn: Annotated[int, Field(strict=True, ge=1, le=2)] | None = None  # Falcon: norms a block
    # per-kind geometry (Gemma-4's global layers, MiMo-V2's sliding layers)
    global_head_dim: HeadDim | None = None
    num_global_key_value_heads: Heads | None = None
    attention_k_eq_v: Flag | None = None
    num_kv_shared_layers: LayerCount | None = None  # Gemma-3n / Gemma-4: the last N layers read earlier KV
    use_double_wide_mlp: Flag | None = None  # Gemma-4 (E2B): those N layers' dense MLP twice intermediate_size
    hidden_size_per_layer_input: Annotated[int, Field(strict=True, ge=0, le=1 << 20)] | None = None  # Gemma-4 PLE
    vocab_size_per_layer_input: Vocab | None = None  # … its table's rows
    laurel_rank: Dim | None = None  # Gemma-3n: the laurel block's rank
    altup_num_inputs: Dim | None = None  # Gemma-3n: AltUp's inputs
    per_layer_config: dict[str, dict[str, object]] | None = None  # Gemma-4 (transformers 5.20): per-layer overrides
    swa_num_attention_heads: Heads | None = None
    swa_num_key_value_heads: Heads | None = None
    swa_head_dim: HeadDim | None = None
    swa_v_head_dim: HeadDim | None = None
    hybrid_layer_pattern: PerLayerFlags | None = None  # MiMo-V2: 1 a sliding-window layer
    # MiMo-V2: the window both engines read (not sliding_window); -1 the engines' "no window" (Grok's configs state it)
    sliding_window_size: SignedWindow | None = None
    # PLaMo 3: its windowed layers' window (Plamo3Config derives interleaved_sliding_window from it; vLLM 0.33.0
    # plamo3.py:205 reads that per layer)
    window_size: Window | None = None
    attention_projection_layout: str | None = None  # MiMo-V2.5: "fused_qkv", q|k|v fused in K|V chunks
    # IQuest-Q1: its layers as first + block × count + last (the class drops a stated layer_types), sink keys
    first_layers_types: LayerNames | None = None
    hybrid_layers_types_block: LayerNames | None = None
    num_hybrid_layers_block: LayerCount | None = None
    last_layers_types: LayerNames | None = None
    use_hybrid_layers: Flag | None = None
    # GigaChat-3.5: MLA layers by index among gated delta nets; norms' placement and kind; MLA's output gate
    full_attention_layers: LayerIndices | None = None
    layernorm_type: Name | None = None
    norm_type: Name | None = None
    gated_attention: Flag | None = None
    enable_sink_attention: Flag | None = None
    num_mtp_layers: LayerCount | None = None
    # more expert layouts
    num_experts_per_token: Experts | None = None  # Kimi-Linear
    num_shared_experts: Experts | None = None  # Kimi-Linear, XVERSE-MoE
    moe_top_k: Experts | None = None  # XVERSE-MoE, Step-3: experts a token (unlisted, a stated value read as the default)
    num_dense_layers: LayerCount | None = None  # AFMoE, LFM2-MoE: dense layers before the experts
    use_expert_bias: Flag | None = None  # LFM2-MoE: an fp32 e_score_correction_bias on the gate
    global_attn_every_n_layers: Layers | None = None  # AFMoE: full attention on every n-th layer
    layer_group_size: Layers | None = None  # Ling-2.5 (bailing_hybrid): full attention on every n-th layer
    short_conv_kernel_size: Dim | None = None  # Ling-3 (bailing_hybrid, BailingMoeV3ForCausalLM): KDA's short conv
    gated_attention_proj_granularity_type: str | None = None  # Ling-3: MLA's g_proj, head_wise or element_wise
    no_kda_lora: Flag | None = None  # Ling-3: KDA's forget and output gates full rank (f_proj, g_proj)
    # K2-Horizon (k2_horizon): value experts, an attention gate, per-head q/k norms (refused by name), a router bias
    mova_num_experts: Experts | None = None
    attention_gate_func: Name | None = None
    query_key_norm: Flag | None = None
    moe_gate_bias: Flag | None = None
    # xLLM (xllm): the same refused by its own spellings (SGLang 0.5.23 models/xllm.py)
    num_values: Experts | None = None
    apply_attn_gate: Flag | None = None
    # MiniCPM-SALA (minicpm_sala): each layer's mixer (minicpm4 attention or lightning-attn) and the lightning heads
    mixer_types: LayerNames | None = None
    lightning_nh: Heads | None = None
    lightning_nkv: Heads | None = None
    lightning_head_dim: HeadDim | None = None
    attn_use_output_gate: Flag | None = None
    use_output_gate: Flag | None = None
    use_output_norm: Flag | None = None
    sparse_config: InfLLMSparseConfig | None = None  # MiniCPM-SALA: InfLLM-v2 sparse attention on the minicpm4 layers
    routed_expert_hidden_size: Intermediate | None = None  # Kimi-K3: experts work in this latent width
    latent_moe_use_norm: Flag | None = None  # Kimi-K3: an RMSNorm on the latent (routed_expert_norm)
    mla_use_output_gate: Flag | None = None  # Kimi-K3: MLA's g_proj, hidden → heads × v_head_dim
    attn_res_block_size: Layers | None = None  # Kimi-K3: attention residual blocks (two norms, two scores a layer)
    shared_intermediate_size: Intermediate | None = None  # MiniMax-M2/M3, Granite MoE
    share_expert_dim: Intermediate | None = None  # Step-3.x
    share_q_dim: Intermediate | None = None  # Step-3: the low-rank query's width (qkv_proj, inter_norm, wq)
    use_head_wise_attn_gate: Flag | None = None  # Step-3.x: g_proj, one output gate per head (heads × hidden)
    attention_other_setting: Step3OtherAttention | None = None  # Step-3.5: the sliding layers' heads
    moe_layers_enum: LayerIndexList | None = None  # Step-3.5: its MoE layers, "3,4,…,44"
    dense_intermediate_size: Intermediate | None = None  # MiniMax-M3's dense layers
    mlp_layer_types: Annotated[list[Name], Field(max_length=MAX_LAYERS)] | None = None  # Command-A MoE: sparse/dense
    top_k_experts: Experts | None = None  # Gemma-4
    expert_intermediate_size: Intermediate | None = None  # Gemma-4's alternative name
    moe_latent_size: Intermediate | None = None  # NemotronH: experts work in a latent width
    moe_num_experts: ExpertGroups | None = None  # ERNIE 4.5 (ERNIE-4.5-VL: [text, vision])
    moe_k: Experts | None = None
    moe_topk: Experts | None = None  # Aria
    # LongCat-Flash: the experts' width, zero-computation experts (router rows without weights) and their kind,
    # n-gram embeddings (refused), the router's dtype
    expert_ffn_hidden_size: Intermediate | None = None
    zero_expert_num: Experts | None = None
    zero_expert_type: Name | None = None
    ngram_vocab_size_ratio: Factor | None = None
    rounter_params_dtype: Name | None = None
    mla_scale_q_lora: Flag | None = None
    # Hunyuan-V3: vLLM's expert width and both engines' routing flag (read without a class default)
    expert_hidden_dim: Intermediate | None = None
    route_norm: Flag | None = None
    mla_scale_kv_lora: Flag | None = None
    moe_num_shared_experts: Experts | None = None
    num_shared_expert: Experts | None = None  # HunYuan: shared MLPs (intermediate_size each) where use_mixed_mlp_moe
    use_mixed_mlp_moe: Flag | None = None
    use_cla: Flag | None = None  # HunYuan: cross-layer attention (layers reading another's KV)
    cla_share_factor: Layers | None = None
    sandwich_norm: Flag | None = None  # openPangu: pre- and post-MLP norms on every layer (Embedded refuses it)
    moe_layer_start_index: LayerIndexGroups | None = None  # ERNIE-4.5-VL: one per expert group
    moe_layer_end_index: LayerIndexGroups | None = None
    moe_layer_interval: Layers | None = None
    expert_layer_period: Layers | None = None  # Jamba
    expert_layer_offset: LayerCount | None = None
    # multi-token prediction layers, under each family's name
    mtp_num_hidden_layers: LayerCount | None = None  # Qwen3.5
    num_mtp_modules: LayerCount | None = None  # MiniMax
    # Zaya (SGLang 0.5.23 configs/zaya.py ZayaConfig): the router MLP, CCA's conv kernels, residual scaling, and the
    # per-layer lists and flags the zaya entry refuses by name
    moe_router_topk: Experts | None = None
    num_query_groups: Heads | None = None
    zaya_mlp_expansion: PerLayerIntermediate | None = None
    zaya_use_eda: Flag | None = None
    zaya_use_mod: Flag | None = None
    scale_residual_merge: Flag | None = None
    cca_time0: Dim | None = None
    cca_time1: Dim | None = None
    zaya_layers: Annotated[list[Any], Field(max_length=MAX_LAYERS)] | None = None
    swa_layers: Annotated[list[Any], Field(max_length=MAX_LAYERS)] | None = None
    cca_num_q_heads: Annotated[list[Any], Field(max_length=MAX_LAYERS)] | None = None
    num_query_groups_list: Annotated[list[Any], Field(max_length=MAX_LAYERS)] | None = None
    ffn_hidden_size_list: Annotated[list[Any], Field(max_length=MAX_LAYERS)] | None = None
    # Mamba fields of Jamba, Falcon-H1, Granite-4 and Mamba itself
    attn_layer_period: Layers | None = None
    attn_layer_offset: LayerCount | None = None
    attn_layer_indices: LayerIndices | None = None
    mamba_d_state: Dim | None = None
    mamba_expand: Dim | None = None
    mamba_dt_rank: Dim | None = None
    mamba_n_heads: Dim | None = None
    mamba_d_head: Dim | None = None
    mamba_d_ssm: Dim | None = None
    mamba_rms_norm: Flag | None = None  # Falcon-H1: a gated RMSNorm in its Mamba2 mixer
    expand: Dim | None = None
    state_size: Dim | None = None  # MambaConfig
    time_step_rank: Dim | None = None
    conv_L_cache: Dim | None = None  # LFM2's short conv
    block_auto_adjust_ff_dim: Flag | None = None  # LFM2: its MLP width from intermediate_size (WidthAdjust)
    block_ffn_dim_multiplier: Factor | None = None
    block_multiple_of: Dim | None = None
    linear_attn_config: LinearAttnConfig | None = None  # Kimi-Linear
    efficient_attention_config: EfficientAttentionConfig | None = None  # Jet-Nemotron
    sparse_attention_config: SparseAttentionConfig | None = None  # MiniMax-M3
    block_configs: Annotated[list[BlockConfig], Field(max_length=MAX_LAYERS)] | None = None  # DeciLM
    # OPT: its MLP width, biases, pre-norm (a final norm only then) and embedding width (projected in and out)
    ffn_dim: Intermediate | None = None
    enable_bias: Flag | None = None
    do_layer_norm_before: Flag | None = None
    word_embed_proj_dim: Dim | None = None
    # Whisper's decoder (table_encdec.py; its encoder's fields are the tower's, towers_whisper)
    decoder_layers: Layers | None = None
    decoder_attention_heads: Heads | None = None
    decoder_ffn_dim: Intermediate | None = None
    max_target_positions: Positions | None = None
    encoder_layers: Layers | None = None  # … and its encoder's layers, which SGLang's one token pool also sizes
    # DeepSeek-V4's compressed attention: a compress ratio per layer (then per MTP layer), grouped o LoRAs,
    # hyper-connection streams, token-id routed layers, its routed experts' stored type ("fp4": MXFP4)
    compress_ratios: Annotated[list[CompressRatio], Field(max_length=MAX_LAYERS)] | None = None
    o_groups: Heads | None = None
    o_lora_rank: Dim | None = None
    hc_mult: Dim | None = None
    num_hash_layers: LayerCount | None = None
    expert_dtype: Name | None = None
    kv_source_layer_ids: LayerIndices | None = None  # layouts DeepSeek-V4's classes build that kvtop refuses
    index_source_layer_ids: LayerIndices | None = None
    engram_layer_ids: LayerIndices | None = None
    cross_attention_layers: LayerIndices | None = None  # Mllama: the layers that attend to the image
    # Zamba2: shared transformer blocks (num_mem_blocks) over 2 × hidden, LoRA adapters per hybrid layer, Mamba2;
    # no attention_hidden_size: transformers 5.20.2 Zamba2Config.__post_init__ sets it 2 × hidden whatever the file
    # states (configuration_zamba2.py), and kvtop reads that width from the entry (SharedBlocks.width_factor)
    num_mem_blocks: Layers | None = None
    adapter_rank: Dim | None = None
    use_shared_attention_adapter: Flag | None = None
    attention_head_dim: HeadDim | None = None
    n_mamba_heads: Heads | None = None
    mamba_headdim: Dim | None = None
    mamba_ngroups: Dim | None = None
    add_bias_linear: Flag | None = None
    # Grok (SGLang grok.py): a dense MLP beside the experts (Grok-2), the embedding or LM head whole on every rank
    residual_moe: Flag | None = None
    replicate_embedding: Flag | None = None
    replicate_lm_head: Flag | None = None
    ff_intermediate_size: Intermediate | None = None  # Phi-3-small: its MLP width (Phi3SmallConfig)
    ff_dim_multiplier: Factor | None = None  # … or a multiple of the hidden width (refused: none at hand)
    attn_config: DbrxAttnConfig | None = None  # DBRX
    config: Annotated[Moondream3Sections | None, BeforeValidator(_dict_or_none)] = None  # Moondream3
    ffn_config: DbrxFfnConfig | None = None
    # Ling / Ling 2.0 (bailing_moe): the router's fp32 expert bias, the shared experts' own width (use_bias: above)
    moe_router_enable_expert_bias: Flag | None = None
    router_enable_expert_bias: Flag | None = None  # openPangu-Ultra-MoE: the fp32 score-correction bias where true
    use_rmsnorm: Flag | None = None  # vLLM's q/k norms: RMSNorm where stated, else LayerNorm
    moe_shared_expert_intermediate_size: Intermediate | None = None
    # MiniCPM-V (minicpmv): which language model the model_type carries (2.6: Qwen2; others refused by name)
    version: float | str | None = None
    # Molmo (molmo, remote MolmoConfig): the embedding's rows, the head's tie, per-layer q/k norms, the norm kind
    embedding_size: Vocab | None = None
    weight_tying: Flag | None = None
    attention_layer_norm: Flag | None = None
    norm_after: Flag | None = None
    layer_norm_type: Name | None = None
