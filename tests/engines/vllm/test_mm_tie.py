"""Which modality vLLM's encoder profile runs on a tie (`mm_tie.py`): `get_modality_with_max_tokens` keeps the first
of the largest before v0.17.0 (`max(..., key=lambda x: x[1])`, multimodal/encoder_budget.py:183 at v0.16.0) and the
larger name from it (`key=lambda x: (x[1], x[0])`, :184 at v0.17.0): the video over the image.

Qwen2.5-VL-7B at 16,384 of context: its largest image is 16,384 tokens (12,845,056 px ÷ 28², the published
processor), and the video of that image's frames fitting the context has 2 frames, one temporal pair, the same
16,384 tokens (qwen2_vl.py `_get_max_video_frames`): a tie. At 32,768 three frames fit, two pairs, 32,768 tokens."""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.encoder_forward import qwen25_dummy
from kvtop.domain.engines.vllm.encoder_profile import encoder_profile
from kvtop.domain.engines.vllm.mm_tie import profiled_modality
from tests.data_paths import CONFIGS
from tests.engines.vllm.encoder_inputs import encoder_inputs

QWEN25_VL_7B = CONFIGS / "heldout" / "Qwen--Qwen2.5-VL-7B-Instruct.json"


def test_a_tie_goes_to_the_first_before_v0_17_and_to_the_video_from_it() -> None:
    tied = {"image": 16_384, "video": 16_384}
    assert profiled_modality(tied, ResolvedVersion(text="0.16.0")) == "image"
    assert profiled_modality(tied, ResolvedVersion(text="0.17.0")) == "video"
    assert profiled_modality({"image": 16_384, "video": 32_768}, ResolvedVersion(text="0.16.0")) == "video"
    assert profiled_modality({"image": 16_384, "video": 8_192}, ResolvedVersion(text="0.19.0")) == "image"


def test_qwen2_5_vl_profiles_the_tied_video_from_v0_17() -> None:
    inputs = encoder_inputs(QWEN25_VL_7B, "0.19.0", 16_384)
    assert inputs.model is not None
    before = qwen25_dummy(inputs.model, 16_384, ("image", "video"), ResolvedVersion(text="0.16.0"))
    after = qwen25_dummy(inputs.model, 16_384, ("image", "video"), inputs.version)
    assert (before.modality, before.tokens) == ("image", 16_384)
    assert (after.modality, after.tokens, after.patches) == ("video", 16_384, before.patches)
    # no tie at 32,768: the 2-pair video either way
    assert qwen25_dummy(inputs.model, 32_768, ("image", "video"), ResolvedVersion(text="0.16.0")).tokens == 32_768


def test_the_tied_profile_names_the_video_with_the_images_bytes() -> None:
    """The encoder profile of the same launch at v0.16.0 and v0.19.0: the image, then the tied video, one item of
    16,384 tokens either way, so the same bytes kept and the same forward (equal tokens: equal patches and pixels)."""
    before = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.16.0", 16_384))
    after = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.19.0", 16_384))
    assert before is not None and after is not None
    assert (before.modality, after.modality) == ("image", "video")
    assert before.items == after.items == 1 and before.item_tokens == after.item_tokens == 16_384
    assert before.kept_bytes == after.kept_bytes
