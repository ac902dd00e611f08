"""SGLang's `--attention-backend` and its per-phase `--prefill-attention-backend` / `--decode-attention-backend`: the
values each release accepts, and what a named backend does to the budget.

The choices are server_args.py's (`ATTENTION_BACKEND_CHOICES`, arg_groups/choices.py from the 0.5.2x releases), read
in the wheels of the releases listed; a release between two reads takes the earlier list (a value added in between
is refused with the release it was read at, and `--engine-version` of a read release takes it). A release estimated
from a log's lines is not checked: the log's own arguments say the engine took the backend.

What a backend changes in the budget is its page: the backends that page their own way set `page_size` before
SGLang's default of 1 (`_handle_attention_backend_compatibility`, server_args.py; `_mla_backend_page_constraints`,
arg_groups/overrides.py from the 0.5.1x releases), over `--page-size` where they do not take it. A named backend
also replaces the default one, so the page a default backend sets (eras.default_page_size: trtllm_mha's 64 on
Blackwell) no longer applies. Where a backend changes the budget otherwise, it is refused as not modelled.

The per-phase flags exist from v0.4.9.post5 (server_args.py:1229-1255; v0.4.9.post4 has neither) and take
--attention-backend's choices from v0.5.0rc2. A per-phase backend sets the page where SGLang's rule names that
phase (`attention_backend == X or decode_attention_backend == X …`: the MLA kernels by their decode backend,
trtllm_mha, cutedsl_mla and hpc_ops by either), the rules applied in SGLang's order, each on the page the one
before left. From v0.5.5 the same backend for both phases is the attention backend; otherwise SGLang still
picks its generic default attention backend (no model override's: Blackwell's trtllm_mha for an MHA model, flashinfer
for MLA), whose own page rule then runs on the page they left (dsa.page_size_of, default_mha.py).
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.deployment_flags import flag_set
from kvtop.domain.engines.sglang.flag_releases import check_flag_release
from kvtop.domain.engines.sglang.prefill_graphs_off import DETERMINISTIC_FLAG
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for, parse_release
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.redact import quoted

ATTENTION_BACKEND_FLAG = "--attention-backend"
PREFILL_BACKEND_FLAG = "--prefill-attention-backend"
DECODE_BACKEND_FLAG = "--decode-attention-backend"
PHASE_BACKEND_FLAGS = (PREFILL_BACKEND_FLAG, DECODE_BACKEND_FLAG)

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
# --prefill-attention-backend / --decode-attention-backend: none before v0.4.9.post5 (None: the flag is not the release's)
PHASE_CHOICE_ERAS: Eras[tuple[str, ...] | None] = Eras((
    Era("", None, "no such flags before v0.4.9.post5: their rows in flag_releases.READ"),
    Era("0.4.9.post5", ("flashinfer", "triton", "torch_native", "fa3", "flashmla", "cutlass_mla"),
        "server_args.py:1229-1255 (v0.4.9.post5; the same at v0.4.10.post2:1275-1300)"),
    Era("0.5.0rc2", _V050, "server_args.py:1353-1365 choices=ATTN_BACKENDS (v0.5.0rc2)"),
    Era("0.5.3", _V053, "server_args.py:1993-2005 ATTENTION_BACKEND_CHOICES (v0.5.3)"),
    Era("0.5.6.post2", _V056, "server_args.py:2945-2957 ATTENTION_BACKEND_CHOICES (v0.5.6.post2; v0.5.10:4666-4678)"),
    Era("0.5.16", _V0516, "server_args.py:1406-1421 ATTENTION_BACKEND_CHOICES (v0.5.16)"),
    Era("0.5.23", _V0523, "arg_groups/fields/exec_.py:215-230 ATTENTION_BACKEND_CHOICES (v0.5.23)"),
))  # fmt: skip
# the same backend for both phases becomes the attention backend (no default is picked) from v0.5.5 (v0.5.3, v0.5.4
# have no such rule; v0.5.4.post* not read)
SAME_PHASES_NAME_ATTENTION = Era("0.5.5", True, "server_args.py:1124-1127 (v0.5.5), :1324-1327 (v0.5.6.post1), "
                                 ":1355-1357 (v0.5.6.post2); arg_groups/overrides.py:1128-1131 "
                                 "_attention_backend_default (v0.5.23)")


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
        PageRule("0.5.0rc2", (16, 32, 64), 64, "'TensorRT-LLM MHA only supports page_size of 16, 32 or 64': "
                 "server_args.py ServerArgs.__post_init__:461-475 (v0.5.0rc2 wheel)"),
        PageRule("0.5.23", (16, 32, 64, 128), 64, "arg_groups/overrides.py:1174-1187 (v0.5.23): 16, 32, 64 or 128"),
    ),
    "hpc_ops": (PageRule("0.5.23", (64,), 64, "arg_groups/overrides.py:1188-1198 (v0.5.23)"),),
    "intel_xpu": (PageRule("0.5.6.post2", (32, 64, 128), 128, "server_args.py:1524-1529 (v0.5.6.post2)"),),
}
ATTENTION, PREFILL, DECODE = "attention", "prefill", "decode"
PHASE_FLAG = {ATTENTION: ATTENTION_BACKEND_FLAG, PREFILL: PREFILL_BACKEND_FLAG, DECODE: DECODE_BACKEND_FLAG}
# which of a launch's backends a page rule reads (`attention_backend == X or decode_attention_backend == X …`, the files
# of PAGE_RULES at the releases read: the MLA kernels decode only, trtllm_mha (v0.5.0rc2 server_args.py:461-475),
# cutedsl_mla and hpc_ops (v0.5.23 arg_groups/overrides.py:1163-1198) either phase, intel_xpu the attention backend only)
PAGED_BY: dict[str, frozenset[str]] = {
    "flashmla": frozenset({ATTENTION, DECODE}), "cutlass_mla": frozenset({ATTENTION, DECODE}),
    "trtllm_mla": frozenset({ATTENTION, DECODE}), "tokenspeed_mla": frozenset({ATTENTION, DECODE}),
    "cutedsl_mla": frozenset({ATTENTION, PREFILL, DECODE}), "trtllm_mha": frozenset({ATTENTION, PREFILL, DECODE}),
    "hpc_ops": frozenset({ATTENTION, PREFILL, DECODE}), "intel_xpu": frozenset({ATTENTION}),
}  # fmt: skip
# the compute-capability majors each backend runs on (None: any GPU); SGLang raises on any other before it sizes
# anything. trtllm_mla: `is_sm100_supported` (major 10) to v0.5.4, `is_blackwell_supported` (majors 10 and 12, so the
# RTX PRO 6000 and RTX 5090 too) from v0.5.5 (utils/common.py:201-206), 10, 11 and 12 from v0.5.9 (0.5.8 still
# [10, 12]; 0.5.23 utils/common.py:297-303 `is_blackwell`, arg_groups/overrides.py:1210)
SM100_MAJORS, BLACKWELL_MAJORS = frozenset({10}), frozenset({10, 12})
SM_MAJORS: dict[str, Eras[frozenset[int] | None]] = {
    "trtllm_mla": Eras((
        Era("", SM100_MAJORS, "server_args.py:895-899 is_sm100_supported (v0.5.3), :1111 (v0.5.4)"),
        Era("0.5.5", BLACKWELL_MAJORS, "server_args.py is_blackwell_supported (v0.5.5; :1370 v0.5.6)"),
        Era("0.5.9", frozenset({10, 11, 12}), "utils/common.py is_blackwell_supported [10, 11, 12] (v0.5.9); "
            "arg_groups/overrides.py:1210 (v0.5.23)"),
    )),
    "trtllm_mha": Eras((
        Era("", SM100_MAJORS, "server_args.py:1391 is_sm100_supported (v0.5.6)"),
        Era("0.5.10", None, "server_args.py v0.5.10 and arg_groups/overrides.py v0.5.23 check no GPU for it"),
    )),
}  # fmt: skip
# the --kv-cache-dtype values each backend takes where its rule reads it (PAGED_BY): SGLang raises on any other
# before it sizes anything ("TensorRT-LLM MLA backend only supports kv-cache-dtype of …"); its KV layout is the plain
# MLA row (kv_lora_rank + qk_rope_head_dim, 0.5.23 mem_cache/kv_cache_configurator.py:3419-3423 for a non-DSA model)
KV_DTYPES: dict[str, Eras[tuple[str, ...]]] = {
    "trtllm_mla": Eras((
        Era("", ("fp8_e4m3", "auto"), "server_args.py:458 (v0.5.0rc2), :911 (v0.5.3), :1111 (v0.5.4)"),
        Era("0.5.5", ("fp8_e4m3", "fp4_e2m1", "auto"), "server_args.py:1233 (v0.5.5), :1462 (v0.5.6.post2)"),
        Era("0.5.7", ("fp8_e4m3", "fp4_e2m1", "bf16", "auto"), "server_args.py:1621 (v0.5.7), :4558 (v0.5.14); "
            "arg_groups/overrides.py:1601 (v0.5.15), :1261 (v0.5.20)"),
        Era("0.5.21", ("fp8_e4m3", "bf16", "auto"), "arg_groups/overrides.py:1147 (v0.5.21), :1166 (v0.5.22), "
            ":1216 (v0.5.23)"),
    )),
}  # fmt: skip
# backends that change the budget in a way kvtop does not follow (fa4's page: fa4.py, session 60)
NOT_MODELLED: dict[str, str] = {
    "aiter": "AMD's backend multiplies mem_fraction_static by 0.85 where the context exceeds 8,192 tokens "
             "(server_args.py:1498-1501, v0.5.6.post2)",
    "ascend": "Ascend NPUs page by 128 (server_args.py, v0.4.9.post5 on); kvtop's GPUs are NVIDIA's",
}  # fmt: skip


class NamedBackends(NamedTuple):
    """The attention backends a launch names (None: not named)."""

    attention: str | None
    prefill: str | None = None
    decode: str | None = None

    def by_phase(self) -> tuple[tuple[str, str], ...]:
        """(phase, backend) of each one named."""
        named = ((ATTENTION, self.attention), (PREFILL, self.prefill), (DECODE, self.decode))
        return tuple((phase, backend) for phase, backend in named if backend is not None)


def _named(settings: LaunchSettings, flag: str) -> str | None:
    value = settings.flags.get(flag.removeprefix("--"))
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError("needs a backend's name", field=flag)
    return value.strip()


def attention_backend(settings: LaunchSettings) -> str | None:
    """The `--attention-backend` a launch names (None: SGLang picks one)."""
    return _named(settings, ATTENTION_BACKEND_FLAG)


def named_backends(settings: LaunchSettings) -> NamedBackends | None:
    """The attention, prefill and decode backends a launch names; None where it names none."""
    named = NamedBackends(attention_backend(settings), *(_named(settings, flag) for flag in PHASE_BACKEND_FLAGS))
    return named if named.by_phase() else None


def effective_attention(named: NamedBackends, version: ResolvedVersion) -> str | None:
    """The attention backend SGLang runs by name: --attention-backend, else (from v0.5.5: SAME_PHASES_NAME_ATTENTION)
    the backend named for both phases; None where SGLang picks its default."""
    if named.attention is not None:
        return named.attention
    same = named.prefill is not None and named.prefill == named.decode
    return named.prefill if same and since(SAME_PHASES_NAME_ATTENTION.since, version) else None


def check_attention_backend(settings: LaunchSettings, gpu_name: str | None, version: ResolvedVersion) -> None:
    """Refuse a backend the release does not accept (by its choices), a per-phase flag the release does not have,
    one SGLang refuses on this GPU, or one whose effect on the budget kvtop does not model, naming the flag."""
    named = named_backends(settings)
    _check_deterministic_backend(settings, gpu_name, version)
    for phase, backend in named.by_phase() if named else ():
        flag = PHASE_FLAG[phase]
        if phase != ATTENTION:
            check_flag_release(flag, version)  # from v0.4.9.post5: its row in flag_releases.READ
        era = era_for(CHOICE_ERAS, version) if phase == ATTENTION else era_for(PHASE_CHOICE_ERAS, version)
        # an estimated release is not checked: the launch's log says the engine took the backend
        if era.value is not None and backend not in era.value and not version.approximate:
            raise InputError(f"SGLang {version.label} takes one of {', '.join(era.value)} (got {quoted(backend)}; "
                             f"{era.source})", field=flag)  # fmt: skip
        _check_gpu_and_budget(backend, phase, gpu_name, version)
        check_kv_dtype(backend, phase, settings.kv_cache_dtype, version)


_DETERMINISTIC_0_5_3 = ("fa3", "flashinfer", "triton")
# the backends `--enable-deterministic-inference` accepts when --attention-backend names one (else ValueError 'Currently
# only [...] attention backends are supported for deterministic inference': 0.5.3 server_args.py:1264-1267, 0.5.10.post1
# :3478-3482, 0.5.17 arg_groups/overrides.py:2004, 0.5.23 :1117-1121); DETERMINISTIC_ATTENTION_BACKEND_CHOICES by release
DETERMINISTIC_BACKEND_ERAS: Eras[tuple[str, ...]] = Eras((
    Era("", _DETERMINISTIC_0_5_3, "server_args.py:118 (0.5.3), :138 (0.5.5), :159 (0.5.10.post1), :174 (0.5.12)"),
    Era("0.5.13", (*_DETERMINISTIC_0_5_3, "ascend"), "server_args.py:199 (0.5.13), :209 (0.5.14), :198 (0.5.15)"),
    Era("0.5.17", (*_DETERMINISTIC_0_5_3, "ascend", "fa4"), "server_args.py:220-226 (0.5.17; 0.5.16 not read)"),
    Era("0.5.23", (*_DETERMINISTIC_0_5_3, "ascend", "fa4", "intel_xpu"),
        "arg_groups/choices.py:113-120 (0.5.23; 0.5.18 - 0.5.22 not read)"),
))  # fmt: skip


def _check_deterministic_backend(settings: LaunchSettings, gpu_name: str | None, version: ResolvedVersion) -> None:
    """`--enable-deterministic-inference` with an --attention-backend its release does not take: refused as SGLang
    refuses it (an estimated release is not checked); with none, the fallback's check below."""
    named = attention_backend(settings)
    if named is None or not flag_set(settings, DETERMINISTIC_FLAG.removeprefix("--")):
        _check_deterministic_fallback(settings, gpu_name)
        return
    era = era_for(DETERMINISTIC_BACKEND_ERAS, version)
    if named not in era.value and not version.approximate:
        raise InputError(f"SGLang {version.label} runs {DETERMINISTIC_FLAG} with --attention-backend "
                         f"{' / '.join(era.value)} only (got {quoted(named)}; {era.source})",
                         field=ATTENTION_BACKEND_FLAG)  # fmt: skip


