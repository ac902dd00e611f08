"""vLLM's `--limit-mm-per-prompt`: how many items of each modality a prompt may hold, which the encoder profile reads
(encoder_profile.py; docs/engines/vllm.md §10).

Read in the v0.11.0, v0.11.2, v0.12.0 and v0.13.0 wheels (PyPI); the same code checked function by function in the
v0.10.2, v0.11.1 and v0.14.0 wheels (`LIMIT_ERAS`):

- The value is a JSON object, modality → count (v0.11.0 engine/arg_utils.py:379 `dict[str, int]`); from v0.11.1
  (arg_utils.py:453) a modality may take `{"count": N, "width": …, "height": …, "num_frames": …, "length": …}`
  (config/multimodal.py:14-60 `BaseDummyOptions` and its image / video / audio kinds, v0.12.0; the same at v0.11.2 and
  v0.13.0). A modality left out counts 999 (`get_limit_per_prompt`, v0.11.0 config/multimodal.py:106-113 under V1).
- A modality at 0 is off: the profiler asks one item of each modality whose limit is above 0
  (`get_max_tokens_per_item_by_modality`, v0.11.0 multimodal/registry.py:124-149), and the budget keeps only those
  (`get_max_tokens_per_item_by_nonzero_modality`, :151-176), so the encoder profile takes the largest of the others
  (`MultiModalBudget.get_modality_with_max_tokens`, v1/worker/utils.py:75-79). Every supported modality at 0 runs the
  model text-only (`supports_multimodal_inputs`, registry.py:98-122), no encoder profiled; the classes kvtop read
  then build no tower (tower_limits.py: served text-only, as under `--language-model-only`); a class whose tower is
  still built (Gemma-3 before v0.15.0) or not read is refused where its modalities are known (`refuse_text_only`).
- The count caps the items a prompt holds: max(1, min(count, max_model_len ÷ the item's tokens))
  (`MultiModalBudget.get_max_items`, v0.11.0 v1/worker/utils.py:104-109; v0.12.0 :101-106; v0.13.0 :105-110); the
  items profiled are the fewer of that × max_num_seqs and the encoder budget ÷ the item's tokens. Without chunked
  prefill max_num_seqs is first capped at max_num_batched_tokens ÷ the item's tokens (:114-118), which never binds
  below the budget's own count (the budget is max(max_num_batched_tokens, the item's tokens)).
- Sizes (width, height, num_frames, length) shrink the dummy item (v0.12.0 multimodal/profiling.py:154-184) but not
  the tokens the budget counts for it (the processor's largest): kvtop does not count that dummy (the text model's
  fit, assumed, as for `--mm-processor-kwargs`).

Other releases are not read (`LIMIT_ERAS`): there the encoder profile is not counted (the text model's fit, assumed)
and the encoder term names the flag as not modelled (`LimitsReading.unread`); a log that prints the flag still gets its
verdict.

The dotted form (`--limit-mm-per-prompt.image 0`) is read as the JSON object vLLM's parser builds of it (`_dotted`),
which replaces a whole JSON typed beside it (the FLAGS comment: v0.10.2 – v0.34.0 read).

The value is parsed once per launch and release (`read_limits`, a typed `LimitsReading`) and every reader (the flags'
check, the encoder profile, the deployment's encoder term) reads that value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Literal

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.flags_table import FlagSpan
from kvtop.domain.engines.vllm.rope_override import json_object
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.redact import quoted

FLAG = "--limit-mm-per-prompt"
SPAN = FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:1499 (v0.33.0)")
# `--limit-mm-per-prompt.image 0` (FlexibleArgumentParser: the name before the first "." is the flag, the rest a
# nested key, the value json.loads'd or kept a string; the dotted keys gathered into one object and appended as a
# further `--limit-mm-per-prompt JSON`, so argparse keeps it and drops a whole JSON typed beside: v0.10.2
# utils/__init__.py:1889-1925, v0.11.0 :1943-1979, v0.13.0 utils/argparse_utils.py:314-347, v0.20.0 :389-427,
# v0.34.0 :462-500; releases before v0.10.2 not read, where kvtop reads no form of the flag: FORM_ERAS);
# the modalities kvtop's towers name, and their count (a size dotted stays unknown: noted, not read)
MODALITIES = ("image", "video", "audio")
DOTTED = FLAG.lstrip("-") + "."  # a dotted key as the launch's flags keep it
FLAGS = frozenset({FLAG, *(f"{FLAG}.{modality}{count}" for modality in MODALITIES for count in ("", ".count"))})
DEFAULT_LIMIT = 999  # a modality left out (config/multimodal.py:106-113 at v0.11.0, :215-225 at v0.12.0)
SIZE_KEYS = frozenset({"width", "height", "num_frames", "length"})  # BaseDummyOptions' kinds (v0.12.0 :16-44)
# whether kvtop read the encoder budget's reading of the flag by release (its form, counts or options: `FORM_ERAS`)
# v0.10.2 has v0.11.0's code: engine/arg_utils.py:366 dict[str, int]; config/__init__.py:2496-2504
# get_limit_per_prompt (999 under V1); multimodal/registry.py:99-177 and v1/worker/utils.py:24-127 (MultiModalBudget)
# the same functions as v0.11.0's. v0.11.1 has v0.11.2's: arg_utils.py:453, config/multimodal.py:20-248
# (MultiModalConfig whole, the dummy options), registry.py:122-175, utils.py:24-131 alike. v0.14.0 has v0.13.0's:
# arg_utils.py:458, config/multimodal.py:16-47, 146-162, 215-233 (get_limit_per_prompt, the dummy options, their
# validation), utils.py:27-134 alike, registry.py:146-174 only passing the observability config to the processor.
# Releases not checked: before v0.10.2, from v0.14.1.
LIMIT_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.10.2"),
    Era("0.10.2", True, "v0.11.0 engine/arg_utils.py:379 (dict[str, int]), v1/worker/utils.py:84-127; v0.10.2 "
                        "arg_utils.py:366, config/__init__.py:2496-2504, utils.py:84-127 alike"),
    Era("0.11.1", True, "v0.11.2 engine/arg_utils.py:453 (int or dict), config/multimodal.py; v0.12.0 "
                        "config/multimodal.py:14-60, 144-233, v1/worker/utils.py:98-125; v0.11.1, v0.13.0 and "
                        "v0.14.0 alike"),
    Era("0.14.1", False, "not read from v0.14.1"),
))  # fmt: skip
# the value's form alone (its counts, which decide whether the tower is built: tower_limits.py), read further than the
# budget: v0.14.1, v0.15.0, v0.16.0, v0.19.0, v0.33.0 and v0.34.0 take v0.12.0's (int or {"count", sizes}, count ≥ 0,
# a modality left out 999): config/multimodal.py:156-180 `_validate_limit_per_prompt`, :226-239 `get_limit_per_prompt`
# at v0.16.0; :182-205, :259-273 at v0.19.0; :471-497, :696-710 at v0.33.0
LimitForm = Literal["counts", "options"]  # modality → int; from v0.11.1 an int or {"count", sizes}
FORM_ERAS: Eras[LimitForm | None] = Eras((
    Era("", None, "not read before v0.10.2"),
    Era("0.10.2", "counts", "v0.11.0 engine/arg_utils.py:379 (dict[str, int]); v0.10.2 :366 alike"),
    Era("0.11.1", "options", "v0.12.0 config/multimodal.py:14-60, 144-233; v0.16.0 :156-180, v0.19.0 :182-205, "
                             "v0.33.0 :471-497 alike"),
))  # fmt: skip


@dataclass(frozen=True)
class MMLimits:
    """The launch's limits: a count per modality named, and whether any names a dummy size."""

    counts: Mapping[str, int]
    sized: bool

    def count(self, modality: str) -> int:
        """The items a prompt may hold of `modality` (999 where the flag leaves it out)."""
        return self.counts.get(modality, DEFAULT_LIMIT)

    def on(self, modalities: tuple[str, ...]) -> tuple[str, ...]:
        """Those of `modalities` the launch leaves on (a count above 0), in order."""
        return tuple(modality for modality in modalities if self.count(modality) > 0)


