"""vLLM's `extract_hidden_states` speculative method: the target's hidden states cached beside its KV
(docs/engines/vllm.md §14, extract_hidden_states).

`--speculative-config '{"method": "extract_hidden_states", "draft_model_config": {"hf_config":
{"eagle_aux_hidden_state_layer_ids": [...]}}}'` (the speculators hidden-state extraction server) builds
`ExtractHiddenStatesModel` (model_executor/models/extract_hidden_states.py, read at v0.20.0, v0.24.0, v0.26.0 and
v0.28.0): no weights (`load_weights` returns an empty set) and one cache-only attention layer whose KV spec holds
`num_heads = len(eagle_aux_hidden_state_layer_ids)` rows of `head_size = hidden_size` (the target's, whole on every
rank) a token, in the model's dtype (a quantized KV cache dtype is replaced by "auto": v0.20.0 :356, v0.24.0 :353).
The spec is an `MLAAttentionSpec` at v0.20.0 (:328, one tensor, no K and V) and a `HiddenStateCacheSpec(MLAAttentionSpec)`
from v0.24.0 (:325; v1/kv_cache_interface.py v0.24.0:434): a full-attention spec either way, so beside a target whose
layers are all full attention `UniformTypeKVCacheSpecs` puts it in the target's one group, its page size added to the
target's (v1/core/kv_cache_utils.py v0.20.0:1632, v0.24.0:1723): every token costs the target's cell plus
aux layers × hidden × dtype bytes. dcstang/eagle3-spec-dec's Qwen3-8B start at v0.20.0 logs 52.48 GiB for 312,640
tokens, 180,239 B a token (180,222–180,256 within the two decimals): 147,456 + 4 × 4,096 × 2 = 180,224. Beside sliding-window or state layers v0.24.0 pulls it
out into a group of its own padded to the common page (:1737-1757): not modelled, refused. Releases before v0.20.0
were not read (refused); those after v0.28.0 were not read and are planned as v0.28.0."""

from __future__ import annotations

from kvtop.domain.deployment import DeploymentSetup
from kvtop.domain.deployment_flags import flag_json
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_layers import LayerKind

METHOD = "extract_hidden_states"
FIELD = "--speculative-config"
SOURCE = ("model_executor/models/extract_hidden_states.py ExtractHiddenStatesModel (v0.20.0 :328 and :356-368, "
          "v0.24.0 :325 and :353-365); v1/core/kv_cache_utils.py UniformTypeKVCacheSpecs (v0.20.0 :1632, "
          "v0.24.0 :1723)")  # fmt: skip
# whether kvtop read the release's cache-only layer: None where it did not (refused), else the source's words
READ_ERAS: Eras[str | None] = Eras((
    Era("", None, "releases before v0.20.0 not read"),
    Era("0.20.0", "read at v0.20.0 (MLAAttentionSpec)", "extract_hidden_states.py v0.20.0:328"),
    Era("0.24.0", "read at v0.24.0, v0.26.0, v0.28.0 (HiddenStateCacheSpec); later releases not read",
        "extract_hidden_states.py v0.24.0:325, v0.26.0:328, v0.28.0:328"),
))  # fmt: skip


def aux_layer_ids(settings: LaunchSettings) -> list[object] | None:
    """`eagle_aux_hidden_state_layer_ids` as `--speculative-config`'s draft_model_config.hf_config states it (what
    SpeculativeConfig passes to ExtractHiddenStatesConfig, config/speculative.py v0.20.0:537-550); None where not."""
    draft = flag_json(settings, "speculative-config").get("draft_model_config")
    hf_config = draft.get("hf_config") if isinstance(draft, dict) else None
    ids = hf_config.get("eagle_aux_hidden_state_layer_ids") if isinstance(hf_config, dict) else None
    return ids if isinstance(ids, list) else None


def cached_states(settings: LaunchSettings, model: ModelSpec, version: ResolvedVersion) -> int:
    """The hidden states each token caches (the cache-only layer's rows); an UnsupportedModelError naming
    --speculative-config where kvtop cannot plan them as the release does."""
    read = READ_ERAS.at(version)
    if read is None:
        raise UnsupportedModelError(f"speculative method '{METHOD}' at vLLM {version.text}: its hidden-state cache "
                                    "was read from v0.20.0 on; earlier releases are not modelled", field=FIELD)  # fmt: skip
    ids = aux_layer_ids(settings)
    if not ids:
        raise UnsupportedModelError(
            f"speculative method '{METHOD}' without draft_model_config.hf_config.eagle_aux_hidden_state_layer_ids: "
            "the hidden states it caches a token are not known (vLLM reads them from the target's config then), "
            "not modelled", field=FIELD)  # fmt: skip
    if any(kind is not LayerKind.FULL for kind in model.layer_attention) or model.mla is not None:
        raise UnsupportedModelError(
            f"speculative method '{METHOD}' beside a target with other than full-attention layers: vLLM gives its "
            "hidden-state cache a group of its own padded to the common page (v1/core/kv_cache_utils.py "
            "v0.24.0:1737-1757), not modelled", field=FIELD)  # fmt: skip
    return len(ids)


def cache_only_cell(model: ModelSpec, settings: LaunchSettings, setup: DeploymentSetup) -> int | None:
    """`DeploymentRules.cache_only_cell`: the bytes a token the cache-only layer holds on every rank, the states ×
    the target's hidden size in its dtype, whole on every rank; None where the launch caches none."""
    states = len(aux_layer_ids(settings) or ()) if setup.spec_method == METHOD else 0
    return states * model.hidden_size * model.dtype_bytes if states else None
