"""vLLM's `--skip-mm-profiling`: the profile run leaves the multimodal encoder out (docs/engines/vllm.md §10).

The flag sets `MultiModalConfig.skip_mm_profiling` (v0.10.1 config/__init__.py:2524; v0.21.0 config/multimodal.py:183,
"skips multimodal memory profiling and only profiles with language backbone model"). Its one reader is the runner's
`profile_run`: where the model takes multimodal inputs, it logs "Skipping memory profiling for multimodal encoder and
encoder cache." instead of running the encoder on its dummy batch and keeping the encoder cache through the text run
(V1 v1/worker/gpu_model_runner.py:2569 at v0.10.1, :2984 v0.10.2, :3328 v0.11.0, :4697 v0.14.1, :5725 v0.19.1,
:5892 v0.21.0, :6468 v0.30.0, :6076 v0.33.0; the V2 runner's v1/worker/gpu/model_runner.py:941 at v0.30.0, :1025
v0.33.0, the same test). The text model's `_dummy_run` and sampler then run alone: the profiled peak is a text
model's, and no encoder profile (encoder_profile.py) is charged. The tower's weights stay loaded (the flag builds
what it built). A model served text-only (`--language-model-only`, text_only.py) or without a tower profiles no
encoder anyway: the flag changes nothing there. V0's runner never reads the flag (v0.10.1 and v0.10.2: no use in
vllm/worker/), so a start that falls back to V0 profiles as it would without it.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.batching import engine_era
from kvtop.domain.engines.vllm.flags_table import FlagSpan
from kvtop.domain.engines.vllm.text_only import profiles_encoder
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.span import flag_switch

FLAG = "--skip-mm-profiling"
KEY = FLAG[2:]  # its key in LaunchSettings.flags
# argparse has it from v0.10.1 (engine/arg_utils.py:733 at v0.10.1, :1554 at v0.33.0), a bool field of
# MultiModalConfig, so BooleanOptionalAction (get_kwargs, :195-197 at v0.10.1): `--no-skip-mm-profiling` too
SPAN = FlagSpan("0.10.1", None, "engine/arg_utils.py:1554 (v0.33.0)", True)
FLAGS = frozenset({FLAG, "--no-" + KEY})
SOURCE = "v1/worker/gpu_model_runner.py profile_run (v0.10.1 :2569, v0.21.0 :5892, v0.33.0 :6076)"
# whether the V1 runner's profile_run reads the flag, by release (module docstring)
SKIPS_ERAS: Eras[bool] = Eras((
    Era("", False, "no such flag before v0.10.1"),
    Era("0.10.1", True, "v1/worker/gpu_model_runner.py:2569 (v0.10.1), :2984 (v0.10.2), :3328 (v0.11.0), :4697 "
        "(v0.14.1), :5725 (v0.19.1), :5892 (v0.21.0), :6468 (v0.30.0), :6076 (v0.33.0); v1/worker/gpu/model_runner.py "
        ":941 (v0.30.0), :1025 (v0.33.0)"),
))  # fmt: skip


def skips_encoder(version: ResolvedVersion, gpu_name: str | None, settings: LaunchSettings) -> bool:
    """Whether this start's profile run skips the encoder's dummy pass: the flag set (`span.flag_switch`:
    `--no-skip-mm-profiling` or a false word, as `LLM(skip_mm_profiling=False)`, leaves it unset), at a release whose
    V1 (or V2) runner reads it, on a start that does not fall back to V0 (`batching.engine_era`)."""
    flags = settings.flags
    return flag_switch(settings, KEY) is True and SKIPS_ERAS.at(version) and engine_era(version, gpu_name, flags) != "v0"


def encoder_profiled(
    model: ModelSpec | None, settings: LaunchSettings, version: ResolvedVersion, gpu_name: str | None
) -> bool:
    """Whether the profile runs an encoder before the text model: a multimodal model not served text-only
    (`text_only.profiles_encoder`) nor launched with the encoder's pass skipped (`skips_encoder`)."""
    return profiles_encoder(model, settings, version) and not skips_encoder(version, gpu_name, settings)
