"""SGLang's default trtllm_mla: the model classes SGLang sends to the TensorRT-LLM MLA kernels on SM100 where the
launch names no attention backend, by the release each class joined the list.

SGLang reads the config's first architecture (`hf_config.architectures[0]`: a wrapper's own class, e.g.
KimiK25ForConditionalGeneration, not its language model's) against one list; a class on it whose checkpoint has no
indexer (`index_topk`: is_deepseek_nsa / is_deepseek_dsa, which take DSA's own backend) gets
`attention_backend = "trtllm_mla"` on `is_sm100_supported()` / `get_platform().is_sm100` (capability major 10 only)
when --attention-backend, --prefill-attention-backend and --decode-attention-backend are all unset. The backend then
pages by 32 or 64 (64 over any other --page-size: attention_backends.PAGE_RULES) and takes its --kv-cache-dtype
values only (attention_backends.KV_DTYPES). Read in the wheels of every release from 0.5.3 to 0.5.23, each class's
first release bisected against the one before it (the sources below).
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.engines.sglang.attention_backends import (
    ATTENTION,
    check_kv_dtype,
    live_page_rule,
    named_backends,
    since,
)
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import SM100
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import AttentionKind, ModelSpec


class DefaultMlaClass(NamedTuple):
    """A model class SGLang sends to trtllm_mla on SM100 by default, from `since`."""

    architecture: str
    since: str
    source: str


_V0532 = "0.5.3.post2 server_args.py:815-824 (0.5.3.post1 has no default backend for it)"
_V0561 = "0.5.6.post1 server_args.py:959-962, :1048 (0.5.6 :939 lists DeepseekV3ForCausalLM only)"
_V059 = "0.5.9 server_args.py:1197-1203, :1285 (0.5.8.post1 :1104-1108 without it)"
_V0512 = "0.5.12 server_args.py:1786-1793, :1900 (0.5.11 :1673-1679 without it)"
_V0516 = "0.5.16 arg_groups/overrides.py:323-331, :413 (0.5.15.post1 :309-316 without it)"
_V0519 = "0.5.19 arg_groups/model_overrides/deepseek_v2.py:20-30, :113 (0.5.18 arg_groups/overrides.py:593-602 without it)"
_V0520 = "0.5.20 arg_groups/model_overrides/deepseek_v2.py:20-33, :159 (0.5.19 :20-30 without it)"
DEFAULT_MLA_CLASSES: tuple[DefaultMlaClass, ...] = (
    DefaultMlaClass("DeepseekV3ForCausalLM", "0.5.3.post2", _V0532),
    DefaultMlaClass("MistralLarge3ForCausalLM", "0.5.6.post1", _V0561),
    DefaultMlaClass("PixtralForConditionalGeneration", "0.5.6.post1", _V0561),
    DefaultMlaClass("KimiK25ForConditionalGeneration", "0.5.9", _V059),
    DefaultMlaClass("GlmMoeDsaForCausalLM", "0.5.9", _V059),  # every GLM-5 checkpoint has an indexer: DSA's backend
    DefaultMlaClass("DeepseekV32ForCausalLM", "0.5.12", _V0512),  # likewise DeepSeek-V3.2
    DefaultMlaClass("LongcatFlashForCausalLM", "0.5.16", _V0516),
    DefaultMlaClass("LongcatFlashForCausalLMNextN", "0.5.16", _V0516),
    DefaultMlaClass("Dots3NoteForCausalLM", "0.5.19", _V0519),
    DefaultMlaClass("Glm5NextForConditionalGeneration", "0.5.20", _V0520),
    DefaultMlaClass("HYV4ForCausalLM", "0.5.20", _V0520),
    DefaultMlaClass("HYV4ForCausalLMNextN", "0.5.20", _V0520),
)  # fmt: skip
# the same list at 0.5.23 (arg_groups/model_overrides/deepseek_v2.py:37-50, the backend set at :178-187)
_BY_CLASS = {entry.architecture: entry for entry in DEFAULT_MLA_CLASSES}


def default_mla_class(model: ModelSpec, version: ResolvedVersion) -> DefaultMlaClass | None:
    """The table's entry for this model's class where the release has it on the list (None: not on it)."""
    entry = _BY_CLASS.get(model.architecture)
    return entry if entry is not None and since(entry.since, version) else None


def takes_default_trtllm_mla(model: ModelSpec, gpu_name: str | None, version: ResolvedVersion,
                             phases_named: bool = False) -> bool:
    """Whether SGLang picks trtllm_mla for this model where the launch names no backend: a class of
    DEFAULT_MLA_CLASSES at its release, with MLA and no indexer (a DSA checkpoint takes DSA's own backend at every
    release: 0.5.3.post2 server_args.py:815 `and not is_deepseek_nsa`, 0.5.14 :3529 before :3636, 0.5.23
    deepseek_v2.py:99 before :177), on SM100 (an SM120 card keeps SGLang's generic default). `phases_named`: only
    per-phase backends are named and the release skips the model overrides then (default_mha.PHASES_SKIP_OVERRIDES;
    0.5.16 arg_groups/overrides.py:405-413), so no."""
    mla = model.mla is not None and model.attention_kind is not AttentionKind.DSA
    return not phases_named and SM100.holds(gpu_name) and mla and default_mla_class(model, version) is not None


def default_mla_page(model: ModelSpec, page: int, over: str, gpu_name: str | None,
                     version: ResolvedVersion, phases_named: bool = False) -> tuple[int, str] | None:
    """(page, why) where SGLang's default trtllm_mla meets a --page-size: the backend's page rule reads the
    attention backend the model override set (0.5.6.post2 server_args.py `_handle_model_specific_adjustments` before
    `_handle_attention_backend_compatibility`, :647 and :654; 0.5.13 :970 and :977, the page rule :2897-2910), so
    a page other than 32 or 64 becomes 64 (`over`: what set that page); None where it does not apply (no default
    trtllm_mla, or a page it takes; `phases_named`: takes_default_trtllm_mla)."""
    if not takes_default_trtllm_mla(model, gpu_name, version, phases_named):
        return None
    rule = live_page_rule("trtllm_mla", version)
    if rule is None or page in rule.takes:
        return None
    return rule.page, (f"trtllm_mla, SGLang's default for {model.architecture} on SM100, pages by {rule.page} "
                       f"(over {over}): {rule.source}")


def check_default_backend_kv_dtype(model: ModelSpec, settings: LaunchSettings, gpu_name: str | None,
                                   version: ResolvedVersion) -> None:
    """Refuse a --kv-cache-dtype the backend SGLang picks by default does not take (trtllm_mla: KV_DTYPES), where the
    launch names no backend; SGLang checks the backend it resolved (0.5.23 arg_groups/overrides.py:1203-1216).
    A class on the list without MLA (Pixtral-12B's PixtralForConditionalGeneration over a Mistral MHA model) is sent
    to the MLA kernels all the same (SGLang reads the class, not the attention): not modelled."""
    if named_backends(settings) is not None or not SM100.holds(gpu_name):
        return
    entry = default_mla_class(model, version)
    if entry is not None and model.mla is None:
        raise UnsupportedModelError(
            f"SGLang {version.label} sets --attention-backend trtllm_mla for {model.architecture} on SM100 although "
            f"the model has no latent attention ({entry.source}): what the MLA kernels do with it is not modelled; "
            "name an --attention-backend", field="--attention-backend")
    if takes_default_trtllm_mla(model, gpu_name, version):
        check_kv_dtype("trtllm_mla", ATTENTION, settings.kv_cache_dtype, version)
