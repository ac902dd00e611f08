"""Which MXFP4 MoE backend vLLM runs on a GPU, and how kvtop knows it (docs/engines/vllm.md §20.1).

`get_mxfp4_backend` (quantization/mxfp4.py, v0.10.2 … v0.13.0; `Mxfp4MoEMethod._should_use_marlin` at v0.10.1;
`select_mxfp4_moe_backend` in fused_moe/oracle/mxfp4.py at 0.33.0) picks, on CUDA without a FlashInfer opt-in:
- Marlin when VLLM_MXFP4_USE_MARLIN is set, or when `triton_kernels_supported` fails: `has_triton_kernels()`
  (the optional `triton_kernels` package, or from v0.12.0 the wheel's vendored `vllm.third_party.triton_kernels`),
  torch ≥ 2.8.0 and 9.0 ≤ capability < 11.0; so always on SM 8.x;
- else Triton.
On Hopper the choice so rests on what the install holds, era by era (`TRITON_KERNELS_ERAS`, each wheel read):
- v0.10.1 … v0.10.1.1: the wheel pins torch 2.7.1, below the 2.8.0 Triton needs (v0.10.1 mxfp4.py:131-134):
  Marlin is the release's (vllm#23278 printed 65.97 GiB of gpt-oss-120b weights on an H100 at v0.10.1);
- v0.10.2 … v0.11.2: torch 2.8.0 / 2.9.0, but the wheel neither ships `triton_kernels` nor requires it (v0.11.2
  import_utils.py:398-400 looks for the package alone; METADATA names no such dependency; vllm#27672, 2025-10-28:
  "users will have to install `triton_kernels` manually"; vllm#27523: adding the dependency "caused SM90 to default
  to Triton instead of Marlin"). `pip install vllm==X` so runs Marlin (v0.11.2 mxfp4.py:134-142), as the Kaggle
  v0.11.2 log printed ('Using Marlin backend', 65.97 GiB) and vllm#27508's v0.11.0 conda install's 1.71 GiB of KV
  needs; an install that adds the package runs Triton. A plan cannot see the install: it assumes the wheel's Marlin
  and names Triton as the other backend, whose weights difference the weights term's error carries (mxfp4_weights.py);
- from v0.12.0: vllm#28788 vendors the package into the wheel (v0.12.0 holds vllm/third_party/triton_kernels,
  import_utils.py:431-438 has_triton_kernels finds it there): Triton is the release's (0.33.0's oracle keeps
  TRITON ahead of MARLIN for gpt-oss; llm-d's H100 rows, `vllm/vllm-openai:latest` of 2026-01, print Triton's
  64.38 GiB).

What the launch line can say (leading NAME=VALUE assignments, flags.py env_read; MARLIN_ENV_ERAS):
- VLLM_MXFP4_USE_MARLIN (read until v0.23.x; from v0.24.0 no file names it: ignored): v0.10.1's `_should_use_marlin` returns it where set (mxfp4.py:123-125), before any
  capability check: 1 Marlin, 0 Triton's layout even on SM 8.x (`create_weights` pads to 64, and
  `process_weights_after_loading` imports triton_kernels, which the wheel does not ship), kvtop's Triton weights
  being Hopper's, SM 8.x's refused by name; v0.10.2 and v0.11.0
  define it in envs.py but no file reads it (their wheels grepped): ignored there; from v0.11.1 `=1` forces Marlin
  (v0.11.2 mxfp4.py:134-142), and 0 or unset leaves the choice to the package. No variable or flag selects Triton:
  an install's `triton_kernels` is no launch fact, so v0.10.2 … v0.11.2 stay assumed.
- `--enable-lora` from v0.11.1: `get_mxfp4_backend_with_lora` (v0.11.2 mxfp4.py:77-86) returns Marlin on CUDA; from
  v0.12.0 it takes Triton where triton_kernels runs (v0.12.0 mxfp4.py:82-100), as without LoRA.
- VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1 on SM 9.0 with FlashInfer installed (from v0.10.2: mxfp4.py:56-60, v0.11.2
  :95-102): FlashInfer's SM90 BF16 MoE, whose weight layout kvtop does not model: said so, not planned as another.

SM 11.x / 12.x (mxfp4_sm12.py): v0.10.1 … v0.11.2 take the checks above (vLLM bounds Triton's capability only from
v0.12.0), save FlashInfer's SM90 variable; a Triton start there is not modelled (Blackwell layouts); from v0.12.0
they run Marlin whatever the install holds, save SM 11.x at v0.32.0 … v0.33.x (Triton first: not modelled).

Where the launch says it the backend is stated; where the log printed 'Using Marlin backend' / 'Using Triton backend' (mxfp4.py `logger.info_once`,
v0.10.2 … v0.13.0) or the oracle's "Using 'MARLIN' Mxfp4 MoE backend." (v0.20.2 … v0.33.0; v0.34.0 unquoted) it is
measured (log_facts.py keeps it as a decision, flags[MEASURED_KEY]); a backend it names whose layout kvtop does not
build is said not modelled (mxfp4_unmodelled.py), never replaced by the release's guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.engines.vllm.mxfp4_sm12 import TRITON_FIRST, sm12_marlin, sm12_rule
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_tokens import false_word
from kvtop.domain.redact import quoted

MARLIN, TRITON = "marlin", "triton"
MARLIN_ENV = "VLLM_MXFP4_USE_MARLIN"  # envs.py: maybe_convert_bool(os.environ.get(...)) where set
FLASHINFER_BF16_ENV = "VLLM_USE_FLASHINFER_MOE_MXFP4_BF16"  # envs.py: bool(int(...)), default False
LORA_FLAG = "enable-lora"  # as settings.flags keeps it
# what VLLM_MXFP4_USE_MARLIN does at a release: DECIDES (set: its value), IGNORED (read by no file), FORCES (1: Marlin)
DECIDES, IGNORED, FORCES = "decides", "ignored", "forces"
MARLIN_ENV_ERAS: Eras[str] = Eras((
    Era("", DECIDES, "v0.10.1 mxfp4.py:123-125 _should_use_marlin: `if envs.VLLM_MXFP4_USE_MARLIN is not None: return it`"),
    Era("0.10.2", IGNORED, "v0.10.2 and v0.11.0: envs.py defines VLLM_MXFP4_USE_MARLIN, no file of the wheel reads it "
                           "(get_mxfp4_backend, mxfp4.py:54-95, asks has_triton_kernels only)"),
    Era("0.11.1", FORCES, "v0.11.1 mxfp4.py:136 / v0.11.2 :134-142: `envs.VLLM_MXFP4_USE_MARLIN or …` → Marlin "
                          "(v0.23.0 fused_moe/oracle/mxfp4.py:526, deprecated in envs.py:1366 for --moe-backend marlin)"),
    Era("0.24.0", IGNORED, "v0.24.0 … v0.34.0: no file of the wheel names VLLM_MXFP4_USE_MARLIN (wheels grepped)"),
))  # fmt: skip
# LoRA's backend: Marlin on CUDA (v0.11.1, v0.11.2 get_mxfp4_backend_with_lora), then as without LoRA (v0.12.0 on)
LORA_MARLIN_ERAS: Eras[bool] = Eras((
    Era("", False, "before v0.11.1 no LoRA path (v0.11.0 get_mxfp4_backend takes no with_lora_support)"),
    Era("0.11.1", True, "v0.11.2 mxfp4.py:77-86 get_mxfp4_backend_with_lora: Marlin on CUDA"),
    Era("0.12.0", False, "v0.12.0 mxfp4.py:82-100: Triton where triton_kernels runs, as without LoRA"),
))  # fmt: skip
FLASHINFER_BF16_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.10.1 reads it through `envs.is_set` beside its own Triton path: not modelled, not refused"),
    Era("0.10.2", True, "v0.10.2 mxfp4.py:56-60, v0.11.2 :95-102: SM 9.0, has_flashinfer() and the variable"),
))  # fmt: skip
# the log's 'Using … backend' line, as explain keeps it: `--mxfp4-backend marlin` among the printed arguments
MEASURED_KEY = "mxfp4-backend"
# the layout kvtop builds for each backend a log can name (log_facts.py): the older line's 'Marlin' / 'Triton', and
# the oracle's `Mxfp4MoeBackend` values (v0.20.2 … v0.34.0, fused_moe/oracle/mxfp4.py): BATCHED_MARLIN pads and repacks
# as MARLIN does (v0.28.0 `mxfp4_round_up_hidden_size_and_intermediate_size` :649, `convert_to_mxfp4_moe_kernel_format`
# :1325). Any other name (FlashInfer's, DeepGEMM's, TRITON_UNFUSED, EMULATION…) is a layout kvtop does not build.
PRINTED_LAYOUTS = {"marlin": MARLIN, "batched_marlin": MARLIN, "triton": TRITON}

# what decides Hopper's backend at a release: the torch it pins (TORCH: below 2.8.0, Marlin), the optional package
# the install may lack (PACKAGE: Marlin where the wheel alone is installed, Triton where the package is added) or
# the package the wheel vendors (WHEEL: Triton)
TORCH, PACKAGE, WHEEL = "torch", "package", "wheel"
TRITON_KERNELS_ERAS: Eras[str] = Eras((
    Era("", TORCH, "v0.10.1 mxfp4.py:131-134 _should_use_marlin: torch < 2.8.0 (the wheel pins 2.7.1) → Marlin"),
    Era("0.10.2", PACKAGE, "v0.10.2 mxfp4.py:91-96 / v0.11.2 :134-142 get_mxfp4_backend: has_triton_kernels(), a package "
                           "the wheel neither ships nor requires (vllm#27672; v0.11.2 import_utils.py:398-400)"),
    Era("0.12.0", WHEEL, "vllm#28788: triton_kernels vendored as vllm/third_party/triton_kernels (the v0.12.0 "
                         "wheel holds it; import_utils.py:431-438 has_triton_kernels)"),
))  # fmt: skip


@dataclass(frozen=True)
class Mxfp4Backend:
    """The backend kvtop builds the experts for, how it knows (measured | stated | release | assumed), why, and
    the backend the install may run instead (None where nothing else is possible)."""

    name: str
    source: str
    why: str
    other: str | None = None


def printed_name(settings: LaunchSettings | None) -> str | None:
    """The MXFP4 MoE backend a log named, in the oracle's spelling ('MARLIN'); None where it named none."""
    printed = settings.flags.get(MEASURED_KEY) if settings is not None else None
    return printed.upper() if isinstance(printed, str) and printed else None


