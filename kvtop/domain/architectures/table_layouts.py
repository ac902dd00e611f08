"""Families issue 26 moved from "not modelled (no entry)" to an entry: layouts whose engine classes build standard
pieces in their own arrangement (Step-3's low-rank query over one KV head; Beam's gated GQA in sandwich norms)."""

from __future__ import annotations

from kvtop.domain.architectures import towers_catalog as t
from kvtop.domain.architectures.defaults import DefaultValue, tf
from kvtop.domain.architectures.description import Architecture, Attention
from kvtop.domain.architectures.layer_rules import StatedOnly
from kvtop.domain.architectures.moe_rules import IndexList, LayerTypes, Moe, Shared
from kvtop.domain.model import BodyShape

A = Architecture

# Step3TextConfig — vLLM 0.33.0 transformers_utils/configs/step3_vl.py (vLLM's own class, _CONFIG_REGISTRY
# step3_text); moe_layers_enum is a tuple there (4 … 59), which step3_text.py cannot read (it splits a string on ","):
# the same layers as that string are the default here
STEP3_TEXT: dict[str, DefaultValue] = {
    "hidden_size": 7168, "intermediate_size": 18432, "num_attention_heads": 64, "num_key_value_heads": 1,
    "num_hidden_layers": 61, "max_position_embeddings": 65536, "vocab_size": 128815, "moe_intermediate_size": 5120,
    "moe_num_experts": 48, "moe_top_k": 3, "share_expert_dim": 5120, "share_q_dim": 2048, "head_dim": 256,
    "moe_layers_enum": ",".join(str(i) for i in range(4, 60)), "tie_word_embeddings": False,
}  # fmt: skip

# BeamConfig — transformers 5.20.2 models/beam/configuration_beam.py (the registry default's class); vLLM 0.33.0 and
# SGLang 0.5.23 read a config through their own BeamConfig, whose defaults differ from it and from each other
BEAM: dict[str, DefaultValue] = {
    "vocab_size": 151936, "hidden_size": 5120, "intermediate_size": 20480, "num_hidden_layers": 52,
    "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 8192,
    "tie_word_embeddings": False, "sliding_window": 512, "moe_intermediate_size": 2560, "num_experts_per_tok": 8,
    "num_experts": 256,
}  # fmt: skip

LAYOUTS: tuple[Architecture, ...] = (
    # Step-3's text model (vLLM 0.33.0 models/step3_text.py Step3TextAttention): one KV head whatever the config says
    # (num_kv_heads=1; num_attention_groups, read as the KV heads, above 1 is refused; the positions max_seq_len), a low-rank query — qkv_proj a ReplicatedLinear of
    # share_q_dim + 2 × head_dim rows, inter_norm over share_q_dim, wq share_q_dim → heads × head_dim split over TP —
    # and o_proj split over TP; experts (no router bias, a model-dtype gate) on the layers moe_layers_enum names, each
    # beside one shared MLP share_expert_dim wide; the LM head its own matrix (ParallelLMHead, never tied). SGLang
    # 0.5.23 registers no text-only Step-3 class.
    # Step3VLForConditionalGeneration: the same text model under step3_vl's text_config, its vision encoder the
    # step3_vl tower (towers_step3_vl)
    A("step3_text", "Step3TextConfig (vLLM)", "vLLM 0.33.0 vllm/transformers_utils/configs/step3_vl.py", STEP3_TEXT,
      ("Step3TextForCausalLM", "Step3VLForConditionalGeneration"), tower=t.STEP3_VL,
      attention=Attention(q_low_rank_field="share_q_dim"),
      moe=Moe("moe_num_experts", per_token_field="moe_top_k", shared=Shared(size_field="share_expert_dim"),
              placement=IndexList()),
      refused_over=(("num_key_value_heads", 1, "Step-3's KV heads (vLLM's Step3TextAttention builds exactly one)"),)),
    # Beam (vLLM 0.33.0 models/beam/nvidia/attention.py, model.py, moe.py; SGLang 0.5.23 models/beam.py): GQA with
    # per-head q/k norms and a sigmoid output gate of its own width (output_gate_proj / gate_proj, heads × head_dim,
    # split with the heads) plus gate_bias [heads]; sliding layers (RoPE) and full ones (NoPE) as layer_types says;
    # four norms a layer (input, post-attention, pre- and post-feedforward); a dense MLP or experts as
    # mlp_layer_types says, the router an fp32 gate with an fp32 e_score_correction_bias, no shared expert; the LM
    # head its own matrix (vLLM raises NotImplementedError on tie_word_embeddings: refused by name). Where a config
    # lists no layer_types / mlp_layer_types the engines' config classes disagree (vLLM's BeamConfig: every layer
    # sliding and sparse; transformers': every 6th and the last full, 3 dense first): refused by name
    A("beam", "BeamConfig", tf("beam"), BEAM, ("BeamForCausalLM",), layers=StatedOnly(),
      attention=Attention(qk_norm=True, output_gate_proj=True, output_gate_bias=True),
      body=BodyShape(norms_per_layer=4),
      moe=Moe("num_experts", placement=LayerTypes(), router_bias=True, router_fp32=True),
      refused_when=(("tie_word_embeddings", "tied embeddings (vLLM 0.33.0's Beam requires them untied)"),)),
)  # fmt: skip
