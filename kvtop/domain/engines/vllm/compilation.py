"""What a launch's compilation config and optimization level set of vLLM's CUDA graphs (docs/engines/vllm.md §2).

`--compilation-config` takes a JSON object (`CompilationConfig(**value)`, engine/arg_utils.py) or, through
FlexibleArgumentParser, one field a flag: `--compilation-config.cudagraph_mode PIECEWISE` becomes
`{"cudagraph_mode": "PIECEWISE"}` (utils/argparse_utils.py: the key before the first "." is the flag, the rest a
nested dict; the value JSON, else a human-readable int, else the string). Its short spelling was `-O` until v0.11.x
(arg_utils.py:934 at v0.11.0, where `-O3` is compilation level 3) and `-cc` from v0.12.0 (arg_utils.py:1128), where
`-O` became `--optimization-level` (`-O3`, `-O 3`; argparse_utils.py:247-258) and `-O.<field>` was still turned into
`-cc.<field>`, deprecated (argparse_utils.py:260-269 at v0.12.0; gone at v0.13.0). kvtop reads `-cc` and `-O.<field>`
as `--compilation-config` (`flags.as_parsed`).

The fields that move the memory vLLM charges for graphs (v0.22.0 config/compilation.py:590, :631, :675):
`cudagraph_mode` (NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE; any case, `CUDAGraphMode[value.upper()]`,
:847-852), `cudagraph_capture_sizes` (de-duplicated, those above max_num_batched_tokens dropped: config/vllm.py
`_set_cudagraph_sizes`, :1669-1680) and `max_cudagraph_capture_size` (the default sizes stop there, :1647-1661).
The optimization level sets the mode where the config does not: O0 NONE, O1 PIECEWISE, O2 and O3 FULL_AND_PIECEWISE
(config/vllm.py:188-272 at v0.22.0, `OPTIMIZATION_LEVEL_TO_CONFIG`; from v0.12.0). What the attention backend
downgrades (a backend without FULL graphs) is not read. `--max-cudagraph-capture-size` is read as its field and
`pass_config.fuse_allreduce_rms` by fusion_workspace.py (compilation_aliases.py); `--cuda-graph-sizes` (v0.9.0 to v0.12.0)
as the sizes it sets (graph_sizes.py). Other fields (mode, pass_config, …)
are accepted, not modelled.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.compilation_aliases import CAPTURE_SIZE_FLAG, FUSE_ALLREDUCE_FLAG, capture_size
from kvtop.domain.engines.vllm.graph_sizes import SIZES_FLAG, stated_sizes
from kvtop.domain.errors import InputError

CONFIG_FLAG = "--compilation-config"
LEVEL_FLAGS = frozenset({"--optimization-level", "-O", "-O0", "-O1", "-O2", "-O3"})
GRAPH_FIELDS = ("cudagraph_mode", "cudagraph_capture_sizes", "max_cudagraph_capture_size")
# the flags flags.py passes through: the whole config, its graph fields one a flag, and the optimization level
FLAGS = frozenset({CONFIG_FLAG, *(f"{CONFIG_FLAG}.{field}" for field in GRAPH_FIELDS), *LEVEL_FLAGS,
                   CAPTURE_SIZE_FLAG, FUSE_ALLREDUCE_FLAG, SIZES_FLAG})  # compilation_aliases.py, graph_sizes.py
MODES = ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
# what `-O` means: the compilation config until v0.11.x, the optimization level from v0.12.0
O_IS_LEVEL: Eras[bool] = Eras((
    Era("", False, "arg_utils.py:934 at v0.11.0: `--compilation-config`, `-O`"),
    Era("0.12.0", True, "arg_utils.py:1128-1138 at v0.12.0: `-cc` the compilation config, `-O` the optimization level"),
))  # fmt: skip
LEVEL_MODES = {0: "NONE", 1: "PIECEWISE", 2: "FULL_AND_PIECEWISE", 3: "FULL_AND_PIECEWISE"}


class GraphConfig(BaseModel):
    """The launch's CUDA-graph settings: each None where it states none (vLLM's default holds)."""

    model_config = ConfigDict(frozen=True)
    mode: str | None = None
    capture_sizes: tuple[int, ...] | None = None
    max_capture_size: int | None = None
    said: str = ""  # where each came from, in words ("" where the launch states none)


def graph_config(flags: Mapping[str, object], version: ResolvedVersion) -> GraphConfig:
    """The graph settings `flags` state at `version` (the config's, then the optimization level's mode); an
    InputError naming the flag for a value vLLM would refuse."""
    fields = _config_fields(flags, version)
    mode = _mode(fields.get("cudagraph_mode"))
    said = [f"cudagraph_mode {mode}"] if mode else []
    level = _level(flags, version)
    if mode is None and level is not None:
        mode = LEVEL_MODES[level]
        said.append(f"-O{level}: cudagraph_mode {mode} (OPTIMIZATION_LEVEL_0{level})")
    sizes = _sizes(fields.get("cudagraph_capture_sizes"))
    largest = _positive(fields.get("max_cudagraph_capture_size"), "max_cudagraph_capture_size")
    if sizes is not None:
        said.append(f"cudagraph_capture_sizes {list(sizes)}")
    if largest is not None:
        said.append(f"max_cudagraph_capture_size {largest}")
    return GraphConfig(mode=mode, capture_sizes=sizes, max_capture_size=largest, said="; ".join(said))


def _config_fields(flags: Mapping[str, object], version: ResolvedVersion) -> dict[str, object]:
    """The compilation config's fields: the JSON object (or `-O`'s before v0.12.0), then each dotted field over it."""
    fields: dict[str, object] = {}
    whole = [flags.get(CONFIG_FLAG.lstrip("-"))]
    if not O_IS_LEVEL.at(version):
        whole.append(flags.get("O"))
    for value in whole:
        if not isinstance(value, str) or value.strip().lstrip("-").isdigit():
            continue  # absent, or a compilation level (`-O3` before v0.12.0): no graph field
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as err:
            raise InputError(f"not a JSON object: {err.msg} (vLLM reads it as CompilationConfig's fields)",
                             field=CONFIG_FLAG) from None  # fmt: skip
        if not isinstance(parsed, dict):
            raise InputError("a JSON object of CompilationConfig's fields, e.g. '{\"cudagraph_mode\": \"PIECEWISE\"}'",
                             field=CONFIG_FLAG)  # fmt: skip
        fields.update(parsed)
    for field in GRAPH_FIELDS:
        value = flags.get(f"{CONFIG_FLAG.lstrip('-')}.{field}")
        if isinstance(value, str):
            try:
                fields[field] = json.loads(value)
            except json.JSONDecodeError:
                fields[field] = value  # vLLM keeps a value that is no JSON as the string
    alias = capture_size(flags, fields, version)  # `--max-cudagraph-capture-size` (compilation_aliases.py)
    if alias is not None:
        fields["max_cudagraph_capture_size"] = alias
    legacy = stated_sizes(flags, fields, version)  # `--cuda-graph-sizes` (graph_sizes.py)
    if legacy is not None:
        fields["cudagraph_capture_sizes"] = legacy
    return fields


def _mode(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value.upper() not in MODES:
        raise InputError(f"cudagraph_mode {value!r}: one of {', '.join(MODES)}", field=CONFIG_FLAG)
    return value.upper()


def _sizes(value: object) -> tuple[int, ...] | None:
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    sizes = [item for item in items if isinstance(item, int) and not isinstance(item, bool) and item > 0]
    if not items or len(sizes) != len(items):
        raise InputError(f"cudagraph_capture_sizes {value!r}: a list of positive token counts", field=CONFIG_FLAG)
    return tuple(sorted(set(sizes)))


def _positive(value: object, name: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InputError(f"{name} {value!r}: a positive token count", field=CONFIG_FLAG)
    return value


def _level(flags: Mapping[str, object], version: ResolvedVersion) -> int | None:
    """The optimization level the launch states (`--optimization-level N`, from v0.12.0 `-ON`, `-O N`)."""
    stated: list[object] = [flags.get("optimization-level")]
    if O_IS_LEVEL.at(version):
        stated += [flags.get("O"), *(int(key[1]) for key in ("O0", "O1", "O2", "O3") if flags.get(key) is True)]
    for value in stated:
        if value is None:
            continue
        text = str(value).strip()
        if text not in ("0", "1", "2", "3"):
            raise InputError(f"optimization level {text!r}: 0, 1, 2 or 3", field="--optimization-level")
        return int(text)
    return None
