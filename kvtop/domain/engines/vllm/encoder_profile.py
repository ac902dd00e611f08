"""What a multimodal model's profile run holds besides the text model's: vLLM's encoder profile (docs/engines/vllm.md §10).

V1's `profile_run` (v0.12.0 v1/worker/gpu_model_runner.py:4284-4369; v0.13.0 :4424-4487; v0.19.0 :5721-5795) first
runs the encoder on a dummy batch of the modality with the most tokens per item (`MultiModalBudget`, v0.12.0
v1/worker/utils.py:21-124): the encoder budget is max(`max_num_batched_tokens`, the largest item's tokens) (both
`max_num_encoder_input_tokens` and `encoder_cache_size` default to `max_num_batched_tokens`: v0.12.0
config/scheduler.py:224-225; v1/core/encoder_cache_manager.py:296-343 `compute_mm_encoder_budget`), the items
budget ÷ the item's tokens (at least 1). It keeps the encoder's outputs in `encoder_cache` and the dummy inputs
(`batched_dummy_mm_inputs`, a local of `profile_run`) through the text model's `_dummy_run` and `_dummy_sampler_run`,
clearing them only after: both add to the torch peak the text run reaches. v0.11.0 – v0.11.2 first expand each
output to (the encoder budget, width) where it is shorter (v0.11.0 :3375-3384), v0.12.0 to (the item's tokens,
width) (v0.12.0 :4340-4351); v0.10.2 (:3026) and v0.13.0 on keep it as returned. Where v0.11.0 – v0.12.x expand,
the loop's variable (`for output in dummy_encoder_outputs`, v0.11.0 :3377, v0.11.2 :4121, v0.12.0 :4343) still names
the last returned output when the text run starts; it is rebound only by `output = self._dummy_sampler_run(...)`
(v0.11.0 :3397, v0.11.2 :4142, v0.12.0 :4364), after the forward and the sampler have run. The outputs the counted
families return are split views of one tensor (qwen3_vl.py:1343 `video_embeds.split`, pixtral.py:422 and
mistral3.py:509 `torch.split`, gemma3_mm.py:576-578, v0.11.0), so that view keeps every item's returned rows through
the peak beside their expanded copies (`EXPANDED`): Qwen3-VL-30B-A3B's video 12,288 × 8,192 × 2 B =
0.19 GiB more, Mistral-Small's two images 2 × 3,025 × 5,120 × 2 B = 0.06 GiB (its v0.11.0 log's 2.12 GiB against the
FlashInfer count's 2.00 without them, 2.06 with).

V1 at v0.9.2 (gpu_model_runner.py:2202-2284; v0.9.0.1 :1827-1900 the same) keeps them as returned too, with cdiv(budget, the item's tokens) items
(:2221); v0.10.0 (:2342-2425, read in its wheel) the budget's floor (:2361-2362), kept as returned (:2412).

Counted for four families (the rest stay the text model's fit, assumed: LLaVA, InternVL, Llama-4, Kimi-VL,
Granite-Vision and every other tower in the catalogue, whose processors kvtop does not size): Mistral-Small-3.x, Gemma-3,
Qwen2-VL / Qwen2.5-VL at v0.9.0.1 – v0.12.x (Qwen2.5-VL's tower's forward too, encoder_forward.py), Qwen2.5-VL at
v0.13.0 – v0.20.x with its tower's forward (encoder_forward.py), and the Qwen3-VL family (Qwen3VLVisionConfig,
Qwen3VLMoeVisionConfig; and from v0.17.0 Qwen3.5's towers, `QWEN3_5_TOWERS`); each family's dummy item, by vLLM's own
processing info over the processor's published sizes (the Qwen families' image bounds the checkpoint's own where its
preprocessor_config.json is read), is encoder_dummies.py's.
Not counted: the encoder's own forward but for Qwen2.5-VL at v0.9.0 – v0.20.x and Qwen3.5 from v0.17.0
(encoder_forward.py, encoder_forward_qwen3.py: the profile's peak the larger of it and the text run with what is
kept, `EncoderProfile.peak`; Qwen3-VL's is the tower's width over the patches: at the v0.12.0 start's 49,152 patches,
1,152 wide and a 4,304-wide MLP over TP 2, under 1 GiB with its pixels, below the text run and what it keeps, 3.9
GiB), other families (their processors' sizes: assumed, the text model's fit), and launches that change the dummy
(`--mm-processor-kwargs`, not read; `--limit-mm-per-prompt` with a width, height, frames or length: the text model's
fit, assumed).
`--limit-mm-per-prompt` counts (mm_limits.py, read v0.11.0 – v0.13.x): a modality at 0 is not profiled (the other
taken, e.g. Qwen3-VL's image where its video is off), and the count caps the items a prompt holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.engines.vllm.encoder_dummies import (
    MERGE,
    QWEN2_VL_ERAS,
    DummyItem,
    deepstack_levels,
    gemma3_item,
    mistral3_item,
    qwen2_vl_item,
    qwen3_vl_item,
    qwen25_vl_item,
)
from kvtop.domain.engines.vllm.encoder_forward import (
    forward_counted,
    stated,
    tower_forward_bytes,
    tower_forward_words,
)
from kvtop.domain.engines.vllm.encoder_forward_qwen3 import (
    QWEN3_VL_FORWARD_ERAS,
    qwen3_forward_bytes,
    qwen3_forward_words,
)
from kvtop.domain.engines.vllm.mm_limits import MMLimits, read_limits, refuse_text_only
from kvtop.domain.engines.vllm.profile_run import batch_limits, engine_era
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import ceil_div
from kvtop.domain.served_model import tower_unbuilt
from kvtop.domain.wording import gib

QWEN3_VL_TOWERS = frozenset({"Qwen3VLVisionConfig", "Qwen3VLMoeVisionConfig"})
# Qwen3.5's towers: its classes build Qwen3-VL's processing info, dummy builder and vision transformer
# (models/qwen3_5.py: v0.17.0 :93-96, :112-119, :628, :653; v0.18.0 :94-97, :113-120, :657, :682; v0.19.0 :89-92,
# :108-115, :572, :598; v0.23.0 :91-94, :110-117, :552, :578; v0.27.1 :84-87, :104-111, :442, :480; v0.28.0 :85-88,
# :105-112, :458, :496; v0.29.0 and v0.30.0 :86-89, :106-113, :471, :514), with no deepstack level
# (encoder_dummies.deepstack_levels): the Qwen3-VL family's profile, from v0.17.0
QWEN3_5_TOWERS = frozenset({"Qwen3_5VisionConfig", "Qwen3_5MoeVisionConfig"})
# the classes read (another over the same tower, e.g. InternS2PreviewForConditionalGeneration, or the text-only
# Qwen3_5ForCausalLM, is not counted)
QWEN3_5_CLASSES = frozenset({"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"})
QWEN3_5_ERAS: Eras[bool] = Eras((
    Era("", False, "no models/qwen3_5.py before v0.17.0"),
    Era("0.17.0", True, "first in v0.17.0: models/qwen3_5.py (read at v0.17.0, v0.18.0, v0.19.0, v0.23.0, v0.27.1, "
                        "v0.28.0, v0.29.0, v0.30.0: the tower, dummy and profile unchanged from v0.27.1 on, "
                        "encoder_forward_qwen3.py)"),
))  # fmt: skip
UNREAD_FLAGS = ("mm-processor-kwargs",)
# Mistral-Small-3.x (HF Mistral3ForConditionalGeneration; its mistral-format params.json builds PixtralForConditionalGeneration
# over the same tower, which kvtop reads as the HF class): its dummy image, encoder_dummies.py
MISTRAL3_CLASSES = frozenset({"Mistral3ForConditionalGeneration", "PixtralForConditionalGeneration"})
# Gemma-3 (gemma3_mm.py): its dummy image, encoder_dummies.py
GEMMA3_CLASSES = frozenset({"Gemma3ForConditionalGeneration"})
# Qwen2-VL / Qwen2.5-VL: the processor's published sizes and the dummy's eras, encoder_dummies.py
QWEN2_VL_TOWERS = frozenset({"Qwen2VLVisionConfig", "Qwen2_5_VLVisionConfig"})  # its sizes: encoder_forward.QWEN2_*
# Mistral-Small-3.x and Gemma-3's dummies: read from v0.10.2 (not at v0.9.2)
LATER_FAMILIES_ERAS: Eras[bool] = Eras((
    Era("", False, "Mistral-Small-3.x and Gemma-3's processing not read before v0.10.2"),
    Era("0.10.2", True, "mistral3.py / pixtral.py, gemma3_mm.py (read at v0.10.2 – v0.19.0)"),
))  # fmt: skip
# the families whose encoder profile is counted, in words (deployment.py's encoder term reads them: one list)
QWEN3_VL, MISTRAL3, GEMMA3, QWEN2_VL = "Qwen3-VL", "Mistral-Small-3.x", "Gemma-3", "Qwen2-VL / Qwen2.5-VL"
COUNTED_FAMILIES = (QWEN3_VL, MISTRAL3, GEMMA3, QWEN2_VL)
# each family's modalities (its processing info's `get_supported_mm_limits`: qwen2_vl.py:868-869, which Qwen3-VL
# inherits; mistral3.py, gemma3_mm.py: image only, v0.11.0)
FAMILY_MODALITIES: Mapping[str, tuple[str, ...]] = {
    QWEN3_VL: ("image", "video"), QWEN2_VL: ("image", "video"), MISTRAL3: ("image",), GEMMA3: ("image",),
}
QWEN3_VL_ERAS: Eras[bool] = Eras((
    Era("", False, "no models/qwen3_vl.py through v0.10.2"),
    Era("0.11.0", True, "first in v0.11.0: models/qwen3_vl.py"),
))  # fmt: skip

# what `profile_run` keeps of each encoder output: "budget" (expanded to the encoder budget's rows), "item" (to the
# item's tokens), "returned", or None where not read
KEPT_ERAS: Eras[str | None] = Eras((
    Era("", None, "not read before v0.9.0.1"),
    Era("0.9.0", "returned", "v0.9.2 v1/worker/gpu_model_runner.py:2270 profile_run: kept as returned; v0.9.0.1 "
                             ":1827-1900 the same (v0.9.1 not read)"),
    Era("0.10.0", "returned", "v0.10.0 v1/worker/gpu_model_runner.py:2412 profile_run: kept as returned (the items "
                              "the budget's floor, :2361-2362)"),
    Era("0.10.1", "returned", "v0.10.1 v1/worker/gpu_model_runner.py:2617-2618 profile_run: kept as returned "
                              "(the items by MultiModalBudget.get_max_items' floor, v1/worker/utils.py:98)"),
    Era("0.10.2", "returned", "v0.10.2 v1/worker/gpu_model_runner.py:3026 profile_run: kept as returned"),
    Era("0.11.0", "budget", "v0.11.0 v1/worker/gpu_model_runner.py:3375-3384 (v0.11.2 :4119): each output shorter "
                            "than the encoder budget expanded to (budget, width)"),
    Era("0.12.0", "item", "v0.12.0 gpu_model_runner.py:4340-4351: each output expanded to (max tokens per item, width)"),
    Era("0.13.0", "returned", "v0.13.0 gpu_model_runner.py:4470-4471 (v0.19.0 :5778-5779): kept as returned; the "
                              "caching loop (`for i, output in enumerate(dummy_encoder_outputs)`) holds the views "
                              "the cache holds, nothing beside"),
))  # fmt: skip
# where KEPT_ERAS expands the outputs ("budget", "item": v0.11.0 – v0.12.x), the expanding loop's variable still names
# the last returned output through the text run, and the outputs being views of one tensor, every item's returned rows
# stay beside their copies (module docstring; `returned_held_bytes`)
EXPANDED = frozenset({"budget", "item"})
# the items profiled: cdiv(budget, the item's tokens) at v0.9.2 (gpu_model_runner.py:2221), else floor
# (MultiModalBudget, v0.12.0 v1/worker/utils.py:21-124)
ITEMS_ROUNDED_UP_ERAS: Eras[bool] = Eras((
    Era("", False, "floor: MultiModalBudget"),
    Era("0.9.0", True, "v0.9.2 gpu_model_runner.py:2221, v0.9.0.1 :1845: cdiv(encoder_budget, max_tokens_per_mm_item)"),
    Era("0.10.0", False, "floor: MultiModalBudget"),
))  # fmt: skip


@dataclass(frozen=True)
class EncoderProfile:
    """The dummy batch vLLM profiles the encoder on, and the bytes it keeps through the text model's run."""

    modality: str
    item_tokens: int  # the budget's count for one item (video: × 12.5 through v0.12.0)
    items: int
    budget: int
    kept_bytes: int  # encoder outputs in encoder_cache plus the dummy pixels, held through the text run
    words: str
    forward_bytes: int = 0  # the tower's own forward with the pixels (encoder_forward.py); 0 where not counted
    forward_words: str = ""

    def peak(self, text_bytes: int) -> int:
        """The profile's torch peak: the text run's with what is kept through it, or the tower's forward before it."""
        return max(text_bytes + self.kept_bytes, self.forward_bytes)

    def peak_words(self, text_bytes: int) -> str:
        """What `peak` took, in words."""
        larger = "the larger" if self.forward_bytes > text_bytes + self.kept_bytes else "below it"
        return f"what {self.words}" + (f"; or {self.forward_words}: {larger}" if self.forward_bytes else "")


