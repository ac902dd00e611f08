"""SGLang's `--attention-backend`: the values each release accepts, and what a named backend does to the budget.

The choices are server_args.py's (`ATTENTION_BACKEND_CHOICES`, arg_groups/choices.py from the 0.5.2x releases), read
in the wheels of the releases listed; a release between two reads takes the earlier list (a value added in between
is refused with the release it was read at, and `--engine-version` of a read release takes it). A release estimated
from a log's lines is not checked: the log's own arguments say the engine took the backend.

What a backend changes in the budget is its page: the backends that page their own way set `page_size` before
SGLang's default of 1 (`_handle_attention_backend_compatibility`, server_args.py; `_mla_backend_page_constraints`,
arg_groups/overrides.py from the 0.5.1x releases), over `--page-size` where they do not take it. A named backend
also replaces the default one, so the page a default backend sets (eras.default_page_size: trtllm_mha's 64 on
Blackwell) no longer applies. Where a backend changes the budget otherwise, it is refused as not modelled.
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for, parse_release
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import BLACKWELL_GPUS, gpu_key
from kvtop.domain.launch import LaunchSettings

ATTENTION_BACKEND_FLAG = "--attention-backend"

_V036 = ("flashinfer", "triton")
_V040 = (*_V036, "torch_native")
_V0442 = (*_V040, "fa3")
_V046 = (*_V0442, "flashmla")
_V049 = (*_V046, "aiter", "cutlass_mla", "intel_amx", "ascend")
_V050 = (*_V049, "trtllm_mla", "trtllm_mha", "dual_chunk_flash_attn", "wave")
_V053 = (*_V050, "flex_attention", "nsa", "fa4")
_V056 = (*_V053, "intel_xpu")
_V0516 = (*_V056, "dsa", "dsv4", "compressed", "cutedsl_mla", "tokenspeed_mla")
_V0523 = (*(name for name in _V0516 if name not in ("cutlass_mla", "dual_chunk_flash_attn", "tokenspeed_mla")),
          "qsa", "llada2_cfg_flashinfer", "hpc_ops", "minicpm_flashattn", "minicpm_flashinfer")  # fmt: skip
CHOICE_ERAS: Eras[tuple[str, ...]] = Eras((
    Era("", _V036, "server_args.py:573-578 (v0.3.6)"),
    Era("0.4.0", _V040, "server_args.py:602-607 (v0.4.0)"),
    Era("0.4.4.post2", _V0442, "server_args.py:776-781 (v0.4.4.post2; v0.4.4.post1:723-728 has no fa3, v0.4.5 no "
                               "flashmla)"),
    Era("0.4.6", _V046, "server_args.py:824-829 (v0.4.6)"),
    Era("0.4.9.post5", _V049, "server_args.py:1209-1222 (v0.4.9.post5)"),
    Era("0.5.0rc2", _V050, "server_args.py:1326-1344 ATTN_BACKENDS (v0.5.0rc2)"),
    Era("0.5.3", _V053, "server_args.py:89-110 ATTENTION_BACKEND_CHOICES (v0.5.3)"),
    Era("0.5.6.post2", _V056, "server_args.py:112-134 ATTENTION_BACKEND_CHOICES (v0.5.6.post2, the same at v0.5.10)"),
    Era("0.5.16", _V0516, "server_args.py:194-221 ATTENTION_BACKEND_CHOICES (v0.5.16)"),
    Era("0.5.23", _V0523, "arg_groups/choices.py:69-99 ATTENTION_BACKEND_CHOICES (v0.5.23)"),
))  # fmt: skip


class PageRule(NamedTuple):
    """A backend's own page: `page` wherever --page-size is not one of `takes` (none: always `page`)."""

    since: str
    takes: tuple[int, ...]
    page: int
    source: str


_MLA_PAGES = "server_args.py _handle_attention_backend_compatibility (v0.4.6 … v0.5.10); " \
             "arg_groups/overrides.py _mla_backend_page_constraints (v0.5.16:1682, v0.5.23:1144)"  # fmt: skip
