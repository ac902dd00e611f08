"""SGLang's Eagle-3 draft head as built, per rank (srt/models/llama_eagle3.py, read at 0.5.23; the registry sweep
built `LlamaForCausalLMEagle3` from both SpecForge heads at TP 1 and 2 on the meta device, equal to this).

Beside the plain decoder book of the head's config (embedding, its layers, final norm, LM head):
- the first layer's qkv_proj takes 2 × hidden (the token embedding and the fused hidden states side by side):
  QKVParallelLinear(2 × hidden_size, …), its rows split as any qkv_proj's;
- every layer holds a hidden_norm (RMSNorm of hidden_size) besides its two norms;
- the fc (`torch.nn.Linear(hidden_size_in × num_aux, hidden_size)`, bias where `bias`): whole on every rank, with
  `input_norm` (norm_before_fc) over its input and `fc_norm` (one norm of hidden_size_in per state) where set;
- the LM head: ParallelLMHead of draft_vocab_size rows (the vocabulary where none is stated), split and padded as
  any vocab-parallel head; tied, the embedding itself.
"""

from __future__ import annotations

from kvtop.domain.deployment_math import draft_weights_bytes
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec, vocab_parallel_rows

SOURCE = "srt/models/llama_eagle3.py LlamaDecoderLayer, LlamaModel, LlamaForCausalLMEagle3 (read at 0.5.23)"


def eagle3_head_bytes(draft: ModelSpec, layout: ParallelLayout) -> int | None:
    """The Eagle-3 head's resident weights per rank as SGLang builds it; None where `draft` is no Eagle-3 head."""
    head = draft.eagle3
    if head is None:
        return None
    tp, width, hidden = layout.tp, draft.dtype_bytes, draft.hidden_size
    geometry = draft.geometry(0)
    q_rows = geometry.heads // tp * geometry.head_dim
    kv_rows = max(1, geometry.kv_heads // tp) * geometry.head_dim
    extra = (q_rows + 2 * kv_rows) * hidden  # layer 0's qkv_proj: its input twice as wide
    extra += draft.num_layers * hidden  # each layer's hidden_norm
    extra += head.fusion_in * hidden + (hidden if head.fusion_bias else 0)  # the fc, whole
    extra += head.fusion_in if head.norm_before_fusion else 0
    extra += head.aux_states * head.target_hidden_size if head.norm_per_aux else 0
    if not draft.tie_word_embeddings and head.draft_vocab_size is not None:
        extra += (
            vocab_parallel_rows(head.draft_vocab_size, tp) - vocab_parallel_rows(draft.vocab_size, tp)
        ) * hidden
    return draft_weights_bytes(draft, layout) + extra * width
