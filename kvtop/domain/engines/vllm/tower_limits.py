"""vLLM's towers left unbuilt: every modality a class builds its tower for at limit 0 (docs/engines/vllm.md §10).

A class builds its vision tower (and projector) only while one of its tower's modalities may be sent: from v0.15.0
inside `_mark_tower_model(vllm_config, modalities)`, which builds it as `StageMissingLayer` (`no_init_weights`) where
`get_limit_per_prompt` answers 0 for every one of them (v0.15.0 model_executor/models/interfaces.py:253; v0.17.1
:261; v0.19.0 :285; v0.33.0 :390; v0.34.0 :391); before it, class by class, `self.visual = None` (Qwen) or
`self.vision_tower = self.multi_modal_projector = None` (Mistral-3) under the same test, their weights skipped at
load (`skip_prefixes`, v0.11.0 qwen2_vl.py:1568-1571). Gemma-3 built its tower whatever the limits until v0.15.0
(v0.14.1 gemma3_mm.py:525-530, outside any test): there every modality at 0 is refused (mm_limits.refuse_text_only).

`get_limit_per_prompt` answers 0 for a modality `--limit-mm-per-prompt` sets at 0 (a modality left out: 999) and,
from v0.19.0, for every modality under `--language-model-only` (text_only.py). With every modality the model
supports at 0, `supports_multimodal_inputs` is False and `profile_run` profiles no encoder (v0.19.0
multimodal/registry.py:103-126; v0.33.0 config/model.py:925-970), so the model is served as a text model: one rule,
`served_model.tower_unbuilt`, through this package's `LoadCasts.towers` (flags.py).

Gemma-4 (from v0.21.0) marks its two towers apart: `{"audio": 0}` leaves its audio encoder unbuilt and the vision
tower built, `{"image": 0, "video": 0}` the other way round (`unbuilt_part`, applied by served_model.load_cast).
Other partial zeros leave the tower built: Qwen's tower is marked for image and video, so `{"image": 0}` (video 999) or
`{"image": 0, "video": 1}` builds it and profiles a video (where the budget is read, mm_limits.py); Gemma-3's and
Mistral-3's are marked for image alone, so `{"image": 0}` drops theirs (video is no modality they support).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.mm_limits import read_limits
from kvtop.domain.engines.vllm.text_only import TOWERS as TEXT_ONLY_TOWERS
from kvtop.domain.tower_spec import TowerPart

_VISION = frozenset({"image", "video"})
_IMAGE = frozenset({"image"})
_QWEN_VL = {
    "Qwen2VLForConditionalGeneration": _VISION, "Qwen2_5_VLForConditionalGeneration": _VISION,
    "Qwen3VLForConditionalGeneration": _VISION, "Qwen3VLMoeForConditionalGeneration": _VISION,
}  # fmt: skip
_QWEN3_5 = {"Qwen3_5ForConditionalGeneration": _VISION, "Qwen3_5MoeForConditionalGeneration": _VISION}
_MISTRAL3 = {"Mistral3ForConditionalGeneration": _IMAGE}
_GEMMA3 = {"Gemma3ForConditionalGeneration": _IMAGE}
# Gemma-4 marks its vision tower (and embed_vision) for image and video, an `audio_config` checkpoint's audio tower for
# audio (its parts, `TOWER_PARTS`): all three at 0 drop every tower it may build, one part's at 0 that part alone
_GEMMA4_PARTS: Mapping[TowerPart, frozenset[str]] = MappingProxyType(
    {"vision": frozenset({"image", "video"}), "audio": frozenset({"audio"})}
)
_GEMMA4 = {"Gemma4ForConditionalGeneration": frozenset().union(*_GEMMA4_PARTS.values())}
# class → the modalities its tower and projector are built for, by release (only classes whose whole counted tower,
# its `vision_config` section and projector, sits under the test); the limits' form is read from v0.10.2 (mm_limits)
TOWER_MODALITIES: Eras[Mapping[str, frozenset[str]]] = Eras((
    Era("", MappingProxyType({}), "--limit-mm-per-prompt's form not read before v0.10.2"),
    Era("0.10.2", MappingProxyType({**_QWEN_VL, **_MISTRAL3}),
        "each class's own test: v0.10.2 qwen2_vl.py:1112-1121, qwen2_5_vl.py:930-941, mistral3.py:440-457; v0.11.0 "
        "qwen2_vl.py:1270-1280, qwen2_5_vl.py:1011-1021, qwen3_vl.py:1129-1131, qwen3_vl_moe.py:322-324, "
        "mistral3.py:440-457; v0.13.0 qwen2_vl.py:1274-1285, qwen2_5_vl.py:1184-1195, qwen3_vl.py:1279-1282, "
        "qwen3_vl_moe.py:427-430, mistral3.py:472-491; v0.14.1 alike (gemma3_mm.py:525-530 built whatever)"),
    Era("0.15.0", MappingProxyType({**_QWEN_VL, **_MISTRAL3, **_GEMMA3}),
        "_mark_tower_model (v0.15.0 interfaces.py:253): qwen2_vl.py:1212, qwen2_5_vl.py:1122, qwen3_vl.py:1275, "
        "qwen3_vl_moe.py:444, gemma3_mm.py:525-530, mistral3.py:458-474; v0.16.0 alike"),
    Era("0.17.1", MappingProxyType({**_QWEN_VL, **_QWEN3_5, **_MISTRAL3, **_GEMMA3}),
        "_mark_tower_model (v0.17.1 interfaces.py:261; v0.19.0 :285; v0.33.0 :390; v0.34.0 :391), Qwen3.5 first in "
        "the read wheels (absent at v0.16.0): v0.17.1 qwen3_5.py:652, :864; v0.18.0 :681, :891; v0.34.0 qwen2_vl.py:1412, "
        "qwen2_5_vl.py:1434, qwen3_vl.py:2013, qwen3_vl_moe.py:255, qwen3_5.py:511, :734, gemma3_mm.py:554, "
        "mistral3.py:503"),
    Era("0.21.0", MappingProxyType({**_QWEN_VL, **_QWEN3_5, **_MISTRAL3, **_GEMMA3, **_GEMMA4}),
        "Gemma-4 first read: v0.21.0 gemma4_mm.py:958 _mark_tower_model(vllm_config, {'image', 'video'}) around "
        "vision_tower and embed_vision, :965-978 the audio tower under 'audio' where audio_config is set; v0.34.0 "
        ":1119, :1136-1140 alike (releases before 0.21.0 not read for it)"),
))  # fmt: skip

# class → each part of its `vision_audio` tower and the modalities it is built for, by release
TOWER_PARTS: Eras[Mapping[str, Mapping[TowerPart, frozenset[str]]]] = Eras((
    Era("", MappingProxyType({}), "Gemma-4 not read before v0.21.0"),
    Era("0.21.0", MappingProxyType({"Gemma4ForConditionalGeneration": _GEMMA4_PARTS}),
        "TOWER_MODALITIES' v0.21.0 row: one _mark_tower_model per part (gemma4_mm.py:958 vision, :965-978 audio)"),
))  # fmt: skip


def limits_off(architecture: str, flags: Mapping[str, object], version: ResolvedVersion) -> bool:
    """Whether `--limit-mm-per-prompt` sets every modality this release's class builds its tower for at 0."""
    marked = TOWER_MODALITIES.at(version).get(architecture)
    limits = read_limits(flags, version).limits if marked else None
    return limits is not None and not limits.on(tuple(sorted(marked or ())))


