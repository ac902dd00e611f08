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
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.vocab_rows import vocab_parallel_rows

SOURCE = "srt/models/llama_eagle3.py LlamaDecoderLayer, LlamaModel, LlamaForCausalLMEagle3 (read at 0.5.23)"
# 0.5.6.post2's LlamaModel builds one `midlayer` whatever num_hidden_layers says, with qkv over 2 × hidden, and an
# fc of hidden_size_in × 3 (no num_aux, no input_norm or fc_norm); 0.5.23 builds num_hidden_layers layers (layer 0
# over 2 × hidden) and resolves the aux count. A release between takes the rule read before it.
LAYERED_HEAD_ERAS: Eras[bool] = Eras((
    Era("", False, "llama_eagle3.py LlamaModel.midlayer, fc hidden_size_in * 3 (read at 0.5.6.post2)"),
    Era("0.5.23", True, "llama_eagle3.py LlamaModel.layers, num_aux_hidden_states (read at 0.5.23)"),
))  # fmt: skip


def eagle3_head_bytes(draft: ModelSpec, layout: ParallelLayout, version: ResolvedVersion) -> int | None:
    """The Eagle-3 head's resident weights per rank as SGLang `version` builds it; None where `draft` is no
    Eagle-3 head, or one of several layers under the one-midlayer releases (then read as a plain decoder)."""
    head = draft.eagle3
    if head is None:
        return None
    if not era_for(LAYERED_HEAD_ERAS, version).value:
        if draft.num_layers != 1:
            return None
        head = head.model_copy(update={"aux_states": 3, "fusion_in": 3 * head.target_hidden_size,
                                       "norm_before_fusion": False, "norm_per_aux": False})  # fmt: skip
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
