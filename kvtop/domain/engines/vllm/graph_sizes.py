"""`--cuda-graph-sizes` (v0.9.0 to v0.12.0): the CUDA-graph capture sizes it sets, by release (docs/engines/vllm.md §2).

argparse takes one or more ints (`nargs="+"`, SchedulerConfig / EngineArgs.cuda_graph_sizes). What they mean changed:
- v0.9.0 to v0.11.0 (SchedulerConfig.cuda_graph_sizes): one value N is the pattern [1, 2, 4] + range(8, N + 1, 8),
  several are the sizes themselves, sorted; either only where the compilation config sets no
  `cudagraph_capture_sizes` (which wins), those above max_num_batched_tokens dropped (VllmConfig._set_cudagraph_sizes:
  v0.9.0 config.py:4452-4460, v0.10.1.1 config/__init__.py:3768-3781, v0.11.0 config/__init__.py:593-601).
- v0.11.1 to v0.12.0: a deprecated alias copied as given into compilation_config.cudagraph_capture_sizes (one value
  N is the one size N), refused beside the config's field ("cuda_graph_sizes and compilation_config.
  cudagraph_capture_sizes are mutually exclusive": v0.11.1 engine/arg_utils.py:1743-1754, v0.12.0 :1704-1715).
- v0.13.0: gone (engine/arg_utils.py has no cuda_graph_sizes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted

SIZES_FLAG = "--cuda-graph-sizes"
SizesMeaning = Literal["absent", "pattern", "alias"]
SIZES_ERAS: Eras[SizesMeaning] = Eras((
    Era("", "absent", "v0.8.5 engine/arg_utils.py has no --cuda-graph-sizes"),
    Era("0.9.0", "pattern", "v0.9.0 config.py:1972, :4452-4460 (v0.10.1.1 config/scheduler.py:77, "
                            "config/__init__.py:3768-3781; v0.11.0 config/__init__.py:593-601)"),
    Era("0.11.1", "alias", "v0.11.1 engine/arg_utils.py:372, :1743-1754 (v0.12.0 :375, :1704-1715)"),
    Era("0.13.0", "absent", "v0.13.0 engine/arg_utils.py has no cuda_graph_sizes"),
))  # fmt: skip


def stated_sizes(
    flags: Mapping[str, object], fields: Mapping[str, object], version: ResolvedVersion
) -> list[int] | None:
    """The capture sizes `--cuda-graph-sizes` gives (a list of ints), or None where the launch does not pass it or
    the compilation config's own `cudagraph_capture_sizes` wins; an InputError naming the flag where the release
    lacks it, a value is no positive int, or (v0.11.1 on) the config sets the field too."""
    value = flags.get(SIZES_FLAG.lstrip("-"))
    if value is None:
        return None
    meaning = SIZES_ERAS.at(version)
    if meaning == "absent":
        raise InputError(f"not a flag of vLLM {version.label} (v0.9.0 to v0.12.0: engine/arg_utils.py)",
                         field=SIZES_FLAG)  # fmt: skip
    words = str(value).replace(",", " ").split() if value is not True else []
    if not words or not all(word.isdigit() and int(word) > 0 for word in words):
        raise InputError(f"{quoted(value)}: one or more positive token counts (argparse nargs='+', int)",
                         field=SIZES_FLAG)  # fmt: skip
    sizes = [int(word) for word in words]
    if fields.get("cudagraph_capture_sizes") is not None:
        if meaning == "alias":
            raise InputError("cuda_graph_sizes and compilation_config.cudagraph_capture_sizes are mutually exclusive "
                             "(vLLM's own error, engine/arg_utils.py)", field=SIZES_FLAG)  # fmt: skip
        return None  # the config's sizes win (VllmConfig._set_cudagraph_sizes reads this flag only without them)
    if meaning == "pattern" and len(sizes) == 1:
        return [1, 2, 4, *range(8, sizes[0] + 1, 8)]
    return sorted(sizes)
