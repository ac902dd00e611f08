"""V0 before v0.6.0: what the profile charges beside torch's peak changed at v0.2.5 and v0.3.1 (`v0_charge.py`).

The figures are vllm#2031's (WoosukKwon, 2023-12-12, tests/data/calibration/vllm.jsonl `vllm-pr2031-*`): Llama-2-7B
at TP 1 on one A100-80GB, vLLM's defaults, printed `# GPU blocks: 7449` on main (the v0.2.4 form,
`torch.cuda.max_memory_allocated()`) and `7351` with the PR (the v0.2.5 form, `total − free` after the profile).

By hand from the code: a block is 16 tokens × 524,288 B (32 layers × 32 KV heads × 128 × 2 (K, V) × 2 B) = 8 MiB,
and `num_gpu_blocks = (total × 0.9 − peak) // block`, so the two forms differ only by what `total − free` holds
beyond torch's allocated peak: (7,449 − 7,351) × 8 MiB = 0.766 GiB, the CUDA context, NCCL's handles and torch's
reserved pool. kvtop charges there the v06 non-torch fit plus the context fit, never fitted on these logs.
"""

from __future__ import annotations

from datetime import date

import pytest

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, from_dates, from_flag
from kvtop.domain.engines.vllm.calibration_non_torch import custom_all_reduce_on
from kvtop.domain.engines.vllm.v0_charge import profile_charge
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.sources.hub import load_config_file
from tests.data_paths import CASES, CONFIGS
from tests.explain_cli import explain_json

LLAMA2_7B = load_config_file(CONFIGS / "meta-llama--Llama-2-7b-hf.json")
LOGGED_BLOCKS = {"0.2.4": 7449, "0.2.5": 7351}  # vllm#2031's comment
BLOCK = 16 * 524_288


def _blocks(version: str) -> tuple[int, int]:
    """(planned blocks, planned non-torch bytes) of the Llama-2-7B start at `version`, blind."""
    settings = parse_flags("vllm", ["--engine-version", version])
    plan = planned_capacity(LLAMA2_7B, settings, gpu_total_bytes=gpu_total_bytes("A100-80GB"), gpu_name="A100-80GB")
    non_torch = plan.estimate.term(Term.NON_TORCH)
    assert non_torch is not None
    return plan.ledger.token_capacity // 16, non_torch.bytes


def test_each_release_reads_the_form_its_wheel_holds() -> None:
    # v0.2.4 worker.py:93 max_memory_allocated; v0.2.5 :91-92 and v0.3.0 :121-122 total − free; v0.3.1 :131-134 and
    # v0.5.5 :227-230 init_gpu_memory − free
    forms = {"0.2.0": "torch_peak", "0.2.4": "torch_peak", "0.2.5": "device_used", "0.3.0": "device_used",
             "0.3.1": "baseline", "0.5.5": "baseline", "0.6.3": "baseline"}  # fmt: skip
    for version, form in forms.items():
        assert profile_charge(ResolvedVersion(text=version)).value == form, version


def test_before_v025_nothing_but_torch_s_peak_is_charged() -> None:
    blocks, non_torch = _blocks("0.2.4")
    assert non_torch == 0
    assert abs(blocks - LOGGED_BLOCKS["0.2.4"]) / LOGGED_BLOCKS["0.2.4"] < 0.005  # 7,427 planned in session 48


def test_v025_charges_the_context_the_log_shows() -> None:
    before, _ = _blocks("0.2.4")
    after, non_torch = _blocks("0.2.5")
    logged = LOGGED_BLOCKS["0.2.4"] - LOGGED_BLOCKS["0.2.5"]  # 98 blocks, 0.766 GiB
    # the context is the v0.6 non-torch fit's constant: 0.267 GiB from three TP 1 starts until session 50, 0.202 GiB
    # from five since (two held-out v0.6.6 starts printed 0.10 and 0.11 GiB): 8 blocks (0.0625 GiB) of slack
    assert abs((before - after) - logged) <= 8
    assert abs(non_torch - logged * BLOCK) <= 8 * BLOCK
    assert abs(after - LOGGED_BLOCKS["0.2.5"]) / LOGGED_BLOCKS["0.2.5"] < 0.005


def test_no_custom_all_reduce_before_v030() -> None:
    # custom_all_reduce.py is absent from the v0.2.7 wheel; v0.3.0 worker.py:86-87 calls init_custom_ar
    def inputs(version: str) -> CalibrationInputs:
        return CalibrationInputs(
            model=LLAMA2_7B, settings=parse_flags("vllm", []), layout=ParallelLayout(tp=4), gpu_name="A100-80GB",
            gpu_total_bytes=gpu_total_bytes("A100-80GB"), version=ResolvedVersion(text=version), weights_bytes=0,
            context_length=4096,
        )  # fmt: skip

    assert not custom_all_reduce_on(inputs("0.2.7"))
    assert custom_all_reduce_on(inputs("0.3.0"))