def printed_unbuilt(settings: LaunchSettings | None) -> str | None:
    """The MXFP4 MoE backend a log named where kvtop builds no layout for it (not in `PRINTED_LAYOUTS`); None where
    the log named none, or one kvtop builds."""
    name = printed_name(settings)
    return name if name is not None and name.lower() not in PRINTED_LAYOUTS else None


def _truthy(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.strip() != "" and not false_word(value.strip()))


def mxfp4_backend(settings: LaunchSettings | None, gpu_name: str | None, version: ResolvedVersion) -> Mxfp4Backend | None:
    """The MXFP4 MoE backend of a launch on `gpu_name` (SM 8.x, 9.0, and SM 11.x / 12.x where mxfp4_sm12.py reads the
    release; None elsewhere, and for Triton on SM 11.x / 12.x: not modelled)."""
    capability = compute_capability(gpu_name)
    sm12 = sm12_rule(capability, version)  # SM 11.x / 12.x: Hopper's checks, Marlin only, or not read (mxfp4_sm12.py)
    if capability is None or sm12 == TRITON_FIRST:  # SM 11.x at v0.32.0 … v0.33.x: Triton's Blackwell layouts
        return None
    if sm12 is None and (capability[0] not in (8, 9) or capability[0] == 9 and capability != (9, 0)):
        return None
    gpu = f"SM {capability[0]}.x" if sm12 is not None else "Hopper"
    flags = settings.flags if settings is not None else {}
    printed = printed_name(settings)
    if printed is not None:
        layout = PRINTED_LAYOUTS.get(printed.lower())
        if layout is None or sm12 is not None and layout == TRITON:  # not built; SM 12's Triton: mxfp4_sm12.py
            return None
        return Mxfp4Backend(layout, "measured", f"the log's '{printed}' MXFP4 MoE backend")
    marlin_env = era_for(MARLIN_ENV_ERAS, version)
    if marlin_env.value == DECIDES and flags.get(MARLIN_ENV) is not None:
        return _as_the_variable_decides(flags.get(MARLIN_ENV), capability, version, marlin_env.source)
    if capability[0] == 8:
        return Mxfp4Backend(MARLIN, "release", "SM 8.x: the Triton kernels need SM 9.0 (mxfp4.py)")
    fi_bf16 = capability == (9, 0) and era_for(FLASHINFER_BF16_ERAS, version).value
    if fi_bf16 and _truthy(flags.get(FLASHINFER_BF16_ENV)):
        raise UnsupportedModelError(
            f"=1 on SM 9.0: vLLM {version.label} builds the MXFP4 experts for FlashInfer's SM90 "
            "BF16 MoE where FlashInfer is installed (quantization/mxfp4.py get_mxfp4_backend), a weight layout kvtop "
            "does not model; without FlashInfer it runs Marlin or Triton: drop the variable to plan those",
            field=FLASHINFER_BF16_ENV,
        )
    if marlin_env.value == FORCES and _truthy(flags.get(MARLIN_ENV)):
        return Mxfp4Backend(MARLIN, "stated", f"{MARLIN_ENV}=1 in the launch ({marlin_env.source})")
    if era_for(LORA_MARLIN_ERAS, version).value and _truthy(flags.get(LORA_FLAG)):
        return Mxfp4Backend(MARLIN, "stated", f"--enable-lora in the launch ({era_for(LORA_MARLIN_ERAS, version).source})")
    only = sm12_marlin(capability, version)  # after what the launch states: v0.12.0 … v0.20.x on SM 11.x / 12.x
    if only is not None:
        return Mxfp4Backend(MARLIN, "release", f"{gpu}: {only}")
    era = era_for(TRITON_KERNELS_ERAS, version)
    if era.value == WHEEL:  # Hopper only: SM 11.x / 12.x is Marlin only from v0.12.0 (above)
        return Mxfp4Backend(TRITON, "release", f"Hopper, triton_kernels in the wheel ({era.source})")
    if era.value == TORCH:
        return Mxfp4Backend(MARLIN, "release", f"{gpu}, the wheel's torch below 2.8.0 ({era.source})")
    read_by_none = marlin_env.value == IGNORED and flags.get(MARLIN_ENV) is not None
    ignored = f"; {MARLIN_ENV} is read by no file of this release" if read_by_none else ""
    copies = ("; Triton's swizzled copies on SM 12 (Blackwell layouts) counted as Hopper's in this error"
              if sm12 is not None else "")  # fmt: skip
    return Mxfp4Backend(MARLIN, "assumed", f"{gpu}'s Marlin backend assumed: this release's wheel lacks the optional "
                        "triton_kernels package Triton needs (pip install vllm runs Marlin); an install that adds it "
                        f"runs Triton, which no variable or flag selects{ignored}{copies}", other=TRITON)  # fmt: skip