PAGE_RULES: dict[str, tuple[PageRule, ...]] = {
    "flashmla": (PageRule("0.4.6", (), 64, f"'FlashMLA only supports a page_size of 64': {_MLA_PAGES}"),),
    "cutlass_mla": (PageRule("0.4.9.post5", (), 128, f"'Cutlass MLA only supports a page_size of 128': {_MLA_PAGES}"),),
    "trtllm_mla": (PageRule("0.5.0rc2", (32, 64), 64, f"TensorRT-LLM MLA pages by 32 or 64: {_MLA_PAGES}"),),
    "tokenspeed_mla": (PageRule("0.5.16", (32, 64), 64, "arg_groups/overrides.py:1682 (v0.5.16)"),),
    "cutedsl_mla": (PageRule("0.5.16", (32, 64), 64, "arg_groups/overrides.py:1682 (v0.5.16), :1144 (v0.5.23)"),),
    "trtllm_mha": (
        PageRule("0.5.0rc2", (16, 32, 64), 64, f"TensorRT-LLM MHA pages by 16, 32 or 64: {_MLA_PAGES}"),
        PageRule("0.5.23", (16, 32, 64, 128), 64, "arg_groups/overrides.py:1174-1187 (v0.5.23): 16, 32, 64 or 128"),
    ),
    "hpc_ops": (PageRule("0.5.23", (64,), 64, "arg_groups/overrides.py:1188-1198 (v0.5.23)"),),
    "intel_xpu": (PageRule("0.5.6.post2", (32, 64, 128), 128, "server_args.py:1524-1529 (v0.5.6.post2)"),),
}
# backends SGLang raises on before it sizes anything off Blackwell (an era each: True where it does)
BLACKWELL_ONLY: dict[str, Eras[bool]] = {
    "trtllm_mla": Eras((Era("", True, "server_args.py:1449-1452 (v0.5.6.post2); arg_groups/overrides.py:1210-1213 "
                                      "(v0.5.23)"),)),
    "trtllm_mha": Eras((
        Era("", True, "server_args.py:1470-1473 (v0.5.6.post2)"),
        Era("0.5.10", False, "server_args.py v0.5.10 and arg_groups/overrides.py v0.5.23 check no GPU for it"),
    )),
}  # fmt: skip
# backends that change the budget in a way kvtop does not follow
NOT_MODELLED: dict[str, str] = {
    "aiter": "AMD's backend multiplies mem_fraction_static by 0.85 where the context exceeds 8,192 tokens "
             "(server_args.py:1498-1501, v0.5.6.post2)",
    "fa4": "FA4 pages by 128 for a non-MLA model, and some releases refuse it but for prefill "
           "(server_args.py:1487-1496, v0.5.6.post2)",
    "ascend": "Ascend NPUs page by 128 (server_args.py, v0.4.9.post5 on); kvtop's GPUs are NVIDIA's",
}  # fmt: skip


def attention_backend(settings: LaunchSettings) -> str | None:
    """The `--attention-backend` a launch names (None: SGLang picks one)."""
    value = settings.flags.get(ATTENTION_BACKEND_FLAG.removeprefix("--"))
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError("needs a backend's name", field=ATTENTION_BACKEND_FLAG)
    return value.strip()


def check_attention_backend(settings: LaunchSettings, gpu_name: str | None, version: ResolvedVersion) -> None:
    """Refuse a backend the release does not accept (by its choices), one SGLang refuses on this GPU, or one whose
    effect on the budget kvtop does not model, naming the flag."""
    backend = attention_backend(settings)
    if backend is None:
        return
    era = era_for(CHOICE_ERAS, version)
    if backend not in era.value and not version.approximate:  # an estimated release: the launch's log says it ran
        raise InputError(f"SGLang {version.label} takes one of {', '.join(era.value)} (got {backend[:40]!r}; "
                         f"{era.source})", field=ATTENTION_BACKEND_FLAG)  # fmt: skip
    blackwell = era_for(BLACKWELL_ONLY[backend], version) if backend in BLACKWELL_ONLY else None
    if blackwell is not None and blackwell.value and gpu_name is not None and gpu_key(gpu_name) not in BLACKWELL_GPUS:
        raise InputError(f"SGLang {version.label} runs {backend} on Blackwell GPUs only (got {gpu_name}; "
                         f"{blackwell.source})", field=ATTENTION_BACKEND_FLAG)  # fmt: skip
    if backend in NOT_MODELLED:
        raise UnsupportedModelError(f"{backend}: {NOT_MODELLED[backend]}: not modelled", field=ATTENTION_BACKEND_FLAG)


def backend_page(backend: str, given: int | None, version: ResolvedVersion) -> tuple[int, str]:
    """(page size, why) under a named backend: its own page where it sets one over `given`, else `given`, else 1
    (SGLang's `_handle_page_size`: no default backend is left to page by more)."""
    rules = [rule for rule in PAGE_RULES.get(backend, ()) if _since(rule.since, version)]
    if rules and given not in rules[-1].takes:
        rule = rules[-1]
        over = f" (over --page-size {given})" if given else ""
        return rule.page, f"{ATTENTION_BACKEND_FLAG} {backend} pages by {rule.page}{over}: {rule.source}"
    if given:
        return given, "--page-size"
    return 1, f"page 1 ({ATTENTION_BACKEND_FLAG} {backend} sets none)"


def _since(first: str, version: ResolvedVersion) -> bool:
    release, start = version.release, parse_release(first)
    return release is None or start is None or release >= start
