"""What a launch's compilation config and optimization level set of vLLM's CUDA graphs (docs/engines/vllm.md §2).

`--compilation-config` takes a JSON object (`CompilationConfig(**value)`, engine/arg_utils.py) or, through
FlexibleArgumentParser, one field a flag: `--compilation-config.cudagraph_mode PIECEWISE` becomes
`{"cudagraph_mode": "PIECEWISE"}` (utils/argparse_utils.py: the key before the first "." is the flag, the rest a
nested dict; the value JSON, else a human-readable int, else the string). Its short spelling was `-O` until v0.11.x
(arg_utils.py:934 at v0.11.0, where `-O3` is compilation level 3) and `-cc` from v0.12.0 (arg_utils.py:1128), where
`-O` became `--optimization-level` (`-O3`, `-O 3`; argparse_utils.py:247-258) and `-O.<field>` was still turned into
`-cc.<field>`, deprecated (argparse_utils.py:260-269 at v0.12.0; gone at v0.13.0). kvtop reads `-O.<field>` as
`--compilation-config` (`flags.as_parsed`) and `-cc` / `-cc.<field>` as it from v0.12.0 (`long_spelled`); before, vLLM's
argparse has no `-cc` (absent from the v0.11.2 wheel's arg_utils.py and argparse_utils.py) and kvtop refuses it as
that release refuses it.

The fields that move the memory vLLM charges for graphs (v0.22.0 config/compilation.py:590, :631, :675):
`cudagraph_mode` (NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE; any case, `CUDAGraphMode[value.upper()]`,
:847-852), `cudagraph_capture_sizes` (de-duplicated, those above max_num_batched_tokens dropped: config/vllm.py
`_set_cudagraph_sizes`, :1669-1680) and `max_cudagraph_capture_size` (the default sizes stop there, :1647-1661).
The optimization level sets the mode where the config does not: O0 NONE, O1 PIECEWISE, O2 and O3 FULL_AND_PIECEWISE
(config/vllm.py:188-272 at v0.22.0, `OPTIMIZATION_LEVEL_TO_CONFIG`; from v0.12.0); from v0.10.1 to v0.11.2 a stated
compilation level other than 3 sets NONE (`COMPILATION_LEVEL_SETS_MODE`; before, V1 compiled at level 3 whatever),
whether `-O N` or the JSON's "level" ("mode" from v0.11.1; `JSON_LEVEL`, `compilation_level`, the one reader); from
v0.12.0 to v0.29.x a stated mode other than 3 makes the graphs NONE over a stated cudagraph_mode too, and from v0.30.0
it drops their piecewise part unless breakable graphs run: named, not modelled (`MODE_FORCES_NONE`).
What the attention backend downgrades is read under speculative decoding alone (spec_graph_mode.py: FULL decode
graphs of q > 1 tokens); a stated FULL on a backend without mixed FULL graphs is not read.
`--max-cudagraph-capture-size` is read as its field and `pass_config.fuse_allreduce_rms` by fusion_workspace.py
(compilation_aliases.py); `--cuda-graph-sizes` (v0.9.0 to v0.12.0) as the sizes it sets (graph_sizes.py). `pass_config` is read whichever the spelling (`stated_pass_config`: the whole
JSON's object or the dotted `--compilation-config.pass_config.<field>`), its fuse_allreduce_rms by fusion_workspace.py.
Other fields (mode, pass_config's others, …) are accepted, not modelled, and named where a rule's memory may hang on them
(`unread_fields`). A dotted field beside the whole JSON drops the JSON (`DOTTED_REPLACES_WHOLE`: the parser appends the
dotted fields as one more `--compilation-config` and argparse keeps the last; read at v0.11.0, v0.13.0, v0.33.0).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.compilation_aliases import CAPTURE_SIZE_FLAG, FUSE_ALLREDUCE_FLAG, capture_size
from kvtop.domain.engines.vllm.flags_table import FlagSpan
from kvtop.domain.engines.vllm.graph_sizes import SIZES_FLAG, stated_sizes
from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted

CONFIG_FLAG = "--compilation-config"
SHORT_FLAG = "-cc"  # the same add_argument call's short spelling, from v0.12.0
SHORT_SPAN = FlagSpan("0.12.0", None, "engine/arg_utils.py:1128 (v0.12.0); none in the v0.11.2 wheel")
LEVEL_FLAGS = frozenset({"--optimization-level", "-O", "-O0", "-O1", "-O2", "-O3"})
GRAPH_FIELDS = ("cudagraph_mode", "cudagraph_capture_sizes", "max_cudagraph_capture_size")
# the flags flags.py passes through: the whole config, its graph fields one a flag, and the optimization level
FLAGS = frozenset({*(f"{spelling}{field}" for spelling in (CONFIG_FLAG, SHORT_FLAG)
                     for field in ("", *(f".{graph}" for graph in GRAPH_FIELDS), FUSE_ALLREDUCE_FLAG[len(CONFIG_FLAG):])),
                   *LEVEL_FLAGS, CAPTURE_SIZE_FLAG, SIZES_FLAG})  # compilation_aliases.py, graph_sizes.py
MODES = ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
# what `-O` means: the compilation config until v0.11.x, the optimization level from v0.12.0
O_IS_LEVEL: Eras[bool] = Eras((
    Era("", False, "arg_utils.py:934 at v0.11.0: `--compilation-config`, `-O`"),
    Era("0.12.0", True, "arg_utils.py:1128-1138 at v0.12.0: `-cc` the compilation config, `-O` the optimization level"),
))  # fmt: skip
LEVEL_MODES = {0: "NONE", 1: "PIECEWISE", 2: "FULL_AND_PIECEWISE", 3: "FULL_AND_PIECEWISE"}
# Before v0.12.0 `-O N` is CompilationConfig's level. Whether a stated level sets the V1 graphs' mode where the config
# states no cudagraph_mode: VllmConfig.__post_init__ makes it NONE unless the level is 3 (PIECEWISE); V0's graphs read
# enforce_eager alone (kvtop reads the mode from v0.18.0, where no V0 runs). A level 3 keeps vLLM's default mode.
COMPILATION_LEVEL_SETS_MODE: Eras[bool] = Eras((
    Era("", False, "config.py:4305-4322 at v0.9.0.1, :4585-4591 at v0.10.0: V1 (not eager) sets level PIECEWISE "
                   "whatever the launch states, so graphs are captured at -O0 too (vllm#20997)"),
    Era("0.10.1", True, "vllm#19340: the level a launch states kept; config/__init__.py:3529-3560 at v0.10.1, :336-382 at "
                        "v0.11.0, config/vllm.py:440-501 at v0.11.1 and v0.11.2: cudagraph_mode NONE unless level 3"),
    Era("0.12.0", False, "`-O` is the optimization level (LEVEL_MODES)"),
))  # fmt: skip
PIECEWISE_LEVEL = 3  # CompilationLevel.PIECEWISE (CompilationMode.VLLM_COMPILE from v0.11.1)
# The JSON's own keys for it: CompilationConfig's "level" (what `-O3` sets: "`-O3` is equivalent to `-O.level=3` (same
# as `-O='{"level":3}'`)"), from v0.11.1 "mode" beside it, a CompilationMode's number or name
JSON_LEVEL: Eras[str] = Eras((
    Era("", "level", "config/compilation.py:156 at v0.10.1, :155 at v0.11.0 (`level: Optional[int]`); the docstring "
                     "config/__init__.py:3315 at v0.10.1, :124 at v0.11.0"),
    Era("0.11.1", "mode or level", "config/compilation.py:239-246 at v0.11.1: `level` deprecated, `mode` beside it; "
                                   "__post_init__ :609-618 (v0.11.2 the same), :779-789 at v0.12.0, :748 at v0.15.0, "
                                   ":813 at v0.17.0: mode = level where no mode; only mode where both"),
    Era("0.18.0", "mode", "config/compilation.py at v0.18.0: no `level` field, and @config forbids extra fields "
                          "(config/utils.py `extra=\"forbid\"`): vLLM refuses it; the same in the v0.26.0, v0.29.0, "
                          "v0.33.0 wheels"),
))  # fmt: skip
MODE_NAMES = {"NONE": 0, "STOCK_TORCH_COMPILE": 1, "DYNAMO_TRACE_ONCE": 2, "VLLM_COMPILE": 3}  # CompilationMode, :36-43
# From v0.12.0 a stated compilation mode other than VLLM_COMPILE makes the graphs NONE, a stated cudagraph_mode too
# (VllmConfig.__post_init__ after the optimization level's defaults); from v0.30.0 only the piecewise part goes
# (PIECEWISE to NONE, FULL_AND_PIECEWISE to FULL_DECODE_ONLY) unless breakable CUDA graphs run, which vLLM turns on by
# the model's architecture (`default_breakable_cudagraph_architectures`, not read): None, not modelled
MODE_FORCES_NONE: Eras[bool | None] = Eras((
    Era("", False, "before v0.12.0 the level sets only a mode the config leaves unstated (COMPILATION_LEVEL_SETS_MODE)"),
    Era("0.12.0", True, "config/vllm.py:648-658 at v0.12.0 ('Cudagraph mode %s is not compatible with compilation mode "
                        "%s. Overriding to NONE.'), :675 v0.13.0, :718 v0.14.0, :785 v0.16.0, :852 v0.18.0, :979 "
                        "v0.20.0, :1124 v0.22.0, :1212 v0.25.0, :1316 v0.27.1, :1475 v0.29.0"),
    Era("0.30.0", None, "config/vllm.py:1013-1029 at v0.30.0 (`_normalize_piecewise_cudagraph_mode`: "
                        "cudagraph_mode.without_piecewise() unless breakable CUDA graphs, :748-774), :1111 v0.31.0, "
                        ":1086 v0.32.0, :1129-1148 v0.33.0: not modelled"),
))  # fmt: skip
DOTTED = f"{CONFIG_FLAG.lstrip('-')}."  # a dotted field's key in the launch's flags
# A dotted field beside the whole JSON: FlexibleArgumentParser.parse_args gathers the dotted fields into one object and
# appends it as a further `--compilation-config JSON` after the other arguments, and argparse keeps the last value of
# a store option, so the whole JSON is dropped (no merge, no warning)
DOTTED_REPLACES_WHOLE: Eras[bool] = Eras((
    Era("", False, "not read before v0.11.0: kvtop lays the dotted fields over the whole JSON"),
    Era("0.11.0", True, "utils/__init__.py:1936-1978 at v0.11.0, utils/argparse_utils.py:313-349 at v0.13.0, "
                        ":461-500 at v0.33.0: the dotted fields appended as their own --compilation-config"),
))  # fmt: skip
# the whole config's fields kvtop reads: the graph fields (graph_config) and pass_config.fuse_allreduce_rms
# (fusion_workspace.py); any other is accepted and not modelled (`unread_fields`)
READ_PASS_FIELDS = frozenset({"fuse_allreduce_rms"})


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
    fields = config_fields(flags, version)
    mode = _mode(fields.get("cudagraph_mode"))
    said = [f"cudagraph_mode {mode}"] if mode else []
    stated = _optimization_level(flags, version)
    compiled = compilation_level(flags, version)
    if mode is None and stated is not None:
        mode = LEVEL_MODES[stated]
        said.append(f"-O{stated}: cudagraph_mode {mode} (OPTIMIZATION_LEVEL_0{stated})")
    elif (mode is None and compiled is not None and compiled != PIECEWISE_LEVEL
          and COMPILATION_LEVEL_SETS_MODE.at(version)):  # fmt: skip
        mode = "NONE"
        said.append(f"compilation level {compiled}, not PIECEWISE: cudagraph_mode NONE")
    if compiled is not None and compiled != PIECEWISE_LEVEL and MODE_FORCES_NONE.at(version) and mode != "NONE":
        mode = "NONE"
        said.append(f"compilation mode {compiled}, not VLLM_COMPILE: cudagraph_mode NONE (vLLM overrides)")
    sizes = _sizes(fields.get("cudagraph_capture_sizes"))
    largest = _positive(fields.get("max_cudagraph_capture_size"), "max_cudagraph_capture_size")
    if sizes is not None:
        said.append(f"cudagraph_capture_sizes {list(sizes)}")
    if largest is not None:
        said.append(f"max_cudagraph_capture_size {largest}")
    return GraphConfig(mode=mode, capture_sizes=sizes, max_capture_size=largest, said="; ".join(said))


def graph_mode_not_modelled(flags: Mapping[str, object], version: ResolvedVersion) -> str | None:
    """Why the plan's graph count may not be vLLM's: from v0.30.0 a stated compilation mode other than VLLM_COMPILE
    drops the graphs' piecewise part unless breakable CUDA graphs run (`MODE_FORCES_NONE` None), which kvtop does not
    read; None elsewhere, or where the launch captures no graphs."""
    if MODE_FORCES_NONE.at(version) is not None:
        return None
    compiled = compilation_level(flags, version)
    if compiled is None or compiled == PIECEWISE_LEVEL or graph_config(flags, version).mode == "NONE":
        return None
    return (f"compilation mode {compiled}, not VLLM_COMPILE, at vLLM {version.label}: vLLM drops the CUDA graphs' "
            f"piecewise part unless breakable graphs run (by the model's architecture, not read: "
            f"{MODE_FORCES_NONE.era(version).source}); the plan counts the graphs as the cudagraph mode leaves them")


def long_spelled(flags: Mapping[str, object]) -> Mapping[str, object]:
    """`flags` with `-cc` and `-cc.<field>` as `--compilation-config[.<field>]` (v0.12.0 on; a release before has no
    `-cc`, refused by the release check: flags.RELEASE_SPANS, at the launch check or the plan's resolved release)."""
    short = SHORT_FLAG.lstrip("-")
    if not any(key == short or key.startswith(short + ".") for key in flags):
        return flags
    long = CONFIG_FLAG.lstrip("-")
    return {(long + key[len(short):] if key == short or key.startswith(short + ".") else key): value
            for key, value in flags.items()}  # fmt: skip


def config_fields(flags: Mapping[str, object], version: ResolvedVersion) -> dict[str, object]:
    """The compilation config's fields: the JSON object (or `-O`'s before v0.12.0), or, where the launch spells any
    field dotted, those fields alone (`DOTTED_REPLACES_WHOLE`); `pass_config` one nested object."""
    flags = long_spelled(flags)
    fields: dict[str, object] = {}
    dotted = {key: value for key, value in flags.items() if key.startswith(DOTTED)}
    whole = [flags.get(CONFIG_FLAG.lstrip("-"))]
    if not O_IS_LEVEL.at(version):
        whole.append(flags.get("O"))
    if dotted and DOTTED_REPLACES_WHOLE.at(version):
        whole = []  # argparse keeps the last --compilation-config: the dotted fields' object, appended after
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
    for key, value in dotted.items():
        *parents, field = key.removeprefix(DOTTED).split(".")
        into = fields
        for parent in parents:  # `pass_config.fuse_allreduce_rms`: a nested object, as create_nested_dict builds it
            nested = into.get(parent)
            into[parent] = nested = dict(nested) if isinstance(nested, dict) else {}
            into = nested
        try:
            into[field] = json.loads(value) if isinstance(value, str) else value
        except json.JSONDecodeError:
            into[field] = value  # vLLM keeps a value that is no JSON as the string
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
        raise InputError(f"cudagraph_mode {quoted(value)}: one of {', '.join(MODES)}", field=CONFIG_FLAG)
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


def level(flags: Mapping[str, object], version: ResolvedVersion) -> int | None:
    """The optimization level the launch states (`_optimization_level`), where only its 0 (compile nothing) matters:
    before v0.12.0 a compilation level 0 (`compilation_level`) is NO_COMPILATION (arg_utils.py:934 at v0.11.0), read
    as 0 too; its other levels there (1 and 2 Dynamo only, 3 piecewise) are no optimization level: None. An
    InputError naming the flag for a level vLLM would refuse."""
    if not O_IS_LEVEL.at(version) and compilation_level(flags, version) == 0 and flags.get("optimization-level") is None:
        return 0
    return _optimization_level(flags, version)


def compilation_level(flags: Mapping[str, object], version: ResolvedVersion) -> int | None:
    """The compilation level (CompilationMode from v0.11.1) the launch states: before v0.12.0 `-ON`, `-O N` or
    `--compilation-config N` (CompilationConfig.from_cli: a digit is the level, arg_utils.py:934 at v0.11.0), else
    the config's JSON key (`JSON_LEVEL`: "level", "mode" beside it from v0.11.1, where both are stated the mode);
    None where it states none. An InputError where vLLM refuses it ("level" from v0.18.0, a value no mode)."""
    if not O_IS_LEVEL.at(version):
        named = [int(key[1]) for key in ("O0", "O1", "O2", "O3") if flags.get(key) is True]
        for value in (*named, flags.get("O"), flags.get(CONFIG_FLAG.lstrip("-"))):
            text = str(value).strip() if value is not None else ""
            if text in ("0", "1", "2", "3"):
                return int(text)
    fields, keys = config_fields(flags, version), JSON_LEVEL.era(version)
    if "level" in fields and "level" not in keys.value:
        raise InputError(f"no compilation field 'level' at vLLM {version.label} (use 'mode'): {keys.source}",
                         field=CONFIG_FLAG)  # fmt: skip
    for key in ("mode", "level"):
        if key in keys.value.split(" or ") and fields.get(key) is not None:
            return _mode_number(fields[key], names=key == "mode")
    return None


def _mode_number(value: object, *, names: bool) -> int:
    """A stated level or mode as its number (a mode's name where `names`: CompilationMode's validator)."""
    text = str(value).strip().upper()
    if names and text in MODE_NAMES:
        return MODE_NAMES[text]
    if isinstance(value, bool) or text not in ("0", "1", "2", "3"):
        raise InputError(f"compilation mode {quoted(value)}: 0, 1, 2 or 3" + (f" or {', '.join(MODE_NAMES)}" if names else ""),
                         field=CONFIG_FLAG)  # fmt: skip
    return int(text)


def _optimization_level(flags: Mapping[str, object], version: ResolvedVersion) -> int | None:
    """The optimization level the launch states (`--optimization-level N`, from v0.12.0 `-ON`, `-O N`); None where
    it states none (vLLM's default, O2)."""
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


def stated_pass_config(flags: Mapping[str, object], version: ResolvedVersion) -> Mapping[str, object]:
    """PassConfig's fields the launch states, whichever spelling (`--compilation-config '{"pass_config": {…}}'`, `-cc`,
    `-O '{…}'` before v0.12.0, `--compilation-config.pass_config.<field>`); an InputError where it is no object."""
    value = config_fields(flags, version).get("pass_config")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"pass_config {quoted(value)}: a JSON object of PassConfig's fields", field=CONFIG_FLAG)
    return value


def unread_fields(flags: Mapping[str, object], version: ResolvedVersion) -> tuple[str, ...]:
    """The compilation config's fields the launch states that kvtop does not read (mode, pass_config's other
    fields, …): what a rule whose memory they may move names as not modelled."""
    fields = config_fields(flags, version)
    read = (*GRAPH_FIELDS, "pass_config", "cudagraph_specialize_lora")  # graph_keys.py; mode / level set the graphs
    # (`compilation_level`) but may also drop a compiled pass (fusion_workspace.py): named
    unread = [field for field in fields if field not in read]
    passes = fields.get("pass_config")
    if isinstance(passes, dict):
        unread += [f"pass_config.{field}" for field in passes if field not in READ_PASS_FIELDS]
    return tuple(unread)