def counted_family(
    model: ModelSpec, version: ResolvedVersion, flags: Mapping[str, object], context_length: int
) -> str | None:
    """The family (`COUNTED_FAMILIES`) whose encoder profile kvtop counts for this launch; None where it is not
    counted: another family, a release whose `profile_run` kvtop did not read, a flag that changes the dummy and is
    not read (`UNREAD_FLAGS`), a `--limit-mm-per-prompt` at a release whose reading was not read
    (`mm_limits.LimitsReading.unread`). Raises only InputError, where the release lacks `--limit-mm-per-prompt` or would
    not take its value (`mm_limits.read_limits`), never a not-modelled refusal."""
    if model.tower is None or KEPT_ERAS.at(version) is None:
        return None
    reading = read_limits(flags, version)
    if any(flags.get(name) not in (None, False) for name in UNREAD_FLAGS) or reading.unread:
        return None
    if reading.limits is not None and reading.limits.sized:
        return None
    family = family_of(model)
    if family == QWEN3_VL and is_qwen3_5(model):
        return family if QWEN3_5_ERAS.at(version) else None
    if family == QWEN3_VL:
        return family if QWEN3_VL_ERAS.at(version) else None
    if family == QWEN2_VL and QWEN2_VL_ERAS.at(version):
        return QWEN2_VL
    if family == QWEN2_VL:  # Qwen2.5-VL at v0.13.0 – v0.20.x, its tower's forward read
        return QWEN2_VL if forward_counted(model, version) else None
    return family if family is not None and LATER_FAMILIES_ERAS.at(version) else None