def _count(modality: str, value: object, options: bool) -> tuple[int, bool]:
    """One modality's count and whether it names a size; InputError where vLLM would not take it."""
    sized = False
    if isinstance(value, dict) and options:
        unknown = set(value) - SIZE_KEYS - {"count"}
        if unknown:
            raise InputError(f"{modality}: unknown option {sorted(unknown)[0]!r} (count, width, height, "
                             "num_frames, length)", field=FLAG)  # fmt: skip
        sized = any(value.get(key) is not None for key in SIZE_KEYS)
        value = value.get("count", DEFAULT_LIMIT)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        kind = "a whole number ≥ 0 or {\"count\": N, …}" if options else "a whole number ≥ 0 (a dict from v0.11.1)"
        raise InputError(f"{modality}: {kind} (got {quoted(value)})", field=FLAG)
    return value, sized


@dataclass(frozen=True)
class LimitsReading:
    """The launch's `--limit-mm-per-prompt` as the release reads it: `limits` where given at a release whose form was
    read (`FORM_ERAS`: the counts, which decide the tower, tower_limits.py), `unread` (why, in words) where given at a
    release whose encoder budget was not read (`LIMIT_ERAS`; never an error: a log that prints it still gets its
    verdict); both None where not given."""

    limits: MMLimits | None
    unread: str | None


