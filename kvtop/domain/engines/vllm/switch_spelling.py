"""How the copied engine-flags line spells vLLM's on/off switches: the form the planned release's parser takes,
whatever form the launch typed (docs/engines/vllm.md §3.12, "Switches written back").

kvtop reads a switch from any of `--x`, `--no-x`, `--x False` / `--x=0` (`launch_tokens.switch_in`), but each release's
argparse takes only some of those forms, so writing back what was typed copies a line the release may refuse. Read in
the v0.5.5, v0.6.0, v0.6.3.post1, v0.6.4, v0.6.4.post1, v0.6.5, v0.6.6, v0.7.0, v0.7.3, v0.8.0-v0.8.5, v0.9.2, v0.10.0,
v0.10.1.1, v0.10.2, v0.11.0 and v0.34.0 wheels (vllm/engine/arg_utils.py, the parser's actions in vllm/utils):
- StoreBoolean (`nargs="?"`, `const="True"`): `--x` or `--x VALUE`, VALUE 'true' or 'false' in any case (else
  ValueError 'Invalid boolean value'); no `--no-x`.
- store_true: `--x` alone; off is the default, so off is written as nothing.
- BooleanOptionalAction: `--x` / `--no-x`, no value (`--x False` leaves 'False' an unrecognized argument,
  `--x=False` is 'ignored explicit argument'). From v0.8.5 every bool field of an engine config is this
  (`get_kwargs`: `contains_type(type_hints, bool)`, arg_utils.py:150-152 at v0.8.5, :203-205 at v0.10.2, :206-208 at
  v0.11.0, :383-385 at v0.34.0, where FlexibleArgumentParser registers EnableDisableAction for it, which keeps `--no-x`
  and adds `--disable-x` for `--enable-x`: utils/argparse_utils.py:120-145, :179).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch_tokens import switch_in


class SwitchForm(Enum):
    """How one release's argparse takes a switch (the module docstring)."""

    OPTIONAL_VALUE = "StoreBoolean"  # `--x`, `--x False`; no `--no-x`
    STORE_TRUE = "store_true"  # `--x`; off is the default
    NEGATABLE = "BooleanOptionalAction"  # `--x` / `--no-x`


