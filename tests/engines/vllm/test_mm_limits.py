"""vLLM's `--limit-mm-per-prompt` in the encoder profile (kvtop/domain/engines/vllm/mm_limits.py, encoder_profile.py),
read in the v0.11.0, v0.11.2, v0.12.0 and v0.13.0 wheels.

Expected figures are vLLM's code's arithmetic by hand, never the function's output: a modality at 0 is left out of the
profiler's counts (multimodal/registry.py:124-176 at v0.11.0) so the largest of the others is profiled; the items a
prompt holds are max(1, min(count, max_model_len ÷ the item's tokens)) and the items profiled the fewer of that ×
max_num_seqs and the encoder budget ÷ the item's tokens (v1/worker/utils.py:84-127 at v0.11.0).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.calibration import FITS
from kvtop.domain.engines.vllm.calibration_activation import activation_estimate
from kvtop.domain.engines.vllm.encoder_profile import (
    FAMILY_MODALITIES,
    counted_family,
    encoder_profile,
    family_of,
)
from kvtop.domain.engines.vllm.mm_limits import MMLimits, read_limits, refuse_text_only
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.sources.hub import load_config_file
from tests.data_paths import CASES, CONFIGS

QWEN3_VL_30B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-30B-A3B-Instruct.json"  # vision out_hidden_size 2,048
QWEN3_VL_2B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-2B-Instruct.json"  # out_hidden_size 2,048
# the same config with the embedding checkpoint's processor beside it (tests/data/calibration/SOURCES.md)
QWEN3_VL_EMBEDDING_2B = CONFIGS.parent / "calibration" / "configs" / "Qwen--Qwen3-VL-Embedding-2B.RECONSTRUCTED.json"
GEMMA3_27B = CONFIGS / "google--gemma-3-27b-it.json"  # hidden 5,376, image_size 896


def _inputs(config: Path, version: str, context: int, *flags: str) -> CalibrationInputs:
    model = load_config_file(config)
    settings = parse_flags("vllm", ["--max-model-len", str(context), *flags])
    return CalibrationInputs(
        model=model, settings=settings, layout=ParallelLayout(tp=1), gpu_name="H100",
        gpu_total_bytes=gpu_total_bytes("H100"), version=ResolvedVersion(text=version), weights_bytes=0,
        context_length=context,
    )  # fmt: skip


def test_the_video_off_profiles_the_image_at_v0_12_0() -> None:
    """Without the flag v0.12.0 profiles Qwen3-VL's video (153,600 counted tokens at 65,536 of context:
    test_encoder_profile.py); with video 0 the image's (4,096 ÷ 16)² ÷ 4 = 16,384 tokens: budget max(8,192, 16,384),
    one item expanded to its 16,384 tokens (gpu_model_runner.py:4340-4351): 16,384 × (2,048 × 4) × 2 B, and its
    65,536 patches × (3 × 2 × 16²) values × 2 B."""
    profile = encoder_profile(_inputs(QWEN3_VL_30B, "0.12.0", 65536, "--limit-mm-per-prompt", '{"video": 0}'))
    assert profile is not None
    assert (profile.modality, profile.budget, profile.items) == ("image", 16_384, 1)
    assert profile.kept_bytes == 16_384 * 8_192 * 2 + 65_536 * 1_536 * 2


@pytest.mark.parametrize("version", ["0.11.1", "0.14.0"])
def test_the_neighbouring_releases_read_the_flag_as_v0_11_2_to_v0_13_0(version: str) -> None:
    """v0.11.1 and v0.14.0 take `{"count": N}` and profile the modalities left on as v0.11.2 – v0.13.0 do
    (config/multimodal.py get_limit_per_prompt, v1/worker/utils.py MultiModalBudget: the same functions, mm_limits.py)."""
    counted = encoder_profile(_inputs(QWEN3_VL_30B, version, 65536, "--limit-mm-per-prompt", '{"video": {"count": 0}}'))
    assert counted is not None and counted.modality == "image"


def test_v0_10_2_reads_the_counts_as_v0_11_0_does() -> None:
    """v0.10.2's MultiModalBudget and registry are v0.11.0's (utils.py:24-127, registry.py:99-177): image 0 on Gemma-3
    (image only, gemma3_mm.py) turns every modality off."""
    with pytest.raises(UnsupportedModelError, match="text-only"):
        activation_estimate(_inputs(GEMMA3_27B, "0.10.2", 8192, "--limit-mm-per-prompt", '{"image": 0}'), FITS)


def test_the_count_caps_the_items_a_prompt_holds() -> None:
    """Gemma-3 at v0.12.0, 8,192 tokens: 260 tokens an image, 8,192 // 260 = 31 by the budget; with 2 images a
    prompt (min(2, 8,192 // 260)) and 4 sequences, 4 × 2 = 8 items. Each kept expanded to its 260 tokens beside the
    returned 256 rows (the v0.12.0 loop), 5,376 wide, and 3 × 896² pixel values, 2 B each."""
    flags = ("--max-num-seqs", "4")
    assert encoder_profile(_inputs(GEMMA3_27B, "0.12.0", 8192, *flags)).items == 31  # type: ignore[union-attr]
    profile = encoder_profile(_inputs(GEMMA3_27B, "0.12.0", 8192, *flags, "--limit-mm-per-prompt", '{"image": 2}'))
    assert profile is not None
    assert (profile.budget, profile.items) == (8192, 8)
    assert profile.kept_bytes == 8 * 260 * 5376 * 2 + 8 * 256 * 5376 * 2 + 8 * 3 * 896**2 * 2


def test_the_embedding_start_s_launch_profiles_one_published_image() -> None:
    """The zjpzhao T4 launch (v0.11.0, image 1, video 0, 8,192 batched tokens, 64 sequences; tests/data/calibration/
    SOURCES.md): at the published Qwen3-VL processor sizes the image is 16,384 tokens, so the budget is 16,384 and one
    item, expanded to the budget (v0.11.0 :3375-3384): 16,384 × 8,192 × 2 B and 65,536 × 1,536 × 2 B. Its log
    profiles 6 images at a budget of 8,192: the embedding checkpoint's own processor makes them 1,171 – 1,365 tokens,
    read where its preprocessor_config.json is given (the next test)."""
    profile = encoder_profile(_inputs(QWEN3_VL_2B, "0.11.0", 8192, "--limit-mm-per-prompt", '{"image": 1, "video": 0}',
                                      "--max-num-batched-tokens", "8192", "--max-num-seqs", "64"))  # fmt: skip
    assert profile is not None
    assert (profile.modality, profile.budget, profile.items) == ("image", 16_384, 1)
    assert profile.kept_bytes == 16_384 * 8_192 * 2 + 65_536 * 1_536 * 2


def test_the_embedding_checkpoint_s_processor_profiles_the_log_s_six_images() -> None:
    """The same launch with the Qwen3-VL-Embedding processor beside the config (max_pixels 1,310,720: the
    checkpoint family's preprocessor_config.json, search-index id 14957053492): the largest image smart-resizes
    9,999,999² to 1,120 × 1,120 px (floor(√1,310,720 ÷ 32) × 32), 70 × 70 patches, 1,225 tokens; the budget stays
    max(8,192, 1,225) and holds 8,192 // 1,225 = 6 items, as the start's own log prints ('Encoder cache will be
    initialized with a budget of 8192 tokens, and profiled with 6 image items of the maximum feature size').
    Each output is expanded to (8,192, 8,192) (v0.11.0 gpu_model_runner.py:3375-3384) beside the returned
    6 × 1,225 rows, and the pixels are 4,900 patches × 3 × 2 × 16² values an image."""
    profile = encoder_profile(_inputs(QWEN3_VL_EMBEDDING_2B, "0.11.0", 8192, "--limit-mm-per-prompt",
                                      '{"image": 1, "video": 0}', "--max-num-batched-tokens", "8192",
                                      "--max-num-seqs", "64"))  # fmt: skip
    assert profile is not None
    assert (profile.modality, profile.budget, profile.items, profile.item_tokens) == ("image", 8_192, 6, 1_225)
    assert profile.kept_bytes == 6 * 8_192 * 8_192 * 2 + 6 * 1_225 * 8_192 * 2 + 6 * 4_900 * 1_536 * 2
    assert "from the checkpoint's preprocessor_config.json" in profile.words


def test_a_dummy_size_is_not_counted() -> None:
    """From v0.11.2 a size shrinks the dummy but not the tokens the budget counts (v0.12.0 profiling.py:154-184): not
    counted, the text model's fit (as `--mm-processor-kwargs`); a count alone in the dict form still is."""
    sized = '{"image": {"count": 1, "width": 512, "height": 512}}'
    assert encoder_profile(_inputs(QWEN3_VL_30B, "0.12.0", 65536, "--limit-mm-per-prompt", sized)) is None
    counted = encoder_profile(_inputs(QWEN3_VL_30B, "0.12.0", 65536, "--limit-mm-per-prompt", '{"video": {"count": 0}}'))
    assert counted is not None and counted.modality == "image"


def test_every_modality_off_with_the_tower_built_is_not_modelled() -> None:
    """Text-only mode (no encoder profiled) beside Gemma-3's tower, built whatever the limits at v0.12.0
    (gemma3_mm.py:525-530 at v0.14.1); Qwen3-VL's drops its tower there (qwen3_vl.py:1129-1131 at v0.11.0) and is
    planned text-only (test_tower_limits.py)."""
    with pytest.raises(UnsupportedModelError, match="text-only"):
        activation_estimate(_inputs(GEMMA3_27B, "0.12.0", 8192, "--limit-mm-per-prompt", '{"image": 0}'), FITS)
    activation_estimate(_inputs(QWEN3_VL_30B, "0.12.0", 8192, "--limit-mm-per-prompt", '{"image": 0, "video": 0}'), FITS)


@pytest.mark.parametrize(("version", "limit", "error", "says"), [
    ("0.11.0", '{"image": {"count": 1}}', InputError, "a dict from v0.11.1"),
    ("0.10.2", '{"image": {"count": 1}}', InputError, "a dict from v0.11.1"),  # v0.10.2 arg_utils.py:366 dict[str, int]
    ("0.12.0", '{"image": -1}', InputError, "whole number"),
    ("0.12.0", '{"image": {"count": 1, "size": 3}}', InputError, "unknown option"),
    ("0.12.0", "image=1", InputError, "not JSON"),
])  # fmt: skip
def test_the_release_and_the_value_refuse_as_read(version: str, limit: str, error: type[Exception], says: str) -> None:
    with pytest.raises(error, match=says):
        check_parallel(parse_flags("vllm", ["--limit-mm-per-prompt", limit, "--engine-version", version]))


@pytest.mark.parametrize("version", ["0.10.1", "0.14.1", "0.19.0"])
def test_a_release_not_read_plans_the_text_model_s_fit_and_says_so(version: str) -> None:
    """At a release whose reading of the flag was not read the launch is taken (a log that prints it gets its verdict,
    never an error) and the encoder profile is not counted; the flag's value is not judged there."""
    flags = ["--limit-mm-per-prompt", '{"image": 1}', "--engine-version", version]
    check_parallel(parse_flags("vllm", flags))
    model = load_config_file(QWEN3_VL_30B)
    assert counted_family(model, ResolvedVersion(text=version), {"limit-mm-per-prompt": '{"image": 1}'}, 8192) is None
    assert read_limits({"limit-mm-per-prompt": '{"image": 1}'}, ResolvedVersion(text=version)).unread is not None
    assert read_limits({}, ResolvedVersion(text=version)).unread is None
    assert encoder_profile(_inputs(QWEN3_VL_30B, version, 8192, "--limit-mm-per-prompt", '{"image": 0, "video": 0}')) is None


def test_an_unknown_family_is_not_refused_on_the_modalities_it_names() -> None:
    """`supports_multimodal_inputs` asks every supported modality (multimodal/registry.py:98-122 at v0.11.0): image 0
    leaves an unnamed audio or video at 999, so where the family's modalities are unknown nothing is decided."""
    refuse_text_only(MMLimits({"image": 0}, sized=False), None)
    with pytest.raises(UnsupportedModelError, match="text-only"):
        refuse_text_only(MMLimits({"image": 0}, sized=False), ("image",))
    refuse_text_only(MMLimits({"image": 0}, sized=False), ("image", "video"))


def test_explain_reads_a_log_that_prints_the_flag_at_a_release_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Qwen3-VL-8B start (its `non-default args` print limit_mm_per_prompt {'image': 1}) with its
    mm_processor_kwargs taken out, read under 0.19.0's rules: a verdict, not an error (the log is what ran)."""
    case = CASES / "vllm" / "srcbuild-dev15312-qwen3-vl-8b-init-failed"
    text = (case / "engine.log").read_text()
    kwargs = "'mm_processor_kwargs': {'min_pixels': 784, 'max_pixels': 1003520}, "
    assert kwargs in text and "'limit_mm_per_prompt': {'image': 1}" in text
    log = tmp_path / "engine.log"
    log.write_text(text.replace(kwargs, ""))
    argv = ["explain", str(log), "--model", str(case / "config.json"), "--engine-version", "0.19.0", "--gpu", "H100",
            "--no-calibration-store"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "verdict: FAILED START" in out and "163,568 tokens" in out


@pytest.mark.parametrize(("config", "modalities"), [
    (QWEN3_VL_30B, ("image", "video")), (QWEN3_VL_2B, ("image", "video")), (GEMMA3_27B, ("image",)),
])  # fmt: skip
def test_the_family_by_class_is_the_one_the_profile_counts(config: Path, modalities: tuple[str, ...]) -> None:
    """One lookup of the family (encoder_profile.family_of) for the text-only refusal and the counted profile: its
    modalities are the processing info's `get_supported_mm_limits` (qwen2_vl.py:868-869, inherited by Qwen3-VL;
    gemma3_mm.py: image only, v0.11.0), and at a release read (v0.12.0) the profile counts that same family."""
    model = load_config_file(config)
    family = family_of(model)
    assert family is not None and FAMILY_MODALITIES[family] == modalities
    assert counted_family(model, ResolvedVersion(text="0.12.0"), {}, 8192) == family


def test_a_plan_parses_the_value_once(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A Qwen3-VL plan at v0.12.0 reads the flag in the launch check, the encoder profile's family, its text-only check
    and its batch (several calls per plan): the JSON is parsed once, and every reader sees {"image": 2, "video": 0}
    as vLLM does (image 2, video off, audio left out: 999)."""
    from kvtop.domain.engines.vllm import mm_limits

    calls: list[object] = []
    real = mm_limits.json_object
    monkeypatch.setattr(mm_limits, "json_object", lambda text, flag: calls.append(text) or real(text, flag))
    mm_limits._parsed.cache_clear()
    value = '{"image": 2, "video": 0}'
    code = main(["plan", "--model", str(QWEN3_VL_30B), "--engine", "vllm", "--engine-version", "0.12.0", "--gpu", "H100",
                 "--limit-mm-per-prompt", value, "--no-calibration-store"])  # fmt: skip
    assert code == 0, capsys.readouterr().err[-400:]
    assert calls == [value]
    limits = read_limits({"limit-mm-per-prompt": value}, ResolvedVersion(text="0.12.0")).limits
    assert limits is not None
    assert (limits.count("image"), limits.count("video"), limits.count("audio")) == (2, 0, 999)
