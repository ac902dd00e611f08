"""vLLM's `--language-model-only`: a multimodal model served text-only, its tower never built (docs/engines/vllm.md §10).

The flag (first in v0.17.0: engine/arg_utils.py:1029 at v0.17.0 and v0.17.1, :1045 at v0.18.0, :1072 at v0.19.0,
:1497 at v0.33.0; none at v0.16.0) sets `MultiModalConfig.language_model_only`, whose `get_limit_per_prompt` then
answers 0 for every modality (config/multimodal.py:258-259 at v0.17.0, v0.17.1 and v0.18.0; :264-265 at v0.19.0;
:700-701 at v0.33.0). A class that builds its tower inside `_mark_tower_model(vllm_config, modalities)` builds it as
`StageMissingLayer` (`no_init_weights`) where every one of those modalities is at 0 (model_executor/models/
interfaces.py:261 at v0.17.0 and v0.17.1, :280 at v0.18.0, :285 at v0.19.0; v0.27.1 :305; v0.33.0 :390; v0.34.0 :391): its weights are neither allocated nor loaded, so the tower and its
projector leave the weights book. With no modality on, `supports_multimodal_inputs` is False and `profile_run` runs
no encoder profile: nothing of the encoder is kept through the text run (the encoder term says so, deployment.py).
Both read the one rule, `served_model.tower_unbuilt`, through tower_limits.py's `TOWERS` (flags.py's
`LoadCasts`), which adds every modality's `--limit-mm-per-prompt` at 0 (the same test).

Checked class by class (`TOWERS_UNBUILT_ERAS`): the whole tower kvtop counts (its `vision_config` section and the
projector) sits inside the marked block at v0.17.0, v0.17.1, v0.18.0, v0.19.0, v0.33.0 and v0.34.0 (the lines below).
Another multimodal class with the flag is refused by name (`refuse_unread`): its tower may stay partly built; so is a
release before v0.17.0, which has no such flag.

Checked on a logged start: Qwen/Qwen3.5-35B-A3B bf16 on an RTX PRO 6000 Blackwell Server Edition, vLLM 0.20.0
`LLM(language_model_only=True)` logs 64.69 GiB of weights, the text model's: kvtop's book less its 0.83 GiB
Qwen3_5MoeVisionConfig tower (tests/data/calibration/SOURCES.md, search-index id 67603003401).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.flags_table import FlagSpan
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.load_casts import TowerSwitch
from kvtop.domain.model import ModelSpec
from kvtop.domain.served_model import tower_unbuilt
from kvtop.domain.span import flag_switch

FLAG = "--language-model-only"
KEY = FLAG[2:]  # its key in LaunchSettings.flags
# argparse has it from v0.17.0 (the module docstring; none at v0.16.0). The span's first is the first release of
# flags_table.RELEASES_READ (every flag read) that has it, v0.19.0: the table refuses no release after v0.15.1 for it,
# and `refuse_unread` refuses a multimodal model launched with it before v0.17.0 (`NO_FLAG`)
# A bool field of MultiModalConfig, so BooleanOptionalAction (get_kwargs, engine/arg_utils.py:297-299 at v0.17.0,
# :384-386 at v0.33.0): `--no-language-model-only` too, and `--language-model-only false` unsets it
SPAN = FlagSpan("0.19.0", None, "engine/arg_utils.py:1497 (v0.33.0)", True)
FLAGS = frozenset({FLAG, "--no-" + KEY})

# The classes whose tower and projector are built inside `_mark_tower_model` (module docstring), by release
_QWEN = frozenset({
    "Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration",
    "Qwen3VLMoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
})  # fmt: skip
_SIGLIP_PIXTRAL = frozenset({"Gemma3ForConditionalGeneration", "Mistral3ForConditionalGeneration"})
NO_FLAG: Era[frozenset[str]] = Era("", frozenset(), "first in v0.17.0, engine/arg_utils.py:1029; v0.16.0's has none")
FIRST_READ: Era[frozenset[str]] = Era("0.17.0", _QWEN | _SIGLIP_PIXTRAL,  # the flag's first release, read
        "v0.17.0 and v0.17.1 models/qwen2_vl.py:1243, qwen2_5_vl.py:1125, qwen3_vl.py:1400, qwen3_vl_moe.py:436, "
        "qwen3_5.py:652, :864 (`self.visual`, the merger inside), gemma3_mm.py:510-516, mistral3.py:466-482 (the "
        "tower and multi_modal_projector); v0.18.0 qwen2_vl.py:1243, qwen2_5_vl.py:1128, qwen3_vl.py:1415, "
        "qwen3_vl_moe.py:427, qwen3_5.py:681, :891, gemma3_mm.py:515-521, mistral3.py:465-481")  # fmt: skip
TOWERS_UNBUILT_ERAS: Eras[frozenset[str]] = Eras((
    NO_FLAG,
    FIRST_READ,
    Era("0.19.0", _QWEN | _SIGLIP_PIXTRAL,
        "v0.19.0 models/qwen2_vl.py:1242, qwen2_5_vl.py:1134, qwen3_vl.py:1493, qwen3_vl_moe.py:427, "
        "qwen3_5.py:597, :821 (`self.visual`, the merger inside), gemma3_mm.py:515-521, mistral3.py:418-434 (the "
        "tower and multi_modal_projector); v0.33.0 qwen2_vl.py:1412, qwen2_5_vl.py:1434, qwen3_vl.py:2010, "
        "qwen3_vl_moe.py:255, qwen3_5.py:513, :736, gemma3_mm.py:552-558, mistral3.py:478-486; v0.34.0 alike"),
))  # fmt: skip
# the flag set: those classes build no tower (one half of tower_limits.TOWERS, flags.py's LoadCasts.towers)
TOWERS = TowerSwitch(classes=TOWERS_UNBUILT_ERAS, flag=KEY, unbuilt_when_set=True)


def asked(settings: LaunchSettings) -> bool:
    """Whether the launch sets `--language-model-only` (`span.flag_switch`: `--no-language-model-only` or a false
    word, as `LLM(language_model_only=False)` writes it, leaves it unset)."""
    return flag_switch(settings, KEY) is True


def profiles_encoder(model: ModelSpec | None, settings: LaunchSettings, version: ResolvedVersion) -> bool:
    """Whether vLLM's `profile_run` runs this model's encoder first: a multimodal model whose tower is built
    (`served_model.tower_unbuilt`); one served text-only profiles none, so its peak is a text model's."""
    return model is not None and model.multimodal and not tower_unbuilt(model, settings, version)


def refuse_unread(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> None:
    """A multimodal model launched `--language-model-only` whose class (or release) kvtop did not read
    (`TOWERS_UNBUILT_ERAS`): refused by name, its tower possibly still partly built."""
    if not asked(settings) or not model.multimodal or tower_unbuilt(model, settings, version):
        return
    if TOWERS_UNBUILT_ERAS.era(version) == NO_FLAG:  # before the flag's first release
        raise UnsupportedModelError(
            f"vLLM {version.label} has no such flag ({NO_FLAG.source}): not modelled",
            field=FLAG,
        )
    read = TOWERS_UNBUILT_ERAS.at(version)  # the classes read at this release, as the table says
    raise UnsupportedModelError(
        "builds no tower for a class that wraps it in _mark_tower_model (models/interfaces.py:261 at "
        f"v0.17.0, :285 at v0.19.0); kvtop read that for {', '.join(sorted(read))} from "
        f"v{FIRST_READ.since}, not for "
        f"{model.architecture} at vLLM {version.label}: not modelled",
        field=FLAG,
    )