def test_releases_before_v06_are_known_releases() -> None:
    calendar = engine_rules("vllm").calendar
    assert from_flag("0.3.0", calendar).detail == "--engine-version 0.3.0"
    # the Qwen1.5 start of QwenLM/Qwen3#16, posted 2024-02-06: v0.3.0 (2024-01-31 on PyPI) was the release out
    assert from_dates(calendar, date(2024, 2, 6), "vLLM").text == "0.3.0"
    # the 0.1.x releases are on the calendar (PyPI's upload days: 0.1.7 on 2023-09-11), their own batch modelled
    assert from_flag("0.1.7", calendar).detail == "--engine-version 0.1.7"
    assert from_dates(calendar, date(2023, 9, 21), "vLLM").text == "0.1.7"  # brettin's CodeLlama start's day
    assert from_flag("0.0.1", calendar).detail.endswith("(older than 0.1.0, the oldest release kvtop models: the "
                                                        "oldest rules apply)")  # fmt: skip


def test_a_v041_start_explained_by_its_own_release(capsys: pytest.CaptureFixture[str]) -> None:
    """The v0.4.1 start of search-index file 29429054722 (Meta-Llama-3-8B-Instruct on one RTX 3090, defaults):
    `Loading model weights took 14.9595 GB` (GiB), `# GPU blocks: 2358`. By hand from v0.4.1's worker.py:153-154
    (`(total × 0.9 − peak) // block`, peak = init_gpu_memory − free, the context outside): a block is 16 × 131,072 B
    (32 layers × 8 KV heads × 128 × 2 × 2 B) = 2 MiB, so the KV is 2,358 × 2,097,152 = 4,945,084,416 B; the
    requested ceil(25,304,068,260 × 0.9) = 22,773,661,434 B (the RTX 3090's calibrated CUDA total, 23.56625 GiB: the
    mean of the 23.58, 23.58, 23.57 and five 23.56 GiB its logs printed, the five RhizoNymph v0.29.0 starts since
    session 66's refit, e4167382; was 23.576667 of the first three) less the weights 16,062,640,816 B leaves
    6,711,020,618, and the profile charged the rest: 1,765,936,202 B (1.64 GiB)."""
    out = explain_json(capsys, CASES / "vllm" / "file29429054722-v041-llama3-8b-3090" / "engine.log",
                       "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"), "--gpu", "RTX3090",
                       "--max-model-len", "8192")  # fmt: skip
    assert out["engine_version"] == "0.4.1" and "older than" not in out["version_detail"]
    assert out["logged"]["num_gpu_blocks"] == 2358 and out["logged"]["token_capacity"] == 2358 * 16
    assert out["predicted"]["kv_bytes_per_token"] == 131_072
    assert abs(out["estimated"]["implied_bytes"] - 1_765_936_202) <= 2_097_152  # within one block
    assert out["verdict"] == "match"
    # 38,784 planned (+2.8 %) until session 50; 39,296 (+4.2 %) since the v0.6 non-torch fit's constant fell from
    # 0.267 to 0.202 GiB with two held-out v0.6.6 starts: within #27's 5 %
    assert abs(out["predicted"]["token_capacity"] - 37_728) / 37_728 < 0.05


def test_v025_at_tp_above_1_is_refused_by_name() -> None:
    """vllm#2151 (v0.2.6 worker.py:50-56: TORCH_NCCL_AVOID_RECORD_STREAMS=1) cut Llama-70B's TP 8 peak from 25.5 to
    19.5 GiB: before it, v0.2.5's total − free charges the all-reduce inputs torch still holds (vllm#2031's 70B at
    TP 4: 13.1 GiB a rank beyond torch's peak), which has no form kvtop can state: the plan is refused, naming it."""

    def plan(version: str, tp: int) -> int:
        settings = parse_flags("vllm", ["--engine-version", version, "--tensor-parallel-size", str(tp)])
        found = planned_capacity(LLAMA2_7B, settings, gpu_total_bytes=gpu_total_bytes("A100-80GB"), gpu_name="A100-80GB")
        return found.ledger.token_capacity

    with pytest.raises(UnsupportedModelError, match="vllm#2151"):
        plan("0.2.5", 4)
    assert plan("0.2.6", 4) > 0  # the release that stopped the growth plans
    assert plan("0.2.5", 1) > 0  # one rank runs no all-reduce
