"""Which classes of the PyTorch engine build the vocab embedding and the LM head whole on every rank, by release
(`LmdeployRules.vocab_split`; docs/engines/lmdeploy.md §16.2).

Read in the wheels 0.9.0, 0.10.2, 0.11.0, 0.12.0, 0.14.0, 0.16.0 and 0.18.0 (PyPI; lmdeploy/pytorch/models/):

* Most classes build the embedding as `nn.Embedding(vocab, hidden)` (llama.py 0.9.0:210, 0.18.0:221) or
  `build_embedding(...)` without is_tp (models/utils/model.py 0.14.0:195, 0.18.0:199-225: `is_tp: bool = False`,
  `ParallelEmbedding` then keeps vocab_size rows, unpadded), and the LM head as `build_rowwise_linear(hidden,
  vocab)` or `build_lm_head` (model.py 0.14.0:135, 0.18.0:139-157), whose `is_tp` defaults to False
  (nn/linear/__init__.py): both whole on every rank at any --tp, and in the --dp world (pytorch_world.py).
* The classes below pass is_tp=True to `ParallelEmbedding` or build a `ParallelLMHead` (nn/embedding.py, is_tp
  True by default) with layer_type 'attn': split over attention TP (nn/embedding.py 0.18.0:22-62, 119-139:
  vocab padded to 64 ÷ the 'attn' group's tp), which is --tp outside the DP world and world ÷ dp inside it.
* Before v0.9.0: not read; the book's split over TP stands (docs/engines/lmdeploy.md says so).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import SplitGroup, VocabSplit
from kvtop.domain.model import ModelSpec

_DEEPSEEK_V2 = frozenset({"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "Glm4MoeLiteForCausalLM"})

# (architectures whose embedding splits over TP, architectures whose LM head does); None: not read (the book's split)
SPLIT_CLASSES_ERAS: Eras[tuple[frozenset[str], frozenset[str]] | None] = Eras((
    Era("", None, "not read before v0.9.0"),
    Era("0.9.0", (frozenset(), frozenset()),
        "models/*.py (v0.9.0, v0.10.2, v0.11.0): nn.Embedding and build_rowwise_linear without is_tp in every class"),
    Era("0.12.0", (_DEEPSEEK_V2, frozenset()),
        "models/deepseek_v2.py (v0.12.0:968, v0.14.0:972) ParallelEmbedding(is_tp=True); every other class whole, "
        "every LM head build_rowwise_linear / build_lm_head without is_tp"),
    Era("0.16.0", (_DEEPSEEK_V2 | {"DeepseekV4ForCausalLM"}, _DEEPSEEK_V2 | {"DeepseekV32ForCausalLM"}),
        "models/deepseek_v2.py (v0.16.0:986, 1140) ParallelEmbedding(is_tp=True) and ParallelLMHead, "
        "deepseek_v4.py:785 build_embedding(is_tp=True), deepseek_v32.py:539 ParallelLMHead (v0.15.x not read)"),
    Era("0.18.0", (_DEEPSEEK_V2 | {"DeepseekV4ForCausalLM", "KimiK25ForConditionalGeneration",
                                   "Kimi_K25ForConditionalGeneration"}, _DEEPSEEK_V2 | {"DeepseekV32ForCausalLM"}),
        "models/deepseek_v2.py (v0.18.0:1016, 1169), deepseek_v4.py:730, kimi_k2_language.py:765 "
        "ParallelEmbedding(is_tp=True) (Kimi-K2.5's head whole, :965), deepseek_v32.py:603 ParallelLMHead "
        "(v0.17.x not read)"),
))  # fmt: skip


def pytorch_vocab_split(model: ModelSpec, version: ResolvedVersion) -> VocabSplit:
    """Over which group the PyTorch engine at `version` splits the model's embedding and LM head: whole on every
    rank, or over attention TP where the class builds a ParallelEmbedding / ParallelLMHead."""
    era = SPLIT_CLASSES_ERAS.era(version)
    if era.value is None:
        return VocabSplit()
    # those it splits go over attention TP (ParallelEmbedding / ParallelLMHead take layer_type 'attn': world ÷ dp
    # in its DP world, `ParallelLayout.attn_tp`)
    embedding_split, head_split = era.value
    embedding = SplitGroup.ATTENTION_TP if model.architecture in embedding_split else SplitGroup.WHOLE
    head = SplitGroup.ATTENTION_TP if model.architecture in head_split else SplitGroup.WHOLE
    note = (f"LMDeploy {version.label}'s PyTorch engine builds it without TP (nn.Embedding, build_embedding and "
            "build_lm_head at is_tp False: models/utils/model.py 0.18.0:139-225; vocab_split.py)")  # fmt: skip
    if embedding is not SplitGroup.WHOLE or head is not SplitGroup.WHOLE:
        note = (f"LMDeploy {version.label}'s PyTorch engine builds the embedding {_how(embedding, 'ParallelEmbedding')} "
                f"and the LM head {_how(head, 'ParallelLMHead')} (vocab_split.py)")  # fmt: skip
    return VocabSplit(embedding=embedding, lm_head=head, note=note)


def _how(group: SplitGroup, built_as: str) -> str:
    """'whole', or over attention TP as the class that builds the table says (ParallelEmbedding, ParallelLMHead)."""
    return "whole" if group is SplitGroup.WHOLE else f"over attention TP ({built_as} layer_type 'attn', nn/embedding.py)"
