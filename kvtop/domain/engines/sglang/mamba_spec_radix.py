"""SGLang v0.5.10 … v0.5.13 refuse a linear-attention hybrid under speculative decoding with the radix cache on
(docs/engines/sglang.md §4.2.1): `_handle_mamba_radix_cache` raises ValueError ("Speculative decoding for <arch> is
not compatible with radix cache when using --mamba-scheduler-strategy no_buffer.") on CUDA, and `auto` is
`no_buffer` there (0.5.10 server_args.py:964-967, 0.5.13 :1225-1228; an `extra_buffer` typed is refused by kvtop
as unmodelled). Only the architectures whose branch calls it with the Mamba radix cache supported
(`support_mamba_cache`, default True); Kimi-Linear (and Bailing-V2.5 at 0.5.10 … 0.5.12) turn the radix cache off
instead (`UNSUPPORTED_ERAS`: Kimi-Linear from its first release through 0.5.13, Bailing-V2.5 0.5.9 … 0.5.12, with
or without speculation). v0.5.9 turned the radix cache off itself for the same classes (0.5.9 server_args.py:1760-1764), v0.5.8 for
Nemotron-H alone (:1438-1442): `radix_forced_off`, so the slots are 1 a request and --max-running-requests' (48
where not typed); v0.5.14 chose `extra_buffer` or validated `no_buffer` without the raise (0.5.14 server_args.py:4380-4399).
"""

from __future__ import annotations

from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.sglang.deployment import setup as deployment_setup
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.errors import InputError

_QWEN = ("Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration")
_MAMBA = ("FalconH1ForCausalLM", "JetNemotronForCausalLM", "JetVLMForConditionalGeneration",
          "GraniteMoeHybridForCausalLM", "Lfm2ForCausalLM", "NemotronHForCausalLM")  # fmt: skip
# the architectures that raise, by release (empty: none raises)
REFUSED_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "≤ 0.5.9: the radix cache turned off instead (0.5.9 server_args.py:1760-1764)"),
    Era("0.5.10", frozenset((*_QWEN, *_MAMBA)), "0.5.10 server_args.py:2204-2209 (calls :1942 NemotronH, :2000 Qwen3-Next/"
        "3.5, :2032 Falcon-H1/Jet, :2046 Granite hybrid, :2053 LFM2)"),
    Era("0.5.12", frozenset((*_QWEN, *_MAMBA, "InternS2PreviewForConditionalGeneration",
                             "MiniCPMV4_6ForConditionalGeneration")),
        "0.5.12 server_args.py:2566-2571 (calls :2340, :2350, :2386, :2400, :2407; arg_groups/nemotron_h_hook.py:42)"),
    Era("0.5.13", frozenset((*_QWEN, *_MAMBA, "InternS2PreviewForConditionalGeneration",
                             "MiniCPMV4_6ForConditionalGeneration", "BailingMoeV2_5ForCausalLM",
                             "NemotronHPuzzleForCausalLM")),
        "0.5.13 server_args.py:2752-2757 (calls :2465, :2530, :2540, :2576, :2588, :2594; nemotron_h_hook.py:58)"),
    Era("0.5.14", frozenset(), "0.5.14 server_args.py:4380-4399: extra_buffer or no_buffer validated, no raise"),
))  # fmt: skip


# the architectures whose radix cache the release turns off under speculative decoding (before 0.5.8: none read)
FORCED_OFF_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "0.5.7 server_args.py: no speculative rule for hybrids"),
    Era("0.5.8", frozenset({"NemotronHForCausalLM"}), "0.5.8 server_args.py:1438-1442"),
    Era("0.5.9", frozenset((*_QWEN, *_MAMBA)), "0.5.9 server_args.py:1760-1764 (calls :1548, :1600, :1634, :1648, :1655)"),
    Era("0.5.10", frozenset(), "0.5.10 server_args.py:2204-2209: refused instead (REFUSED_ERAS)"),
))  # fmt: skip


# the architectures whose radix cache the release turns off whatever the launch ('Disabling Radix Cache for … as it is
# not yet supported.'; from 0.5.9 `_handle_mamba_radix_cache(support_mamba_cache=False)`); KimiLinear's first release
# is 0.5.4.post2
UNSUPPORTED_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset({"KimiLinearForCausalLM"}), "0.5.5 server_args.py:1055-1059, 0.5.7 :1304-1308, 0.5.8 :1411-1415"),
    Era("0.5.9", frozenset({"KimiLinearForCausalLM", "BailingMoeV2_5ForCausalLM"}),
        "0.5.9 server_args.py:1524-1528, 0.5.10 :1914-1918, 0.5.12 :2275-2279"),
    Era("0.5.13", frozenset({"KimiLinearForCausalLM"}), "0.5.13 server_args.py:2459-2463"),
    Era("0.5.14", frozenset(), "0.5.14 server_args.py:4142-4145: the Mamba radix cache supported"),
))  # fmt: skip


def radix_forced_off(inputs: EngineInputs) -> str | None:
    """The note where the release turns a hybrid's radix cache off, for its class (`UNSUPPORTED_ERAS`) or under
    speculative decoding (`FORCED_OFF_ERAS`); None where it does not."""
    settings, model = inputs.settings, inputs.model
    if settings.disable_radix_cache or not inputs.kv.state_bytes_per_request:
        return None
    unsupported = UNSUPPORTED_ERAS.era(inputs.version)
    if model.architecture in unsupported.value:
        return (f"radix cache off: SGLang {inputs.version.label} turns it off for {model.architecture}, 'not yet "
                f"supported' ({unsupported.source}): 1 Mamba slot a request")  # fmt: skip
    era = FORCED_OFF_ERAS.era(inputs.version)
    if model.architecture not in era.value or deployment_setup(settings).spec_method is None:
        return None
    return (f"radix cache off: SGLang {inputs.version.label} turns it off for {model.architecture} under speculative "
            f"decoding ({era.source})")  # fmt: skip


def check_spec_radix(inputs: EngineInputs) -> None:
    """Refuse, as the release does, a hybrid's speculative launch with the radix cache on."""
    settings, model = inputs.settings, inputs.model
    if settings.disable_radix_cache or not inputs.kv.state_bytes_per_request:
        return
    era = REFUSED_ERAS.era(inputs.version)
    if model.architecture not in era.value or deployment_setup(settings).spec_method is None:
        return
    raise InputError(f"SGLang {inputs.version.label} refuses speculative decoding for {model.architecture} with the "
                     "radix cache on ('not compatible with radix cache when using --mamba-scheduler-strategy "
                     f"no_buffer', {era.source}): add --disable-radix-cache", field="--speculative-algorithm")  # fmt: skip