class VllmTowers(BaseModel):
    """vLLM's `LoadCasts.towers`: no tower under `--language-model-only` (text_only.py) or with every modality its
    tower is built for at 0 (`limits_off`): both are `get_limit_per_prompt` at 0 in the same test."""

    model_config = ConfigDict(frozen=True)

    def builds_no_tower(self, architecture: str, flags: Mapping[str, object], version: ResolvedVersion) -> bool:
        """Whether this release's class for `architecture` builds no tower at a launch with these flags."""
        return TEXT_ONLY_TOWERS.builds_no_tower(architecture, flags, version) or limits_off(architecture, flags, version)

    def unbuilt_part(self, architecture: str, flags: Mapping[str, object], version: ResolvedVersion) -> TowerPart | None:
        """The part of the class's tower left unbuilt alone: the one whose every modality `--limit-mm-per-prompt`
        sets at 0 while the other's are on (none where the whole tower is unbuilt, `builds_no_tower`)."""
        parts = TOWER_PARTS.at(version).get(architecture)
        limits = read_limits(flags, version).limits if parts else None
        if parts is None or limits is None or self.builds_no_tower(architecture, flags, version):
            return None
        off = [part for part, modalities in parts.items() if not limits.on(tuple(sorted(modalities)))]
        return off[0] if len(off) == 1 else None


TOWERS = VllmTowers()
