"""vLLM's EAGLE-3 draft head as loaded, per rank (docs/engines/vllm.md §14, EAGLE-3 heads). Read at v0.20.0 and v0.24.0.

vLLM builds a `…Eagle3` draft as `Eagle3LlamaForCausalLM` (model_executor/models/llama_eagle3.py v0.20.0):
- `num_hidden_layers` decoder layers of the draft's config, layer 0's qkv_proj over 2 × hidden (:51-67), each with a
  `hidden_norm` (:69); the final `norm` (:195-198);
- the fc, `ReplicatedLinear(states × target_hidden_size (else hidden), hidden, bias=False)` whole on every rank, with
  an `input_norm` over its input where `norm_before_fc` (:174-194): three states whatever the config says up to
  v0.21.0 (:175-178); from v0.22.0 the config's `num_aux_hidden_states` (else its eagle_aux_hidden_state_layer_ids,
  else 3) and, where `fc_norm`, a norm of the target's width per state (v0.22.0 :179-207, v0.24.0 :178-207);
- `embed_tokens` of the vocabulary (:157-161) and a `ParallelLMHead` of `draft_vocab_size` rows (the vocabulary
  where unset, :279-299), with `draft_id_to_target_id`, an int64 row per draft token (:303-306).
The proposer's `load_model` then shares the target's embedding (at PP 1) and LM head where the checkpoint has none or
holds the target's own (v1/spec_decode/llm_base_proposer.py v0.20.0:1373-1374, :1391-1458 and :1460-1505), deleting
the draft's: "Model loading took" (the allocator's bytes after the load) no longer holds them. A config cannot say
whether a checkpoint's head equals the target's; a `draft_vocab_size` other than the vocabulary cannot, so that head
is the draft's own. The rest is assumed shared (speculators' checkpoints copy the verifier's: dcstang's Qwen3-8B head,
2.82 GiB on disk with both full-vocabulary tables, loads 0.51 GiB, what the layer, the fc and the map hold).

Without the draft's config (its `model` a local path kvtop cannot read) the head is assumed in the target's shape,
as its one draft KV layer is (deployment.draft_kv_layers): `target_shaped_bytes`, what a one-layer head holds beside
any embedding and LM head, is the budget's `assumed` draft weights, and the weights term's interval keeps as much
again (`unsized_error`: a deeper head, its own LM head) so that the interval holds where the centre cannot.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.spec_methods import EAGLE3, stated_method
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.vocab_rows import vocab_parallel_rows
from kvtop.domain.weights import weights_book
from kvtop.domain.wording import gib

SOURCE = ("model_executor/models/llama_eagle3.py Eagle3LlamaForCausalLM (v0.20.0 :51-69, :157-198, :279-306); "
          "v1/spec_decode/llm_base_proposer.py _maybe_share_embeddings / _maybe_share_lm_head (v0.20.0 :1391-1505)")  # fmt: skip
FC_STATES = 3  # llama_eagle3.py v0.20.0:175-178: target_hidden_size × 3, whatever the aux count
# whether the fc takes the config's auxiliary states (and its fc_norm) or always three (module docstring)
FC_STATES_FROM_CONFIG: Eras[bool] = Eras((
    Era("", False, "llama_eagle3.py v0.20.0:175-178, v0.21.0:176-178: target_hidden_size × 3"),
    Era("0.22.0", True, "llama_eagle3.py v0.22.0:179-207, v0.24.0:178-207: × num_aux_hidden_states, fc_norm"),
))  # fmt: skip
MAP_BYTES = 8  # draft_id_to_target_id: torch.long
SHARED = ("the embedding and an LM head of the whole vocabulary assumed shared with the target (the proposer keeps "
          "the target's where the checkpoint has none or the same: llm_base_proposer.py v0.20.0:1391-1505)")  # fmt: skip


def head_bytes(draft: ModelSpec, layout: ParallelLayout, version: ResolvedVersion) -> int | None:
    """The EAGLE-3 head's resident weights per rank as vLLM loads it (module docstring); None where `draft` is no
    EAGLE-3 head. Its layers split as any decoder's at the target's TP, the fc whole."""
    head = draft.eagle3
    if head is None:
        return None
    tp_only = layout.model_copy(update={"pp": 1, "dp": 1, "ep": 1, "dp_attention": False})
    layers = weights_book(draft, tp_only, range(draft.num_layers), first_stage=False, last_stage=False).total_bytes
    tp, width, hidden = layout.tp, draft.dtype_bytes, draft.hidden_size
    geometry = draft.geometry(0)
    extra = (geometry.heads // tp + 2 * max(1, geometry.kv_heads // tp)) * geometry.head_dim * hidden  # layer 0's qkv
    extra += draft.num_layers * hidden + hidden  # each layer's hidden_norm, the final norm
    by_config = FC_STATES_FROM_CONFIG.at(version)
    fc_in = (head.aux_states if by_config else FC_STATES) * head.target_hidden_size
    extra += fc_in * hidden + (fc_in if head.norm_before_fusion else 0) + (fc_in if by_config and head.norm_per_aux else 0)
    vocab = head.draft_vocab_size or draft.vocab_size
    own_head = vocab != draft.vocab_size  # a head of its own vocabulary cannot be the target's
    extra += vocab_parallel_rows(vocab, tp) * hidden if own_head else 0
    embedding = vocab_parallel_rows(draft.vocab_size, tp) * hidden if layout.pp > 1 else 0  # PP: loaded separately
    return layers + (extra + embedding) * width + vocab * MAP_BYTES


def target_shaped_bytes(model: ModelSpec, tp: int) -> int:
    """What a one-layer EAGLE-3 head in the target's shape holds on a rank beside any embedding and LM head: the
    decoder layer (qkv over 2 × hidden, o, a gated MLP of the target's intermediate size, three norms), the fc of
    3 × hidden and the final norm, in the target's dtype; the map of the vocabulary's int64 rows."""
    geometry, hidden = model.geometry(0), model.hidden_size
    q_rows = geometry.heads // tp * geometry.head_dim
    kv_rows = max(1, geometry.kv_heads // tp) * geometry.head_dim
    layer = 2 * hidden * (q_rows + 2 * kv_rows) + q_rows * hidden + 3 * hidden * model.intermediate(0) // tp
    parts = layer + 3 * hidden + FC_STATES * hidden * hidden + hidden  # input, post-attention, hidden norms; final
    return parts * model.dtype_bytes + model.vocab_size * MAP_BYTES


def unsized_error(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """The error an EAGLE-3 head kvtop could not size adds to the weights term: the head in the target's shape
    (`target_shaped_bytes`); None where the launch runs none, or its draft's config or weights were given."""
    if inputs.model is None or inputs.draft_weights_known or stated_method(inputs.settings) != EAGLE3:
        return None
    size = target_shaped_bytes(inputs.model, inputs.layout.tp)
    return size, (f"an EAGLE-3 draft of unknown config: its weights assumed a one-layer head in the target's "
                  f"shape, ± {gib(size)} ({SOURCE.split(' (')[0]})")  # fmt: skip