def _check_deterministic_fallback(settings: LaunchSettings, gpu_name: str | None) -> None:
    """`--enable-deterministic-inference` without `--attention-backend` on SM 10.x / 12.x: SGLang falls back to
    flashinfer (triton for its DeepSeek classes) in place of the model's default (0.5.5 server_args.py:1800-1816,
    0.5.10.post1 :3462-3476, 0.5.14 :6006-6016, 0.5.23 arg_groups/overrides.py:1055-1070), a choice kvtop does not
    follow: refused, naming the flag. On SM 9.x and older it sets fa3: Hopper's default, which kvtop plans; below
    SM 9.0 kvtop plans its own default in fa3's place, not refused. 0.5.3 has no fallback (the resolved default must
    be flashinfer / fa3 / triton, else ValueError: server_args.py:1264-1267), which kvtop does not follow either, so
    the refusal holds from the flag's first release (0.5.4 not read)."""
    if attention_backend(settings) is not None or not flag_set(settings, DETERMINISTIC_FLAG.removeprefix("--")):
        return
    capability = compute_capability(gpu_name)
    if capability is not None and capability[0] in (10, 12):
        raise UnsupportedModelError(
            f"{DETERMINISTIC_FLAG} on {gpu_name} (SM {capability[0]}.{capability[1]}) without "
            "--attention-backend: SGLang falls back to flashinfer (triton for DeepSeek models), which kvtop does not "
            "follow; name the backend with --attention-backend", field=ATTENTION_BACKEND_FLAG)  # fmt: skip


