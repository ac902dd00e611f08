"""The PyTorch engine's DSA (sparse MLA) models: which latent layout a launch stores, and the indexer's prefill
score workspace reserved beside the runtime (docs/engines/lmdeploy.md §4.1, §4.3).

LMDeploy keys both on its config builders (`configurations/deepseek_v32.py`, `glm_moe_dsa.py`), which set
`mla_index_topk`: kvtop on the config's `model_type`.
"""

from __future__ import annotations

from kvtop.domain.engines.lmdeploy.eras import DSA_MODEL_TYPES, pytorch_dsa_auto_fp8, pytorch_dsa_workspace
from kvtop.domain.engines.lmdeploy.flags import QUANT_POLICIES
from kvtop.domain.engines.versions import Era, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.kv import KvStorage
from kvtop.domain.model import ModelSpec

# --quant-policy values a DSA model takes: none (the era's default) or fp8 (the fp8_ds_mla latent)
_DSA_POLICIES = ("auto", "fp8_e4m3")


def is_dsa(model: ModelSpec) -> bool:
    """A model LMDeploy builds as sparse MLA (`mla_index_topk` set)."""
    return model.model_type in DSA_MODEL_TYPES


def dsa_storage(model: ModelSpec, kv_cache_dtype: str, storage: KvStorage, version: ResolvedVersion) -> KvStorage:
    """`storage`, with `auto` read as FP8 (`fp8_ds_mla`) where the release's builder makes that the default; a
    policy other than 0 or 16 is refused (v0.16.0 on LMDeploy raises; before, it stored fp8_ds_mla regardless)."""
    if not is_dsa(model):
        return storage
    asked = QUANT_POLICIES.get(kv_cache_dtype.strip().lower(), kv_cache_dtype)
    if asked not in _DSA_POLICIES:
        raise InputError(
            f"LMDeploy's sparse-MLA models take --quant-policy 0 or 16 only (got {kv_cache_dtype}): from v0.16.0 "
            "'Sparse MLA does not support quant_policy' (cache_engine.py _update_mla_kv_cache_dtype); before, the "
            "policy was overridden to fp8_ds_mla (cache_engine.py: quant_policy = 0)",
            field="--quant-policy",
        )
    if auto_is_fp8(model, version) is not None:
        return storage.model_copy(update={"auto_fp8_dsa": True})
    return storage


def auto_is_fp8(model: ModelSpec, version: ResolvedVersion) -> Era[frozenset[str]] | None:
    """The era that makes `auto` FP8 for this model, else None."""
    era = pytorch_dsa_auto_fp8(version)
    return era if is_dsa(model) and model.model_type in era.value else None


def score_workspace(model: ModelSpec, version: ResolvedVersion) -> Era[int] | None:
    """The indexer's prefill score workspace reserved with the runtime (0.17.0 on), else None."""
    era = pytorch_dsa_workspace(version)
    return era if is_dsa(model) and era.value else None
