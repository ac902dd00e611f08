"""SGLang's default trtllm_mha: the MHA models SGLang sends to the TensorRT-LLM MHA kernels on SM100 where the launch
names no attention backend, and the page that backend then sets over a --page-size it does not take.

SGLang picks the default attention backend (`_handle_attention_backend_compatibility`: 0.5.6.post2 server_args.py
:1359-1384; 0.5.13 `_get_default_attn_backend` :2795-2804, set at :2842-2845; 0.5.23 arg_groups/overrides.py
`_attention_backend_default` :1127-1141, model_override_base.py get_default_attn_backend) before the page rule that
reads it (0.5.6.post2 :1465-1477, 0.5.13 :2965-2997, 0.5.23 overrides.py `_mla_backend_page_constraints` :1174-1187,
run after it by arg_groups/attention_hook.py:120 and :184); a model override that names trtllm_mha (GPT-OSS,
Nemotron-H from 0.5.19) runs earlier still (`_handle_model_specific_adjustments`, 0.5.6.post2 :647 before :654). So
the default pages a --page-size it does not take (PAGE_RULES["trtllm_mha"]: 16, 32, 64, and 128 from 0.5.23) by 64,
as trtllm_mla does (default_mla.py). Not modelled here: the speculative-decoding conditions on the MHA default
(`is_no_spec_infer_or_topk_one`), and 0.5.23's fa4 for a model with unequal K and V widths (`has_asymmetric_kv`).
"""

from __future__ import annotations

from kvtop.domain.deployment_flags import flag_int
from kvtop.domain.engines.sglang.attention_backends import (
    effective_attention,
    live_page_rule,
    named_backends,
    since,
)
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import SM100, CapabilityFamily, compute_capability
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

# §6.6.1 Nemotron-H's attention backend on SM100 when none is given (no speculative decoding): the generic
# trtllm_mha default (page 64) at v0.5.6.post1/.post2, flashinfer (page 1) from v0.5.7, trtllm_mha again from
# v0.5.19 (model_overrides/nemotron_h.py). Checked against SGLang 0.5.6.post2 and 0.5.23 on sm100 (page 64).
NEMOTRON_H_ARCHS = frozenset({"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"})
NEMOTRON_H_SM100_ERAS: Eras[str] = Eras((
    Era("", "generic", "server_args.py: no Nemotron-H backend choice; the MHA default applies"),
    Era("0.5.7", "flashinfer", "server_args.py NemotronHForCausalLM: flashinfer on sm100 (… v0.5.18 nemotron_h_hook)"),
    Era("0.5.19", "trtllm_mha", "arg_groups/model_overrides/nemotron_h.py: trtllm_mha on sm100"),
))  # fmt: skip

# whether naming only per-phase backends (--prefill/--decode-attention-backend) skips the model overrides' backend
# choice: to v0.5.3 the GPT-OSS override reads --attention-backend only (`if self.attention_backend is None`: 0.5.0rc2
# wheel server_args.py:2118-2119, 0.5.1 :2227-2228, 0.5.3 :734-735), so it still sets trtllm_mha; from v0.5.3.post1
# the overrides ask all three unset (0.5.3.post1 :769-774, the DeepSeek-V3 trtllm_mla default from 0.5.3.post2
# :815-822; `is_attention_backend_not_set` from 0.5.7 :4524-4529, 0.5.13 :7356-7361, 0.5.16 arg_groups/overrides.py).
# Before v0.5.0rc2 no override picks a backend that pages
PHASES_SKIP_OVERRIDES: Eras[bool] = Eras((
    Era("", False, "server_args.py GPT-OSS override `if self.attention_backend is None` (0.5.0rc2 :2118-2119, "
                   "0.5.1 :2227-2228, 0.5.3 :734-735)"),
    Era("0.5.3.post1", True, "server_args.py overrides ask attention, prefill and decode backends unset "
                             "(0.5.3.post1 :769-774; 0.5.7 is_attention_backend_not_set :4524-4529; 0.5.13 :7356-7361)"),
))  # fmt: skip


def default_trtllm_mha(model: ModelSpec, gpu_name: str | None, version: ResolvedVersion,
                       phases_named: bool = False) -> str | None:
    """Why SGLang runs this model on trtllm_mha where the launch names no attention backend (None: it does not): on
    SM100 (`is_sm100_supported`, capability major 10: not the SM120 cards), a model without MLA — GPT-OSS from
    v0.5.0rc2 (its model override), Nemotron-H by NEMOTRON_H_SM100_ERAS, other linear-attention hybrids never (their
    own backends), every other MHA model from v0.5.6.post1. `phases_named`: a per-phase backend is named and the
    release skips the model overrides then (PHASES_SKIP_OVERRIDES, from v0.5.3.post1), so only the generic MHA
    default is left (0.5.13 `_get_default_attn_backend` :2796-2804, set at :2842-2845); a hybrid under
    per-phase backends is not followed (None)."""
    if not SM100.holds(gpu_name) or model.mla is not None:
        return None
    if phases_named:
        if model.state is None and since("0.5.6.post1", version):
            return "trtllm_mha, SGLang's default MHA backend on Blackwell beside the per-phase backends"
        return None
    if model.state is not None:
        if model.architecture not in NEMOTRON_H_ARCHS:
            return None
        era = era_for(NEMOTRON_H_SM100_ERAS, version).value
        if era == "trtllm_mha":
            return "trtllm_mha, Nemotron-H's attention backend on Blackwell"
        if era != "generic":
            return None
    if model.model_type == "gpt_oss" and since("0.5.0rc2", version):
        return "trtllm_mha, GPT-OSS's default on Blackwell"
    if since("0.5.6.post1", version):
        return "trtllm_mha, the default MHA backend on Blackwell"
    return None


