"""`--cuda-graph-bs` (the decode batch sizes to capture): where its largest size is the reserve's decode-graph size.

v0.5.10 … v0.5.13 (read in the wheels): `_handle_gpu_memory_settings` sets `cuda_graph_max_bs = max(cuda_graph_bs)` on
a CUDA device, over a typed `--cuda-graph-max-bs` (0.5.10 server_args.py:1235, 0.5.11 :1388, 0.5.12 :1495, 0.5.13
:1538), before the automatic reserve adds `cuda_graph_max_bs * 2` MiB (0.5.10 :1290, 0.5.11 :1443, 0.5.12 :1550, 0.5.13
:1601); argparse takes it `type=int, nargs="+"` (0.5.12 :6435). The graphs themselves are captured after the pool.
v0.5.14 … v0.5.19 (cuda_graph_config era): a deprecated alias of `--cuda-graph-bs-decode` (`type=int, nargs="+"`,
dest `cuda_graph_bs_decode`: 0.5.14 server_args.py:6367, 0.5.15.post1 :6252, 0.5.16 :7209, 0.5.17 :8324, 0.5.18 :8782,
0.5.19 :3937) that `_handle_cuda_graph_config` puts in the decode phase's `bs` (0.5.14 :2963-2964), whose max
`_handle_gpu_memory_settings` makes the decode `max_bs` off the CPU, over a typed max (0.5.14 :3212/:3220, 0.5.15.post1
:3567, 0.5.16 :3998, 0.5.17 :4705, 0.5.18 :4900, 0.5.19 arg_groups/memory_hook.py:159) before the reserve adds
`max_bs * 2` MiB (0.5.14 :3285, 0.5.15.post1 :3643, 0.5.16 :4173, 0.5.17 :4891, 0.5.18 :5087, 0.5.19 :303): the same
rule. From v0.5.20 the alias is gone (server_args.py has no DeprecatedAliasStoreAction; only `--cuda-graph-bs-decode`
/ `-prefill`, 0.5.23 arg_groups/fields/exec_.py:640): SGLang's argparse refuses the flag, so kvtop does.
`--cuda-graph-bs-decode` (the field itself, `cuda_graph_bs_decode`: 0.5.14 server_args.py:1947, 0.5.23
arg_groups/fields/exec_.py:640) is read the same way from v0.5.14 (its row in flag_releases.READ); typed with the alias, argparse
keeps whichever comes last, an order kvtop does not keep: refused.
Refused before v0.5.10: the order was not read here.
`--cuda-graph-max-bs` (session 60): the decode graphs' largest size, typed, every release to v0.5.13 (0.4.0
server_args.py:691 … 0.5.13 :6507), a deprecated alias of `--cuda-graph-max-bs-decode` v0.5.14 … v0.5.19 (`type=int`,
dest `cuda_graph_max_bs_decode`: 0.5.14 server_args.py:6358-6364, 0.5.19 :3928-3934) that `_handle_cuda_graph_config`
puts in the decode phase's `max_bs` (0.5.14 :2959-2960, 0.5.19 arg_groups/cuda_graph_hook.py:77-78), kept by the reserve
when set. From v0.5.20 no such flag: server_args.py declares neither it nor the alias, and `prepare_server_args`' parser
(0.5.20 server_args.py:701, argparse's default `allow_abbrev`) takes it as a prefix of both `--cuda-graph-max-bs-decode`
and `--cuda-graph-max-bs-prefill` ("ambiguous option"): refused there, naming the flag to type instead.
`--cuda-graph-max-bs-decode` (0.5.14 server_args.py:1939, 0.5.23 arg_groups/fields/exec_.py:629) is read the same way
from v0.5.14 and refused before; typed with the alias, refused (argparse keeps the last).
"""

from __future__ import annotations

from kvtop.domain.deployment_flags import flag_int, flag_words
from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.sglang.flag_releases import check_flag_release
from kvtop.domain.engines.versions import Era, Eras, era_for
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.redact import quoted

# the releases that have each flag: its row in flag_releases.READ (--cuda-graph-bs v0.4.3 … v0.5.19, --cuda-graph-max-bs
# … v0.5.19, their -decode fields from v0.5.14); what kvtop models of the sizes by release is ACCEPTED_ERAS
FLAG = "--cuda-graph-bs"
ACCEPTED_ERAS: Eras[bool] = Eras((
    Era("", False, "before 0.5.10 where the sizes meet the reserve was not read"),
    Era("0.5.10", True, "0.5.10 … 0.5.13 server_args.py: cuda_graph_max_bs = max(cuda_graph_bs) before the reserve"),
    Era("0.5.14", True, "0.5.14 … 0.5.19 alias of --cuda-graph-bs-decode: decode max_bs = max(bs) before the reserve "
                        "(0.5.14 server_args.py:3220)"),
))  # fmt: skip
DECODE_FLAG = "--cuda-graph-bs-decode"
MAX_FLAG = "--cuda-graph-max-bs"
MAX_DECODE_FLAG = "--cuda-graph-max-bs-decode"


