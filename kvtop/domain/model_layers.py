"""The kinds of layer a model stacks and the attention, MoE and recurrent-state shapes they hold (part of `ModelSpec`,
`kvtop.domain.model`): the facts the KV and weights books read per layer."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict


class AttentionKind(str, Enum):
    MHA = "MHA"
    GQA = "GQA"
    MQA = "MQA"
    MLA = "MLA"
    DSA = "DSA"  # MLA plus a sparse-attention indexer key cache (DeepSeek-V3.2)


# The kinds whose KV is MLA's latent (DSA adds its indexer keys beside it)
MLA_KINDS = frozenset({AttentionKind.MLA, AttentionKind.DSA})


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

    @property
    def latent_width(self) -> int:
        """Elements of the one cached latent per token and layer: `kv_lora_rank + qk_rope_head_dim` (576 for DeepSeek-V3)."""
        return self.kv_lora_rank + self.qk_rope_head_dim


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
    # the config lists its KDA layers (Kimi-Linear's `linear_attn_config.kda_layers`, non-empty): how an engine's
    # config check finds KDA (SGLang 0.5.20 configs/model_config.py:183-205 `uses_kda_attention`); Ling-3 lists none
    kda_layers_listed: bool = False
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
