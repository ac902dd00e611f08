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
  needs; an image that adds the package runs Triton (llm-d's v0.11.0 H100 rows print Triton's 64.38 GiB). A plan
  cannot see the install: it assumes the wheel's Marlin and names Triton as the other backend, whose weights
  difference the weights term's error carries (mxfp4_weights.py);
- from v0.12.0: vllm#28788 vendors the package into the wheel (v0.12.0 holds vllm/third_party/triton_kernels,
  import_utils.py:431-438 has_triton_kernels finds it there): Triton is the release's (0.33.0's oracle keeps
  TRITON ahead of MARLIN for gpt-oss).

Where the launch says it (VLLM_MXFP4_USE_MARLIN=1 before the command, read as a leading assignment) the backend
is stated; where the log printed 'Using Marlin backend' / 'Using Triton backend' (mxfp4.py `logger.info_once`,
v0.10.2 … v0.13.0) it is measured (log_lines.py keeps it as a decision, flags[MEASURED_KEY]).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.gpus import compute_capability
from kvtop.domain.launch import LaunchSettings

MARLIN, TRITON = "marlin", "triton"
MARLIN_ENV = "VLLM_MXFP4_USE_MARLIN"  # envs.py: bool(int(os.getenv(...))) where set
# the log's 'Using … backend' line, as explain keeps it: `--mxfp4-backend marlin` among the printed arguments
MEASURED_KEY = "mxfp4-backend"

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


def _truthy(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() not in ("", "0", "false", "no", "off"))


def mxfp4_backend(settings: LaunchSettings | None, gpu_name: str | None, version: ResolvedVersion) -> Mxfp4Backend | None:
    """The MXFP4 MoE backend of a launch on `gpu_name` (SM 8.x and 9.0 only; None elsewhere: not modelled)."""
    capability = compute_capability(gpu_name)
    if capability is None or capability[0] not in (8, 9) or capability[0] == 9 and capability != (9, 0):
        return None
    flags = settings.flags if settings is not None else {}
    printed = flags.get(MEASURED_KEY)
    if isinstance(printed, str) and printed.lower() in (MARLIN, TRITON):
        return Mxfp4Backend(printed.lower(), "measured", f"the log's 'Using {printed.capitalize()} backend'")
    if capability[0] == 8:
        return Mxfp4Backend(MARLIN, "release", "SM 8.x: the Triton kernels need SM 9.0 (mxfp4.py)")
    if _truthy(flags.get(MARLIN_ENV)):
        return Mxfp4Backend(MARLIN, "stated", f"{MARLIN_ENV}=1 in the launch")
    era = era_for(TRITON_KERNELS_ERAS, version)
    if era.value == WHEEL:
        return Mxfp4Backend(TRITON, "release", f"Hopper, triton_kernels in the wheel ({era.source})")
    if era.value == TORCH:
        return Mxfp4Backend(MARLIN, "release", f"Hopper, the wheel's torch below 2.8.0 ({era.source})")
    return Mxfp4Backend(MARLIN, "assumed", "Hopper's Marlin backend assumed: this release's wheel lacks the optional "
                        "triton_kernels package Triton needs (pip install vllm runs Marlin); an install that adds it "
                        "runs Triton", other=TRITON)  # fmt: skip