_NEGATABLE_FROM_0_8_5 = (
    "a bool field of its config from v0.8.5: BooleanOptionalAction (get_kwargs, engine/arg_utils.py:150-152 at "
    "v0.8.5, :203-205 at v0.10.2, :383-385 at v0.34.0)"
)
# the switches kvtop writes back (flags.SCHEDULER_FLAGS, ALL_REDUCE_FLAGS, …) whose form changed, by release; a switch
# not here has been a BooleanOptionalAction since its first release (`SWITCH_SOURCES`)
SWITCH_FORMS: Mapping[str, Eras[SwitchForm]] = {
    "enable-chunked-prefill": Eras((
        Era("", SwitchForm.OPTIONAL_VALUE, "engine/arg_utils.py:561 at v0.5.5, :710 at v0.6.6, :745 at v0.7.3, :784 at "
            "v0.8.4: action=StoreBoolean, nargs='?', const='True'"),
        Era("0.8.5", SwitchForm.NEGATABLE, f"engine/arg_utils.py:852-853 at v0.8.5, :878-879 at v0.10.2, :905-906 at "
            f"v0.11.0, :1807-1812 at v0.34.0 (SchedulerConfig.enable_chunked_prefill), {_NEGATABLE_FROM_0_8_5}"),
    )),
    "enable-prefix-caching": Eras((
        Era("", SwitchForm.STORE_TRUE, "engine/arg_utils.py:324 at v0.5.5, :369 at v0.6.3.post1, :409 at "
            "v0.6.4.post1: action='store_true' (EngineArgs.enable_prefix_caching = False)"),
        Era("0.6.5", SwitchForm.NEGATABLE, "engine/arg_utils.py:432 at v0.6.5, :478 at v0.8.4: "
            "action=argparse.BooleanOptionalAction; :564 at v0.8.5, :1420-1425 at v0.34.0 (CacheConfig's field)"),
    )),
    "disable-custom-all-reduce": Eras((
        Era("", SwitchForm.STORE_TRUE, "engine/arg_utils.py:439 at v0.5.5, :569 at v0.6.6, :463 at v0.8.4: "
            "action='store_true' (default False)"),
        Era("0.8.5", SwitchForm.NEGATABLE, f"engine/arg_utils.py:547 at v0.8.5, :746 at v0.11.0, :1382 at v0.34.0 "
            f"(ParallelConfig's field), {_NEGATABLE_FROM_0_8_5}"),
    )),
    # session 71 (R2 D3): the LoRA switches were copied as typed ('--enable-lora False', which no release's parser
    # takes: a value after it is an unrecognized argument)
    "enable-lora": Eras((
        Era("", SwitchForm.STORE_TRUE, "engine/arg_utils.py:478-479 at v0.5.5, :579-580 at v0.6.4, :694-695 at "
            "v0.8.4: action='store_true'"),
        Era("0.8.5", SwitchForm.NEGATABLE, "engine/arg_utils.py:696-698 at v0.8.5, :830-832 at v0.11.0, :1628-1632 "
            "at v0.34.0: action=argparse.BooleanOptionalAction"),
    )),
    "fully-sharded-loras": Eras((
        Era("", SwitchForm.STORE_TRUE, "engine/arg_utils.py:522-523 at v0.5.5, :626-627 at v0.6.4, :740-741 at "
            "v0.8.4: action='store_true'"),
        Era("0.8.5", SwitchForm.NEGATABLE, f"engine/arg_utils.py:715-716 at v0.8.5, :847-848 at v0.11.0, "
            f":1644-1645 at v0.34.0 (LoRAConfig's field), {_NEGATABLE_FROM_0_8_5}"),
    )),
}  # fmt: skip
# the written-back switches that are BooleanOptionalAction wherever they exist (an older release is refused:
# flags.ASYNC_SPAN, …)
SWITCH_SOURCES: Mapping[str, str] = {
    "async-scheduling": "SchedulerConfig's field: engine/arg_utils.py:821 at v0.10.0 (its first), :1842 at v0.34.0",
    "enable-eplb": "ParallelConfig's field: engine/arg_utils.py:687-688 at v0.9.2, :708-709 at v0.11.0, :1367 at "
                   "v0.34.0 (none at v0.8.5)",
    "disable-nccl-for-dp-synchronization": "ParallelConfig's field: dp_flags.py (:283 at v0.11.1), :1364 at v0.34.0",
    "enable-extensible-kv-cache": "CacheConfig's field: extensible_kv.py (:1412-1415 at v0.34.0)",
    "language-model-only": "MultiModalConfig's field: text_only.py (v0.17.0), :1516 at v0.34.0",
    "skip-mm-profiling": "MultiModalConfig's field: skip_mm_profiling.py (:195-197 at v0.10.1), :790 at v0.10.2",
}
SWITCHES = frozenset({*SWITCH_FORMS, *SWITCH_SOURCES})


def switch_form(name: str, version: ResolvedVersion) -> SwitchForm:
    """The form release `version` takes switch `name` in (without dashes; a release not stated: the latest's)."""
    eras = SWITCH_FORMS.get(name)
    return eras.at(version) if eras is not None else SwitchForm.NEGATABLE


def switch_tokens(name: str, on: bool, version: ResolvedVersion) -> tuple[str, ...]:
    """The switch `name` on or off as release `version` parses it: `--x` on in every form; off `--no-x`
    (BooleanOptionalAction), `--x False` (StoreBoolean) or nothing (store_true, whose default is off)."""
    if on:
        return (f"--{name}",)
    form = switch_form(name, version)
    if form is SwitchForm.NEGATABLE:
        return (f"--no-{name}",)
    return (f"--{name}", "False") if form is SwitchForm.OPTIONAL_VALUE else ()


def written_switch(flags: Mapping[str, object], name: str, version: ResolvedVersion) -> tuple[str, ...]:
    """The switch as the launch's flags give it (`switch_in`: `--no-x`, `--x`, `--x False`, `--x=0`), in the form
    release `version` parses (`switch_tokens`); () where the launch gives neither spelling."""
    given = switch_in(flags, name)
    return () if given is None else switch_tokens(name, given[0], version)
