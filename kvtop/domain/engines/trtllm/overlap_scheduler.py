"""Whether a PyTorch-backend launch runs the overlap scheduler, by release (budget.estimation_tokens reads it: with it
on, the mid-2025 profiling run gives each dummy request two generated tokens' blocks, one without; docs/engines/
trtllm.md §3 step 1, `_get_token_num_for_estimation` in _torch/pyexecutor/_util.py).

PR #4174 ("Enable scheduling overlap by default", merged 2025-05-13) renamed `PyTorchConfig.enable_overlap_scheduler`
(default False: off) to `disable_overlap_scheduler` (default False: on). Its first release is not pinned at the
tags: 0.20.0rc2 was uploaded to PyPI the day it merged (read as before it), 0.20.0rc3 (2025-05-20) is the first
upload after (read as carrying it). Before, the YAML says `pytorch_backend_config: {enable_overlap_scheduler: true}`;
after, `pytorch_backend_config: {disable_overlap_scheduler: true}` until PR #4603 ("Flatten PyTorchConfig knobs into
TorchLlmArgs", opened 2025-05-23; its first release read as 0.21.0rc0, uploaded 2025-06-04, not pinned) made it the
top-level `disable_overlap_scheduler: true` (a bool; typed to kvtop as the bare flag, or with a word). Each release
reads its own spelling (`KEY_ERAS`); another release's is refused naming it (PR #4890 dropped pytorch_backend_config
from the YAML reader, so an old key is not read there, and a new one is not before). The TensorRT backend's LLM
takes none: `_TrtLLM got invalid argument: disable_overlap_scheduler` (NVIDIA/TensorRT-LLM#7752, 1.0.0rc4); kvtop
refuses it there from the release the LLM API split its args by backend (PR #3823, read as 0.20.0rc0: not pinned),
and leaves it unread before (an unknown key was not refused until PR #4600, 2025-05-23)."""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.redact import quoted

OVERLAP_OFF_KEY = "disable_overlap_scheduler"
OLD_OVERLAP_ON_KEY = "pytorch_backend_config.enable_overlap_scheduler"
MID_OVERLAP_OFF_KEY = "pytorch_backend_config.disable_overlap_scheduler"
OVERLAP_KEYS = (OVERLAP_OFF_KEY, MID_OVERLAP_OFF_KEY, OLD_OVERLAP_ON_KEY)
# the key a release reads (and whether it says "off"): PR #4174 at 0.20.0rc3, PR #4603 at 0.21.0rc0 (both not pinned)
KEY_ERAS: Eras[tuple[str, bool]] = Eras((
    Era("", (OLD_OVERLAP_ON_KEY, False), "before PR #4174: PyTorchConfig.enable_overlap_scheduler"),
    Era("0.20.0rc3", (MID_OVERLAP_OFF_KEY, True), "PR #4174 (merged 2025-05-13): PyTorchConfig.disable_overlap_scheduler, "
        "under pytorch_backend_config in the YAML (test YAML id 46879682823)"),
    Era("0.21.0rc0", (OVERLAP_OFF_KEY, True), "PR #4603 (opened 2025-05-23; 0.21.0rc0 uploaded 2025-06-04, not pinned): "
        "TorchLlmArgs.disable_overlap_scheduler at the YAML's top level"),
))  # fmt: skip
# whether the TensorRT backend's LLM refuses the PyTorch backend's key: from the LLM API's split by backend
TENSORRT_REFUSES_ERAS: Eras[bool] = Eras((
    Era("", False, "before PR #3823: one LLM args class, an unknown key not refused until PR #4600 (2025-05-23)"),
    Era("0.20.0rc0", True, "PR #3823 split the LLM API's args by backend (read as 0.20.0rc0, not pinned): "
        "`_TrtLLM got invalid argument: disable_overlap_scheduler` (NVIDIA/TensorRT-LLM#7752, 1.0.0rc4)"),
))  # fmt: skip
# pydantic's bool words (what the LLM API's model accepts), and YAML's y/n read as strings
_TRUE = frozenset({"true", "1", "yes", "on", "t", "y"})
_FALSE = frozenset({"false", "0", "no", "off", "f", "n"})


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
    """Whether the PyTorch backend runs the overlap scheduler at this release: the release's key (`KEY_ERAS`), whose
    default is False on both sides of PR #4174 (`enable_…` off, `disable_…` on: one boundary, one table); another
    release's spelling is an InputError naming it and the release's own."""
    key, says_off = era_for(KEY_ERAS, version).value
    for other in OVERLAP_KEYS:
        if other != key and other in settings.flags:
            raise InputError(
                f"TensorRT-LLM {version.text or '(latest)'} reads the overlap scheduler as {key}, not this spelling (another "
                "release's: PR #4174, PR #4603)", field=f"--{other}",
            )  # fmt: skip
    return flag_bool(settings.flags.get(key), key) != says_off


def refuse_on_tensorrt(settings: LaunchSettings, version: ResolvedVersion) -> None:
    """The TensorRT backend's LLM refuses the PyTorch backend's key (issue #7752) from PR #3823's split
    (`TENSORRT_REFUSES_ERAS`): an InputError naming it (before, the key is left unread)."""
    if not era_for(TENSORRT_REFUSES_ERAS, version).value:
        return
    for key in OVERLAP_KEYS:
        if key in settings.flags:
            raise InputError(
                "the TensorRT backend takes no overlap-scheduler key (`_TrtLLM got invalid argument`, "
                "NVIDIA/TensorRT-LLM#7752): it is the PyTorch backend's",
                field=f"--{key}",
            )