def release_not_read(model: ModelSpec, version: ResolvedVersion) -> str | None:
    """Where a Qwen2-VL / Qwen2.5-VL plan is not counted because kvtop did not read the release's dummy or tower:
    the era's words (`QWEN2_VL_ERAS`, and `encoder_forward.QWEN25_VL_FORWARD_ERAS` for Qwen2.5-VL); else None."""
    if family_of(model) != QWEN2_VL or QWEN2_VL_ERAS.at(version) is not None or forward_counted(model, version):
        return None
    era = era_for(QWEN2_VL_ERAS, version)
    return f"Qwen2-VL / Qwen2.5-VL's dummy and tower at vLLM {version.label} not read ({era.source})"


def family_of(model: ModelSpec) -> str | None:
    """The counted family (`COUNTED_FAMILIES`) of a model by its classes, whatever the release (its vision tower's
    config class, else its architecture); None for another family. `counted_family` adds the releases read."""
    tower = model.tower.config_class if model.tower is not None else None
    if tower in QWEN3_VL_TOWERS or is_qwen3_5(model):
        return QWEN3_VL
    if tower in QWEN2_VL_TOWERS:
        return QWEN2_VL
    if model.architecture in MISTRAL3_CLASSES:
        return MISTRAL3
    if model.architecture in GEMMA3_CLASSES:
        return GEMMA3
    return None