def check_kv_dtype(backend: str, phase: str, dtype: str, version: ResolvedVersion) -> None:
    """Refuse a --kv-cache-dtype the backend does not take at this release (KV_DTYPES), where its rule reads the
    phase (an estimated release is not checked: the launch's log says the engine took it)."""
    if backend not in KV_DTYPES or phase not in PAGED_BY.get(backend, frozenset()):
        return
    era = era_for(KV_DTYPES[backend], version)
    if dtype not in era.value and not version.approximate:
        raise InputError(f"SGLang {version.label} runs {backend} with --kv-cache-dtype {' / '.join(era.value)} only "
                         f"(got {quoted(dtype)}; {era.source})", field="--kv-cache-dtype")  # fmt: skip


def _check_gpu_and_budget(backend: str, phase: str, gpu_name: str | None, version: ResolvedVersion) -> None:
    flag = PHASE_FLAG[phase]
    read = phase in PAGED_BY.get(backend, frozenset({ATTENTION}))  # the Blackwell checks sit beside the page rules
    majors = era_for(SM_MAJORS[backend], version) if backend in SM_MAJORS and read else None
    capability = compute_capability(gpu_name)
    if majors is not None and majors.value is not None and capability is not None and capability[0] not in majors.value:
        on = "/".join(f"SM{major}x" for major in sorted(majors.value))
        raise InputError(f"SGLang {version.label} runs {backend} on Blackwell GPUs only (got {gpu_name}: SM "
                         f"{capability[0]}.{capability[1]}, not {on}; {majors.source})", field=flag)  # fmt: skip
    if backend in NOT_MODELLED:
        raise UnsupportedModelError(f"{backend}: {NOT_MODELLED[backend]}: not modelled", field=flag)


