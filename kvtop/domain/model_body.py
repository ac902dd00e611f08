"""The parts of a model around its layers' big matrices (part of `ModelSpec`, `kvtop.domain.model`): the small
tensors each family's modules hold (`BodyShape`), blocks several layers share, the vision section's size and an
Eagle-3 head's fusion. The weights book reads them; the KV book never does."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


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
    deepstack_levels: int | None = None  # len(deepstack_visual_indexes) where the section states the list, else None

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
    # a DFlash drafter's `dflash_config.use_swa`: every layer sliding-window (vLLM from v0.25.0, engines/vllm/dflash.py)
    use_swa: bool = False