def default_mha_page(
    model: ModelSpec, page: int, over: str, gpu_name: str | None, version: ResolvedVersion, phases_named: bool = False
) -> tuple[int, str] | None:
    """(page, why) where SGLang's default trtllm_mha meets a page it does not take (`over`: what set that page,
    --page-size or a per-phase backend's rule, which SGLang applies first): 64; None where it does not apply (no
    default trtllm_mha, or a page it takes)."""
    why = default_trtllm_mha(model, gpu_name, version, phases_named)
    rule = live_page_rule("trtllm_mha", version) if why else None
    if rule is None or page in rule.takes:
        return None
    return rule.page, f"{why}, pages by {rule.page} (over {over}): {rule.source}"


# SGLang 0.5.6.post1/.post2 give an MHA model trtllm_mha where no attention backend is named on `is_blackwell()`
# (capability major 10 or 12: utils/common.py 0.5.6.post1:220-223, 0.5.6.post2:221-224; server_args.py
# 0.5.6.post1:1352-1353, 0.5.6.post2:1382-1383), then raise off SM100 in the same function (0.5.6.post1:1440-1443,
# 0.5.6.post2:1470-1473). 0.5.6 has no Blackwell MHA default (server_args.py 0.5.6: fa3 / aiter / ascend / flashinfer);
# 0.5.7 picks trtllm_mha on `is_sm100_supported()` only (server_args.py 0.5.7:1534-1542)
SM120_DEFAULT_MHA_RAISES: Eras[bool] = Eras((
    Era("", False, "server_args.py 0.5.6: no trtllm_mha default for an MHA model"),
    Era("0.5.6.post1", True, "server_args.py 0.5.6.post1:1352-1353 `elif is_blackwell() and "
                             "is_no_spec_infer_or_topk_one(self)`, :1440-1443 `if not is_sm100_supported(): raise`; "
                             "0.5.6.post2:1382-1383, :1470-1473"),
    Era("0.5.7", False, "server_args.py 0.5.7:1534-1542: the default on is_sm100_supported() only"),
))  # fmt: skip
SM120 = CapabilityFamily("SM120", 12, 12)  # RTX PRO 6000 Blackwell, RTX 5090 (12.0), GB10 (12.1)
# the model overrides that pick a backend before that default on SM120 (`_handle_model_specific_adjustments`, run
# first: 0.5.6.post2 server_args.py:647 then :654): GPT-OSS triton (:1115-1126), Llama 4 triton (:1178-1190), Olmo 2
# fa3 (`get_device_sm() >= 80`, :1220-1233); the same at 0.5.6.post1 (:1086, :1149, :1191). Qwen3-Next's and the
# Mamba hybrids' overrides set none off SM100 (:1291-1343): those meet the default and its raise
_OWN_BACKEND_ON_SM120 = frozenset({"GptOssForCausalLM", "Olmo2ForCausalLM"})


def check_sm120_default_mha(model: ModelSpec, settings: LaunchSettings, gpu_name: str | None,
                            version: ResolvedVersion) -> None:
    """Refuse as SGLang 0.5.6.post1/.post2 do an MHA model on an SM120 card (RTX PRO 6000, RTX 5090, GB10) with no
    attention backend named: SGLang picks trtllm_mha there and then raises 'TRTLLM MHA backend is only supported on
    Blackwell GPUs (SM100)' (SM120_DEFAULT_MHA_RAISES), before it sizes anything. Not where an override picks another
    backend first, nor under speculative decoding with --speculative-eagle-topk above 1 (or 1 over --page-size > 1:
    `is_no_spec_infer_or_topk_one`), which takes flashinfer."""
    era, capability = era_for(SM120_DEFAULT_MHA_RAISES, version), compute_capability(gpu_name)
    if not era.value or version.approximate or capability is None or not SM120.holds(gpu_name) or model.mla is not None:
        return
    named = named_backends(settings)
    if named is not None and effective_attention(named, version) is not None:
        return
    if model.architecture in _OWN_BACKEND_ON_SM120 or "Llama4" in model.architecture:
        return
    topk = flag_int(settings, "speculative-eagle-topk")
    if topk is not None and (topk > 1 or (settings.page_size or 1) > 1):
        return
    raise InputError(
        f"SGLang {version.label} does not start here: with no attention backend named it picks trtllm_mha for this "
        f"MHA model on any Blackwell GPU, then raises 'TRTLLM MHA backend is only supported on Blackwell GPUs "
        f"(SM100). Please use a different backend.' on {gpu_name} (SM {capability[0]}.{capability[1]}) ({era.source}); name one, e.g. "
        "--attention-backend flashinfer or triton (0.5.7 picks trtllm_mha on SM100 only)", field="--attention-backend")
