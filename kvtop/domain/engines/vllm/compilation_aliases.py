"""Two spellings of compilation settings vLLM takes outside `--compilation-config {...}` (docs/engines/vllm.md §2).

`--max-cudagraph-capture-size N` (EngineArgs.max_cudagraph_capture_size, engine/arg_utils.py:1124 at v0.11.1, :1387 at
v0.21.0; absent at v0.11.0) is copied into `compilation_config.max_cudagraph_capture_size` (arg_utils.py:1762-1769 at
v0.11.1, :2132-2139 at v0.21.0), and vLLM refuses both at once: "max_cudagraph_capture_size and
compilation_config.max_cudagraph_capture_size are mutually exclusive". kvtop reads it as the field (compilation.py).

`--compilation-config.pass_config.fuse_allreduce_rms true|false` (PassConfig.fuse_allreduce_rms, config/compilation.py
:121 at v0.12.0, :126 at v0.13.0; v0.11.x called it `enable_fi_allreduce_fusion`, deprecated at v0.12.0 :141-142, not
read) turns FlashInfer's all-reduce + RMSNorm fusion
pass on or off, read alike from the whole config (`--compilation-config '{"pass_config": {"fuse_allreduce_rms":
false}}'`, `-cc`): `compilation.stated_pass_config` gathers both spellings; `None` takes the optimization level's default (config/vllm.py:222 / :244 at v0.21.0:
`enable_allreduce_rms_fusion` at -O2 and -O3, False at -O0 and -O1). On memory: the pass builds FlashInfer's
workspace (`AllReduceFusionPass.__init__`, allreduce_rms_fusion.py:757-832 at v0.21.0), which fusion_workspace.py
sizes where the default turns it on; false holds none; true where the default is off is not modelled. The value is
a pydantic bool (PassConfig is a pydantic dataclass): true/false, 1/0, yes/no, on/off, t/f, y/n, any case.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import TypeAdapter, ValidationError

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted

CAPTURE_SIZE_FLAG = "--max-cudagraph-capture-size"
FUSE_ALLREDUCE_FLAG = "--compilation-config.pass_config.fuse_allreduce_rms"
CAPTURE_SIZE_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.11.0 engine/arg_utils.py has no --max-cudagraph-capture-size"),
    Era("0.11.1", True, "engine/arg_utils.py:1124 and :1762-1769 at v0.11.1 (:1387, :2132-2139 at v0.21.0)"),
))  # fmt: skip
FUSE_ALLREDUCE_ERAS: Eras[bool] = Eras((
    Era("", False, "before v0.12.0 PassConfig has no fuse_allreduce_rms (v0.11.2 config/compilation.py:113: "
                   "enable_fi_allreduce_fusion)"),
    Era("0.12.0", True, "config/compilation.py:121 at v0.12.0 (:126 at v0.13.0): PassConfig.fuse_allreduce_rms"),
))  # fmt: skip
PASS_CONFIG_BOOL = TypeAdapter(bool)  # PassConfig's pydantic field: read as pydantic reads it (its lax mode)


def capture_size(
    flags: Mapping[str, object], fields: Mapping[str, object], version: ResolvedVersion
) -> object:
    """The value `--max-cudagraph-capture-size` gives compilation_config.max_cudagraph_capture_size (None where the
    launch does not pass it); an InputError where the release lacks the flag or the config sets the field too."""
    value = flags.get(CAPTURE_SIZE_FLAG.lstrip("-"))
    if value is None:
        return None
    if not CAPTURE_SIZE_ERAS.at(version):
        raise InputError(
            f"not a flag of vLLM {version.label} (from v0.11.1: engine/arg_utils.py)", field=CAPTURE_SIZE_FLAG
        )
    if fields.get("max_cudagraph_capture_size") is not None:
        raise InputError("max_cudagraph_capture_size and compilation_config.max_cudagraph_capture_size are mutually "
                         "exclusive (vLLM's own error, engine/arg_utils.py)", field=CAPTURE_SIZE_FLAG)  # fmt: skip
    try:
        return json.loads(str(value))
    except json.JSONDecodeError:
        return value


def fuse_allreduce_rms(pass_config: Mapping[str, object], version: ResolvedVersion) -> bool | None:
    """What the launch sets PassConfig.fuse_allreduce_rms to (None: the optimization level's default), from the
    PassConfig fields it states in any spelling (`compilation.stated_pass_config`: the dotted flag, or the whole
    config's `pass_config` object); an InputError where the release lacks the field or the value is no boolean."""
    value = pass_config.get("fuse_allreduce_rms")
    if value is None:
        return None
    if not FUSE_ALLREDUCE_ERAS.at(version):
        raise InputError(f"vLLM {version.label} has no pass_config.fuse_allreduce_rms (from v0.12.0: "
                         "config/compilation.py)", field=FUSE_ALLREDUCE_FLAG)  # fmt: skip
    try:
        return PASS_CONFIG_BOOL.validate_python(value)
    except ValidationError:
        raise InputError(f"{quoted(value)}: a pydantic bool (true/false, 1/0, yes/no, on/off, t/f, y/n)",
                         field=FUSE_ALLREDUCE_FLAG) from None