NOT_GIVEN = LimitsReading(None, None)


def read_limits(flags: Mapping[str, object], version: ResolvedVersion) -> LimitsReading:
    """The launch's `--limit-mm-per-prompt` at this release, parsed once (the module docstring). InputError where, at
    a release read, vLLM would not take the value (a release without the flag is refused by flags.RELEASE_SPANS, at
    the launch check or the plan's resolved release: budget.py)."""
    raw = _dotted(flags) or flags.get(FLAG.lstrip("-"))
    if raw is None:
        return NOT_GIVEN
    unread = None
    if not LIMIT_ERAS.at(version):
        unread = (f"vLLM {version.label}'s {FLAG} is not modelled in the encoder profile "
                  f"({LIMIT_ERAS.era(version).source}: its budget read at v0.11.0 – v0.13.0, checked at v0.10.2 and "
                  "v0.14.0)")  # fmt: skip
    form = FORM_ERAS.at(version)
    if form is None:
        return LimitsReading(None, unread)
    if not isinstance(raw, str):
        raise InputError("needs a JSON object", field=FLAG)
    return LimitsReading(_parsed(raw, form == "options"), unread)


def _dotted(flags: Mapping[str, object]) -> str | None:
    """The dotted keys' object as vLLM's parser builds it ({"image": 0} of `--limit-mm-per-prompt.image 0`), which
    replaces a whole JSON typed beside it (the FLAGS comment); None where none is dotted."""
    dotted: dict[str, object] = {}
    for key, value in flags.items():
        if not key.startswith(DOTTED):
            continue
        *parents, last = key.removeprefix(DOTTED).split(".")
        into = dotted
        for parent in parents:  # `image.count`: a nested object, as create_nested_dict builds it
            nested = into.get(parent)
            into[parent] = nested = nested if isinstance(nested, dict) else {}
            into = nested
        try:
            into[last] = json.loads(value) if isinstance(value, str) else value
        except json.JSONDecodeError:
            into[last] = value  # vLLM keeps a value that is no JSON as the string
    return json.dumps(dotted) if dotted else None


@lru_cache(maxsize=256)
def _parsed(raw: str, options: bool) -> MMLimits:
    """The value's counts, parsed once per value and form (a dict per modality from v0.11.1: `options`)."""
    counts: dict[str, int] = {}
    sized = False
    for modality, value in json_object(raw, FLAG).items():
        counts[str(modality)], named_size = _count(str(modality), value, options)
        sized = sized or named_size
    return MMLimits(MappingProxyType(counts), sized)


def refuse_text_only(limits: MMLimits | None, modalities: tuple[str, ...] | None) -> None:
    """Every modality off runs the model text-only, no encoder profiled (module docstring); called where the tower
    is still built (`served_model.tower_unbuilt` False: Gemma-3 before v0.15.0, a class tower_limits.py did not
    read), a text run beside a built tower kvtop does not model. Decided only where `modalities` (every one the model
    supports) is known: vLLM's `supports_multimodal_inputs` (multimodal/registry.py:98-122 at v0.11.0) asks each
    supported modality, so zeros on the modalities a flag names say nothing of one it leaves out (999); None (a
    family kvtop does not count, whose modalities it does not know) is not decided here."""
    if limits is None or modalities is None:
        return
    if not limits.on(modalities):
        raise UnsupportedModelError("every modality at 0 runs vLLM text-only, no encoder profiled "
                                    "(multimodal/registry.py:98-122 at v0.11.0), while this class's tower is still "
                                    "built at this release (tower_limits.py): not modelled", field=FLAG)  # fmt: skip