def _typed_sizes(inputs: EngineInputs) -> tuple[str, tuple[str, ...]] | None:
    """The flag the launch typed the decode sizes with and its words (None: neither); both typed: refused."""
    alias, field = flag_words(inputs.settings, FLAG[2:]), flag_words(inputs.settings, DECODE_FLAG[2:])
    if alias is not None and field is not None:
        raise InputError(f"{FLAG} is an alias of {DECODE_FLAG}: type one", field=DECODE_FLAG)
    if field is not None:
        check_flag_release(DECODE_FLAG, inputs.version)
        return DECODE_FLAG, field
    if alias is None:
        return None
    check_flag_release(FLAG, inputs.version)
    era = era_for(ACCEPTED_ERAS, inputs.version)
    if not era.value:
        raise InputError(f"a flag whose effect on memory kvtop models only for SGLang 0.5.10 … 0.5.19, not "
                         f"{inputs.version.label} ({era.source}); plan without it", field=FLAG)  # fmt: skip
    return FLAG, alias


def typed_max_bs(inputs: EngineInputs) -> int | None:
    """The largest decode batch size `--cuda-graph-bs` (or `--cuda-graph-bs-decode`) lists (None: not typed); refused at a release not read and for
    anything but positive whole numbers (SGLang's argparse: `type=int`)."""
    typed = _typed_sizes(inputs)
    if typed is None:
        return None
    flag, words = typed
    if not words or not all(w.isdigit() and 0 < len(w) <= 6 and int(w) > 0 for w in words):
        raise InputError(f"expected positive whole numbers, got {quoted(' '.join(words))}", field=flag)
    return max(int(w) for w in words)


def typed_max(inputs: EngineInputs) -> int | None:
    """The decode graphs' largest size `--cuda-graph-max-bs` (or `--cuda-graph-max-bs-decode`) gives (None: neither);
    refused at a release without the flag typed, and both typed."""
    alias, field = inputs.settings.cuda_graph_max_bs, flag_int(inputs.settings, MAX_DECODE_FLAG[2:], least=1)
    if alias is not None:
        check_flag_release(MAX_FLAG, inputs.version, instead=f"; type {MAX_DECODE_FLAG}")
    if field is not None:
        check_flag_release(MAX_DECODE_FLAG, inputs.version)
    if alias is not None and field is not None:
        raise InputError(f"{MAX_FLAG} is an alias of {MAX_DECODE_FLAG}: type one", field=MAX_DECODE_FLAG)
    return field if field is not None else alias


def decode_graph_max_bs(inputs: EngineInputs) -> int | None:
    """The decode CUDA graphs' largest batch size as the launch types it (None: SGLang's default by GPU class): the
    largest `--cuda-graph-bs` size over `--cuda-graph-max-bs` (0.5.14 server_args.py:3220 `max_bs = max(bs)`). Read
    once per plan (budget.py), every flag checked whichever decides."""
    sizes, most = typed_max_bs(inputs), typed_max(inputs)
    return sizes or most


# From v0.5.22 the GPU class's decode max_bs (not one the launch typed: `decode_max_bs_is_default`) is cut to a typed
# --max-running-requests (0.5.22 arg_groups/memory_hook.py:83, :182-188; 0.5.23 the same lines); then Qwen3-VL on a
# Hopper GPU of 60 GiB or more raises an untyped max_bs below --max-running-requests ≤ 512 to it
# (model_overrides/qwen3_vl.py:20-31, :34-62, called at memory_hook.py:190-196). 0.5.21 memory_hook.py has neither.
RUNNING_CAP_ERAS: Eras[bool] = Eras((
    Era("", False, "0.5.21 arg_groups/memory_hook.py: the class's decode max_bs as it is"),
    Era("0.5.22", True, "0.5.22 arg_groups/memory_hook.py:182-188, model_overrides/qwen3_vl.py:34-62"),
))  # fmt: skip
# qwen3_vl.py:17 _HOPPER_QWEN3_VL_TYPES {"qwen3_vl", "qwen3_vl_moe"}: the HF model_type of these classes (kvtop's
# ModelSpec keeps the text config's, `qwen3_vl_text`)
QWEN3_VL_CLASSES = frozenset({"Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration"})


def class_decode_max_bs(inputs: EngineInputs, class_bs: int, gpu_mib: int, multimodal: bool) -> tuple[int, str]:
    """(decode max_bs, '' or why it is not the GPU class's) where the launch typed no decode size."""
    running = inputs.settings.max_running_requests
    if running is None or not era_for(RUNNING_CAP_ERAS, inputs.version).value:
        return class_bs, ""
    if class_bs > running:
        return running, f"decode graphs to --max-running-requests {running} (the class's {class_bs})"
    hopper = (compute_capability(inputs.gpu_name) or (0, 0))[0] == 9
    qwen3_vl = multimodal and inputs.model.architecture in QWEN3_VL_CLASSES
    if qwen3_vl and hopper and gpu_mib >= 60 * 1024 and class_bs < running <= 512:
        return running, f"Qwen3-VL's decode graphs up to --max-running-requests {running} (the class's {class_bs})"
    return class_bs, ""
