"""Which MXFP4 MoE backend vLLM runs on a GPU, and how kvtop knows it (docs/engines/vllm.md §20.1).

`get_mxfp4_backend` (quantization/mxfp4.py, v0.10.1 … v0.13.0; `select_mxfp4_moe_backend` in
fused_moe/oracle/mxfp4.py at 0.33.0) picks, on CUDA without a FlashInfer opt-in:
- Marlin when VLLM_MXFP4_USE_MARLIN is set, or when `triton_kernels_supported` fails: `has_triton_kernels()`
  (the optional `triton_kernels` package, or from the wheel's vendored `vllm.third_party.triton_kernels`),
  torch ≥ 2.8.0 and 9.0 ≤ capability < 11.0; so always on SM 8.x;
- else Triton.
On Hopper the choice so rests on a package. Before v0.13.0 kvtop has read no wheel that ships it (the Kaggle pip
install of v0.11.2 logged 'Using Marlin backend' on an H100; vllm#27672: "users will have to install
`triton_kernels` manually"; vllm#28788 vendors it into `vllm/third_party/triton_kernels` at build time, and the
v0.13.0 wheel holds it, read in engine_diff's install): a plan cannot know it, so it assumes Triton (llm-d's
v0.11.0 H100 runs printed Triton's weights) and names Marlin as the other backend, whose weights difference
the weights term's error carries (calibration.py). From v0.13.0 the wheel ships the package: Triton is the
release's (0.33.0's oracle keeps TRITON ahead of MARLIN for gpt-oss). The release v0.12.x is not read: kept in
the first era.

Where the launch says it (VLLM_MXFP4_USE_MARLIN=1 before the command, read as a leading assignment) the backend
is stated; where the log printed 'Using Marlin backend' / 'Using Triton backend' (mxfp4.py `logger.info_once`,
v0.10.1 … v0.13.0) it is measured (log_lines.py keeps it as a decision, flags[MEASURED_KEY]).
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

# whether the release's wheel ships triton_kernels (so Hopper's backend is the release's, not the install's)
TRITON_KERNELS_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.10.1–v0.11.2 mxfp4.py has_triton_kernels(): an optional package the wheel lacks "
                   "(vllm#27672; the Kaggle v0.11.2 pip install logged 'Using Marlin backend' on an H100)"),
    Era("0.13.0", True, "vllm#28788: triton_kernels vendored as vllm/third_party/triton_kernels (the v0.13.0 "
                        "wheel holds it; import_utils.py has_triton_kernels)"),
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
    if era.value:
        return Mxfp4Backend(TRITON, "release", f"Hopper, triton_kernels in the wheel ({era.source})")
    return Mxfp4Backend(TRITON, "assumed", "Hopper's Triton backend assumed: it needs the optional triton_kernels "
                        "package, which this release's wheel lacks; without it vLLM runs Marlin", other=MARLIN)  # fmt: skip