def backends_page(named: NamedBackends, given: int | None, version: ResolvedVersion) -> tuple[int, str] | None:
    """(page size, why) under the named backends: each page rule that reads one of them, in SGLang's order, on the
    page the rule before left (from `given`); else `given`; else 1 where an attention backend is named (SGLang's
    `_handle_page_size`: no default backend is left to page by more). None where no rule applies and SGLang picks
    the attention backend: its default's page (eras.default_page_size) is the launch's."""
    attention = effective_attention(named, version)
    phases = ((ATTENTION, attention), (PREFILL, named.prefill), (DECODE, named.decode))
    page, why = given, ""
    for backend in PAGE_RULES:
        reading = [phase for phase, name in phases if name == backend and phase in PAGED_BY.get(backend, ())]
        rule = live_page_rule(backend, version)
        if reading and rule is not None and page not in rule.takes:
            over = f" (over --page-size {page})" if page else ""
            page, why = rule.page, f"{PHASE_FLAG[reading[0]]} {backend} pages by {rule.page}{over}: {rule.source}"
    if why and page is not None:
        return page, why
    if given:
        return given, "--page-size"
    if attention is not None:
        named_by = ATTENTION_BACKEND_FLAG if named.attention else f"{PREFILL_BACKEND_FLAG} and {DECODE_BACKEND_FLAG}"
        return 1, f"page 1 ({named_by} {attention} sets none)"
    return None


def live_page_rule(backend: str, version: ResolvedVersion) -> PageRule | None:
    """The backend's page rule in force at `version` (PAGE_RULES; None: the backend has none, or none yet)."""
    live = [rule for rule in PAGE_RULES.get(backend, ()) if since(rule.since, version)]
    return live[-1] if live else None


def since(first: str, version: ResolvedVersion) -> bool:
    """Whether `version` is `first` or later (a release not stated, or not read: the latest rules, so yes)."""
    release, start = version.release, parse_release(first)
    return release is None or start is None or release >= start