def qwen3_forward_counted(model: ModelSpec, version: ResolvedVersion) -> bool:
    """Whether the Qwen3-VL tower's own forward is counted (encoder_forward_qwen3.py): Qwen3.5's wherever its family
    is (v0.17.0 on), Qwen3-VL's from v0.17.0 (`QWEN3_VL_FORWARD_ERAS`)."""
    return is_qwen3_5(model) or family_of(model) == QWEN3_VL and QWEN3_VL_FORWARD_ERAS.at(version)


def is_qwen3_5(model: ModelSpec) -> bool:
    """Whether the model is a Qwen3.5 class read (`QWEN3_5_CLASSES`) over its own tower (`QWEN3_5_TOWERS`)."""
    tower = model.tower.config_class if model.tower is not None else None
    return tower in QWEN3_5_TOWERS and model.architecture in QWEN3_5_CLASSES


def refuse_unmodelled_limits(inputs: CalibrationInputs) -> None:
    """A multimodal launch whose `--limit-mm-per-prompt` turns every modality off runs text-only, no encoder
    profiled: modelled where the class then builds no tower (tower_limits.py, `tower_unbuilt`), refused where its
    tower is still built (Gemma-3 before v0.15.0): decided where kvtop knows the family's modalities and reads the
    flag's form at the release (`refuse_text_only`, `read_limits`); elsewhere the encoder term names it."""
    model = inputs.model
    if model is not None and model.multimodal and not tower_unbuilt(model, inputs.settings, inputs.version):
        family = family_of(model)
        refuse_text_only(read_limits(inputs.settings.flags, inputs.version).limits,
                         FAMILY_MODALITIES[family] if family is not None else None)