def _as_the_variable_decides(
    value: object, capability: tuple[int, int], version: ResolvedVersion, source: str
) -> Mxfp4Backend:
    """The backend where VLLM_MXFP4_USE_MARLIN decides (v0.10.1 `_should_use_marlin` returns it, set, before asking
    the GPU; envs.py reads it as `bool(int(value))`): 1 Marlin; 0 Triton's layout, on Hopper as kvtop builds it, on
    SM 8.x and SM 11.x / 12.x not modelled (kvtop's Triton experts are Hopper's)."""
    try:
        marlin = value if isinstance(value, bool) else bool(int(str(value)))
    except ValueError:
        raise InputError(f"vLLM {version.label} reads it as a whole number (envs.py maybe_convert_bool: "
                         f"bool(int(value))), got {quoted(value)}", field=MARLIN_ENV) from None  # fmt: skip
    if marlin:
        return Mxfp4Backend(MARLIN, "stated", f"{MARLIN_ENV}=1 in the launch ({source})")
    if capability[0] != 9:
        raise UnsupportedModelError(
            f"=0 at vLLM {version.label} builds the MXFP4 experts in Triton's layout on SM {capability[0]}.x too "
            f"({source}), which kvtop models on Hopper only: drop the variable to plan the release's Marlin",
            field=MARLIN_ENV,
        )
    return Mxfp4Backend(TRITON, "stated", f"{MARLIN_ENV}=0 in the launch ({source}): Triton's layout, whose "
                        "process_weights_after_loading imports triton_kernels, a package the wheel does not ship")  # fmt: skip
