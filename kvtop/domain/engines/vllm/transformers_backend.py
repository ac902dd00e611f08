"""What vLLM builds differently where its registry hands a class to its Transformers modeling backend.

v0.33.0 maps GPTBigCodeForCausalLM to the backend (model_executor/models/registry.py `_TRANSFORMERS_SUPPORTED_MODELS`:
("transformers", "TransformersForCausalLM")). transformers' GPTBigCodeConfig states no `base_model_tp_plan`, so
`recursive_replace` (models/transformers/base.py) shards only what its graph fusers recognise and builds every other
nn.Linear "replicate": the packed attention (`PackedQKVFuser`: c_attn a QKVParallelLinear, c_proj row-parallel) and
the vocab embedding split over TP, while the GELU MLP (c_fc → act → c_proj: no fuser, `GLUFuser` takes gated MLPs
only) is a ReplicatedLinear pair, whole on every rank. Meta-built (engine-diff registry sweep, `--params
mlc--gpt_bigcode --tps 2`): model.h.N.mlp.c_fc.weight [8192, 2048] and c_proj.weight [2048, 8192] at TP 2, the rank
1,947,471,872 B (kvtop's split MLP had 805,502,976 B less). v0.13.0 builds its own gpt_bigcode.py (GPTBigMLP:
ColumnParallelLinear c_fc, RowParallelLinear c_proj); the releases between were not read (the own class assumed).
Of v0.33.0's other backend text classes only HunYuanDenseV1 / HunYuanMoEV1 lack a tp_plan (transformers 5.20.2's
config classes read in its venv); their MLPs are gated, which `GLUFuser` fuses and splits (not run on meta).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import MlpSplit
from kvtop.domain.model import ModelSpec

REPLICATED_MLP_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "read at v0.13.0: gpt_bigcode.py GPTBigMLP (ColumnParallelLinear c_fc, RowParallelLinear "
                         "c_proj); through v0.24.0 (registry.py:125 gpt_bigcode)"),
    Era("0.25.0", frozenset({"GPTBigCodeForCausalLM"}),
        "first in v0.25.0: registry.py:643 _TRANSFORMERS_SUPPORTED_MODELS; models/transformers/base.py:426-450 "
        "recursive_replace (no tp_plan: 'replicate the rest', the unfused MLP), the same at v0.33.0"),
))  # fmt: skip


def replicated_mlp_split(model: ModelSpec, version: ResolvedVersion) -> MlpSplit:
    """The dense MLP whole on every rank (one shard) where this release's Transformers backend replicates it
    (`EngineRules.mlp_split`, the seam TurboMind's EP answers too); `MlpSplit()` (over TP) otherwise."""
    era = REPLICATED_MLP_ERAS.era(version)
    if model.architecture not in era.value:
        return MlpSplit()
    note = f"vLLM {version.label}'s Transformers backend builds the unfused MLP replicated, whole on every rank ({era.source})"
    return MlpSplit(dense_shards=1, note=note)