def encoder_profile(inputs: CalibrationInputs) -> EncoderProfile | None:
    """The encoder profile's batch and what it keeps through the text run (module docstring); None where not
    counted (`counted_family`)."""
    model = inputs.model
    flags, context = inputs.settings.flags, inputs.context_length
    family = counted_family(model, inputs.version, flags, context) if model is not None else None
    kept_as = KEPT_ERAS.at(inputs.version)
    if model is None or family is None or kept_as is None or engine_era(inputs) == "v0":
        return None
    limits = read_limits(flags, inputs.version).limits or MMLimits({}, sized=False)
    refuse_text_only(limits, FAMILY_MODALITIES[family])
    if family == QWEN3_VL:
        item = qwen3_vl_item(inputs, model, limits.on(FAMILY_MODALITIES[family]))
    elif family == QWEN2_VL and QWEN2_VL_ERAS.at(inputs.version):  # v0.9.x – v0.12.x's dummy
        item = qwen2_vl_item(inputs, model, limits.on(FAMILY_MODALITIES[family]))
    elif family == QWEN2_VL:  # Qwen2.5-VL from v0.13.0, its dummy read with its tower (`counted_family`)
        item = qwen25_vl_item(inputs, model, limits.on(FAMILY_MODALITIES[family]))
    elif family == MISTRAL3:
        item = mistral3_item(model)
    else:
        item = gemma3_item(model)
    tokens, seqs, _ = batch_limits(inputs)
    budget = max(tokens, item.counted_tokens)
    # the items a prompt holds (MultiModalBudget.get_max_items, v1/worker/utils.py:104-109 at v0.11.0); without
    # chunked prefill the requests are capped at tokens ÷ the item's tokens (:114-118), which never binds below
    # `by_budget` (the budget being max(tokens, the item's tokens)): not applied
    per_prompt = max(1, min(limits.count(item.modality), inputs.context_length // item.counted_tokens))
    rounding_up = ITEMS_ROUNDED_UP_ERAS.at(inputs.version)
    by_budget = ceil_div(budget, item.counted_tokens) if rounding_up else budget // item.counted_tokens
    items = max(1, min(by_budget, seqs * per_prompt))
    rows = {"budget": max(budget, item.embed_rows), "item": max(item.counted_tokens, item.embed_rows)}.get(
        kept_as, item.embed_rows
    )
    outputs = items * rows * item.width * model.dtype_bytes
    pixels = items * item.pixel_values * model.dtype_bytes
    returned = returned_held_bytes(inputs.version, items, rows, item, model.dtype_bytes)
    held = f", the returned {items} × {item.embed_rows:,} × {item.width:,} beside their copies" if returned else ""
    kept = outputs + pixels + returned
    words = (
        f"vLLM {inputs.version.label}'s encoder profile keeps {items} {item.modality} item{'s' if items > 1 else ''} "
        f"({item.shape}; a budget of {budget:,}) through the text run: outputs {items} × {rows:,} × {item.width:,}"
        f"{held} and pixels {items} × {item.pixel_values:,}, {model.dtype_bytes} B each ({gib(kept)}; "
        f"{_sizes_words(family, item, model)})"
    )
    qwen3 = qwen3_forward_counted(model, inputs.version)  # encoder_forward_qwen3.py
    if not qwen3 and not forward_counted(model, inputs.version):
        return EncoderProfile(item.modality, item.counted_tokens, items, budget, kept, words)
    tower_tp, rank_items = inputs.layout.tp, items
    if TOWER_SPLIT.for_launch(inputs.settings.flags, inputs.version.text).builds_whole(model.architecture):
        # `--mm-encoder-tp-mode data`: run_dp_sharded_mrope_vision_model (multimodal/utils.py:537 at v0.10.2,
        # models/vision.py:235-340 at v0.11.0, :322 at v0.13.0) hands each rank the images get_load_balance_assignment
        # gives it (largest first to the least loaded: equal items round-robin, rank 0 the most) and runs the whole
        # tower (TP-1 widths) over them, after a torch.cat copy of their pixels
        tower_tp, rank_items = 1, ceil_div(items, inputs.layout.tp)
        pixels += rank_items * item.pixel_values * model.dtype_bytes
    patches = rank_items * item.embed_rows * stated(model, "spatial_merge_size", MERGE) ** 2
    if qwen3:  # encoder_forward_qwen3.py
        levels = deepstack_levels(model)
        return EncoderProfile(item.modality, item.counted_tokens, items, budget, kept, words,
                              qwen3_forward_bytes(model, patches, tower_tp, levels) + pixels,
                              qwen3_forward_words(model, patches, tower_tp, pixels, levels))  # fmt: skip
    forward = tower_forward_bytes(model, patches, tower_tp, inputs.version) + pixels
    return EncoderProfile(item.modality, item.counted_tokens, items, budget, kept, words, forward,
                          tower_forward_words(model, patches, tower_tp, pixels, inputs.version))  # fmt: skip


def _sizes_words(family: str, item: DummyItem, model: ModelSpec) -> str:
    """Whose processor sizes the dummy item was built at: the checkpoint's preprocessor_config.json (Qwen3-VL's image;
    Qwen2-VL / Qwen2.5-VL's image and the video of its frames, by max_pixels: `encoder_forward.qwen2_max_pixels`;
    `ModelSpec.image_pixels`), else the published ones, assumed."""
    read = family == QWEN2_VL or (family == QWEN3_VL and item.modality == "image")
    if not read or model.image_pixels is None:
        return "the processor's published sizes, assumed"
    if item.modality == "video":  # frames at the image's largest size (v0.11.0 models/qwen2_vl.py:977, :1016)
        return "its frames at the image processor's max_pixels from the checkpoint's preprocessor_config.json"
    return "the image processor's sizes from the checkpoint's preprocessor_config.json"


def returned_held_bytes(version: ResolvedVersion, items: int, rows: int, item: DummyItem, dtype_bytes: int) -> int:
    """The encoder's returned outputs still held beside their expanded copies (`EXPANDED`): every item's rows, the
    outputs being views of one tensor, where the expansion ran (the kept rows more than the returned); else 0."""
    if KEPT_ERAS.at(version) not in EXPANDED or rows <= item.embed_rows:
        return 0
    return items * item.embed_rows * item.width * dtype_bytes
