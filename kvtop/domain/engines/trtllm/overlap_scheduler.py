"""Whether a PyTorch-backend launch runs the overlap scheduler, by release (budget.estimation_tokens reads it: with it
on, the mid-2025 profiling run gives each dummy request two generated tokens' blocks, one without; docs/engines/
trtllm.md §3 step 1, `_get_token_num_for_estimation` in _torch/pyexecutor/_util.py).

PR #4174 ("Enable scheduling overlap by default", merged 2025-05-13) renamed `PyTorchConfig.enable_overlap_scheduler`
(default False: off) to `disable_overlap_scheduler` (default False: on). Its first release is not pinned at the
tags: 0.20.0rc2 was uploaded to PyPI the day it merged (read as before it), 0.20.0rc3 (2025-05-20) is the first
upload after (read as carrying it). Before, the YAML says `pytorch_backend_config: {enable_overlap_scheduler: true}`;
after, `disable_overlap_scheduler: true` (a bool; typed to kvtop as the bare flag, or with a word). The TensorRT
backend's LLM takes neither: `_TrtLLM got invalid argument: disable_overlap_scheduler` (NVIDIA/TensorRT-LLM#7752,
1.0.0rc4), so kvtop refuses it there."""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.redact import quoted

OVERLAP_OFF_KEY = "disable_overlap_scheduler"
OLD_OVERLAP_ON_KEY = "pytorch_backend_config.enable_overlap_scheduler"
# pydantic's bool words (what the LLM API's model accepts), and YAML's y/n read as strings
_TRUE = frozenset({"true", "1", "yes", "on", "t", "y"})
_FALSE = frozenset({"false", "0", "no", "off", "f", "n"})
DEFAULT_ERAS: Eras[bool] = Eras((
    Era("", False, "before PR #4174: PyTorchConfig.enable_overlap_scheduler, default False (off)"),
    Era("0.20.0rc3", True, "PR #4174 (merged 2025-05-13): disable_overlap_scheduler, default False (on); the first "
        "PyPI upload after the merge, not pinned at the tags"),
))  # fmt: skip


def flag_bool(value: object, key: str, source: str | None = None) -> bool:
    """A switch's value as a bool: True/False, a bare flag (True), or a word pydantic reads as one; any other word is
    an InputError naming `--key` (and the file it came from)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise InputError(f"expected true or false, got {quoted(value)}", field=f"--{key}", source=source)


def overlap_on(settings: LaunchSettings, version: ResolvedVersion) -> bool:
    """Whether the PyTorch backend runs the overlap scheduler at this release: the release's key, else its default."""
    if era_for(DEFAULT_ERAS, version).value:
        return not flag_bool(settings.flags.get(OVERLAP_OFF_KEY), OVERLAP_OFF_KEY)
    return flag_bool(settings.flags.get(OLD_OVERLAP_ON_KEY), OLD_OVERLAP_ON_KEY)


def refuse_on_tensorrt(settings: LaunchSettings) -> None:
    """The TensorRT backend's LLM refuses the PyTorch backend's key (issue #7752): an InputError naming it."""
    for key in (OVERLAP_OFF_KEY, OLD_OVERLAP_ON_KEY):
        if key in settings.flags:
            raise InputError(
                "the TensorRT backend takes no overlap-scheduler key (`_TrtLLM got invalid argument`, "
                "NVIDIA/TensorRT-LLM#7752): it is the PyTorch backend's",
                field=f"--{key}",
            )
