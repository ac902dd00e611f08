"""A plan outside what its engine's corpus covers (a GPU model, a release band, an architecture class no record had)
widens its ends by the share `benchmarks/calibration/groups.py` measured, and says so; a plan inside keeps its own.

The architecture classes are read from the configs' own fields (independent of kvtop: DeepSeek-V3's `kv_lora_rank`
512 and `n_routed_experts` 256; Qwen3-30B-A3B's `num_experts` 128 and no latent; Llama-3.1-8B neither; Qwen2.5-VL's
`vision_config`; Falcon-Mamba's `ssm_cfg`/`state_size`). The widened ends are the root of squares of the plan's own
half-width and the share × its centre, worked here by hand from the same plan without the widening.
"""

from __future__ import annotations

import math

import pytest

from benchmarks.calibration.evaluate import Judged
from benchmarks.calibration.groups import needed_share
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.extrapolation import Extrapolation, ExtrapolationWidening, architecture_class
from kvtop.domain.calibration.plan_fits import committed_fits
from kvtop.domain.engines.sglang import calibration as sglang_calibration
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import LaunchSettings
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS, DATA

VL_CONFIGS = DATA / "engine_diff" / "configs"


@pytest.mark.parametrize(("config", "kind"), [
    (CONFIGS / "deepseek-ai--DeepSeek-V3.json", "MLA with MoE"),
    (CONFIGS / "Qwen--Qwen3-30B-A3B.json", "MoE"),
    (CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json", "dense"),
    (VL_CONFIGS / "Qwen--Qwen2.5-VL-7B-Instruct.json", "vision-language"),
    (CONFIGS / "tiiuae--falcon-mamba-7b.json", "state-space hybrid"),
])  # fmt: skip
def test_the_architecture_class_is_what_the_config_holds(config: object, kind: str) -> None:
    assert architecture_class(load_model(str(config))) == kind


COVERED = Extrapolation(engine="sglang", gpus=("H100", "H200"), band_depth=3, newest_band=(0, 5, 21),
                        classes=("dense", "MoE"), gpu_fraction=0.01, version_fraction=0.03, class_fraction=0.02,
                        records=80, sources=25)  # fmt: skip


def test_a_launch_inside_every_group_takes_no_widening() -> None:
    llama = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    assert COVERED.widening(llama, "H100", ResolvedVersion(text="0.5.21")) is None
    assert COVERED.widening(llama, "H100", ResolvedVersion(text="0.5.9")) is None  # older than the newest: inside
    assert COVERED.widening(llama, "H100", ResolvedVersion()) is None  # no release stated: not known to be outside


def test_a_launch_outside_takes_the_largest_share_of_its_groups_and_names_each() -> None:
    deepseek = load_model(str(CONFIGS / "deepseek-ai--DeepSeek-V3.json"))
    found = COVERED.widening(deepseek, "B300", ResolvedVersion(text="0.5.23"))
    assert found is not None and found.fraction == 0.03  # the release band's 3 % (the GPU's 1 %, the class's 2 %)
    assert found.words == ("no record on a B300; no record at 0.5.23 (newest 0.5.21); no record of an MLA with "
                           "MoE model; interval widened by ± 3.0 %")  # fmt: skip
    # where what the GPU decides is measured, the GPU model no record ran widens nothing
    gpu_only = COVERED.widening(load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")), "B300",
                                ResolvedVersion(text="0.5.9"), gpu_terms_open=False)  # fmt: skip
    assert gpu_only is None


def test_a_plan_outside_the_corpus_widens_both_ends_by_its_share_beside_its_own_half_width() -> None:
    """SGLang, Llama-3.1-8B on one B300 (no SGLang record ran one) at 0.5.9: planned with the committed fits and scale,
    once without and once with a widening of 3 % (the share is the test's, not the fit's: the arithmetic is the
    subject). Without: centre C, ends L and H. With: C − √((C − L)² + (0.03 C)²) and C + √((H − C)² + (0.03 C)²)."""
    llama = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    settings = LaunchSettings(engine="sglang", model="meta-llama/Llama-3.1-8B-Instruct", engine_version="0.5.9")
    fits = committed_fits(sglang_calibration.FITS)
    scale = sglang_calibration.INTERVAL_SCALE
    common = {"gpu_total_bytes": gpu_total_bytes("B300"), "gpu_name": "B300", "fits": fits, "scale": scale}
    plain = planned_capacity(llama, settings, **common)  # type: ignore[arg-type]
    wide = planned_capacity(llama, settings, extrapolation=COVERED, **common)  # type: ignore[arg-type]
    centre = plain.ledger.token_capacity
    assert wide.ledger.token_capacity == centre  # the centre does not move
    extra = 0.01 * centre  # the B300's share (the release and the class are inside)
    low = centre - math.hypot(centre - plain.token_capacity_min, round(extra))
    high = centre + math.hypot(plain.token_capacity_max - centre, round(extra))
    assert abs(wide.token_capacity_min - low) <= 1 and abs(wide.token_capacity_max - high) <= 1
    budget = plain.ledger.engine.kv_budget_bytes
    assert wide.extrapolation_bytes == round(0.01 * budget)
    term = wide.extrapolation_term
    assert term is not None and term.source == "calibrated" and term.error_bytes == round(0.01 * budget)
    assert term.label == "no record on a B300; interval widened by ± 1.0 %"
    assert wide.estimate.beyond_support[-1] == term.label
    assert plain.extrapolation_term is None and not any("interval widened" in why for why in plain.beyond_support)


def test_an_in_corpus_plan_keeps_its_interval() -> None:
    """The same launch on an H100 (SGLang records ran it): the widening's inputs are inside, its ends are the plain
    plan's to the token."""
    llama = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    settings = LaunchSettings(engine="sglang", model="meta-llama/Llama-3.1-8B-Instruct", engine_version="0.5.9")
    common = {"gpu_total_bytes": gpu_total_bytes("H100"), "gpu_name": "H100",
              "fits": committed_fits(sglang_calibration.FITS), "scale": sglang_calibration.INTERVAL_SCALE}
    plain = planned_capacity(llama, settings, **common)  # type: ignore[arg-type]
    wide = planned_capacity(llama, settings, extrapolation=COVERED, **common)  # type: ignore[arg-type]
    assert (wide.token_capacity_min, wide.token_capacity_max) == (plain.token_capacity_min, plain.token_capacity_max)
    assert wide.extrapolation_term is None and wide.estimate.extrapolation is None


def _judged(truth: float, predicted: float, low: float, high: float) -> Judged:
    return Judged(record=None, kind="tokens", truth=truth, predicted=predicted, low=low, high=high,  # type: ignore[arg-type]
                  dominant="—")  # fmt: skip


def test_the_needed_share_is_the_missing_half_width_as_an_independent_error() -> None:
    """A plan of 100,000 tokens, interval 97,000 – 104,000, against a log of 105,000: the miss 5,000 on the high side
    of 4,000 wants √(5,000² − 4,000²) = 3,000 more, 3 % of the plan; a log inside wants none."""
    assert needed_share(_judged(105_000, 100_000, 97_000, 104_000)) == pytest.approx(0.03)
    assert needed_share(_judged(95_000, 100_000, 97_000, 104_000)) == pytest.approx(0.04)  # √(5,000² − 3,000²)
    assert needed_share(_judged(103_000, 100_000, 97_000, 104_000)) == 0.0


def test_a_group_that_takes_no_widening_says_so_in_words_an_operator_acts_on() -> None:
    """Session 54's trial: "· wider: no record at 0.10.0 (the newest: 0.7.2); not widened (…)" said wider and not
    widened together. Where the group's share is 0 the words say the plan is outside the corpus and why that costs no
    width, with no "wider" in them."""
    none = ExtrapolationWidening(reasons=("no record at 0.10.0 (newest 0.7.2)",), fraction=0.0, records=4, sources=4)
    assert none.words == ("no record at 0.10.0 (newest 0.7.2); the interval is not widened for it: plans held when "
                          "such records were left out")  # fmt: skip
    assert "wider" not in none.words
    both = none.model_copy(update={"reasons": ("no record on a B200", "no record at 0.10.0 (newest 0.7.2)")})
    assert both.words.endswith("; the interval is not widened for them: plans held when such records were left out")
