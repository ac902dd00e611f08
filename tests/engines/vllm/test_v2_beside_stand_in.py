"""From v0.29.0 the memory beside V2's profile is the V1 runner's graph figure read at the 256-seq stand-in grid, as
before v0.29.0 (v2_graphs.py "Not scaled with max_num_seqs"); V2's own measured graphs stay at the launch's grid.

Expected values from the starts' logs, not from kvtop: yuanjuju/vllm-lab's two cold v0.29.0 starts of Qwen3-8B (bf16
and AWQ) on a 48 GB RTX 4090 at `--max-num-seqs 8` printed their KV tokens (137,360 for bf16;
tests/data/calibration/vllm.jsonl). Read at the launch's 8 seqs the figure was 0.3 GiB smaller, and the plans +4.1 %
and +2.9 % over the logs; at the stand-in grid within 1 % (session 62), +2.6 and +1.9 % since the figure hides under
V2's counted peak (session 66): judged by issue #27's targets, within 5 % and inside the printed interval.
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import by_id
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.vllm.calibration import terms
from kvtop.domain.engines.vllm.v2_graphs import STAND_IN_SEQS

RECORDS = by_id()
COLD_AT_8_SEQS = (
    "yuanjuju-vllm-lab-qwen3-8b-rtx4090-48gb-v0290-graphs-cold",
    "yuanjuju-vllm-lab-qwen3-8b-awq-rtx4090-48gb-v0290-graphs-cold",
)


def _graphs(record_id: str, seqs: int | None = None) -> tuple[int, str]:
    inputs = RECORDS[record_id].inputs()
    if seqs is not None:
        inputs = inputs.model_copy(
            update={"settings": inputs.settings.model_copy(update={"max_running_requests": seqs})}
        )
    found = next(term for term in terms(inputs) if term.term == Term.CUDA_GRAPHS)
    return found.bytes, found.basis


@pytest.mark.parametrize("record_id", COLD_AT_8_SEQS)
def test_the_beside_figure_is_read_at_the_stand_in_grid(record_id: str) -> None:
    launch, basis = _graphs(record_id)
    assert RECORDS[record_id].settings.max_running_requests == 8
    assert f"read at vLLM's {STAND_IN_SEQS}-seq default grid" in basis
    # V2's own graphs at 8 seqs are fewer than at 256, the beside figure the same: the term at 8 seqs is below 256's
    at_grid, _ = _graphs(record_id, STAND_IN_SEQS)
    assert launch < at_grid


@pytest.mark.parametrize("record_id", COLD_AT_8_SEQS)
def test_the_cold_starts_at_8_seqs_plan_near_their_logs(record_id: str) -> None:
    from benchmarks.calibration.evaluate import blind
    from kvtop.domain.engines.vllm.calibration import _committed

    judged = blind(RECORDS[record_id], _committed(), weights_logged=False)
    assert judged is not None and judged.truth == RECORDS[record_id].tokens
    # +4.1 % / +2.9 % read at the launch's 8 seqs; +0.6 / +0.6 % at the stand-in grid on top of the forward; +2.6 / +1.9 %
    # hidden under V2's counted peak (session 66, v2_graphs.compile_above_peak: the compile ends before the forward runs).
    # The bounds are issue #27's targets (within 5 %, the interval holding the truth), not the plan's own figures
    assert abs(judged.predicted / judged.truth - 1) < 0.05
    assert judged.low <= judged.truth <= judged.high


def test_v2_lora_capture_cases_are_named_not_modelled() -> None:
    from kvtop.domain.engines.vllm.v2_graphs import v2_graphs_not_modelled

    inputs = RECORDS["file69057007511-qwen3-4b-2507-5090-v0290"].inputs()
    assert v2_graphs_not_modelled(inputs) is None  # plain V2 decoding: every graph it measures is counted
    flags = {**inputs.settings.flags, "enable-lora": True}
    with_lora = inputs.model_copy(update={"settings": inputs.settings.model_copy(update={"flags": flags})})
    said = v2_graphs_not_modelled(with_lora)
    assert said is not None and "LoRA capture cases" in said  # cudagraph_utils.py:118-134 at v0.29.0



@pytest.mark.parametrize("spelling", [
    '{"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_max": 4, "enable_adaptive_verification": true}',
    '{"method":"ngram","num_speculative_tokens":2,"prompt_lookup_max":4,"enable_adaptive_verification":true}',
])  # fmt: skip
def test_adaptive_verification_is_named_however_its_json_is_spaced(spelling: str) -> None:
    from kvtop.domain.calibration.inputs import CalibrationInputs
    from kvtop.domain.engines.versions import from_flag
    from kvtop.domain.engines.vllm.release_calendar import CALENDAR
    from kvtop.domain.engines.vllm.v2_graphs import v2_graphs_not_modelled
    from kvtop.domain.gpus import gpu_total_bytes
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.layout import ParallelLayout
    from kvtop.sources.hub import load_config_file
    from tests.data_paths import CONFIGS

    settings = parse_flags("vllm", ["--engine-version", "0.34.0", "--speculative-config", spelling])
    inputs = CalibrationInputs(model=load_config_file(CONFIGS / "Qwen--Qwen3-8B.json"), settings=settings,
                               layout=ParallelLayout(), gpu_name="H100", gpu_total_bytes=gpu_total_bytes("H100"),
                               version=from_flag("0.34.0", CALENDAR), weights_bytes=16 * 2**30, context_length=40960)  # fmt: skip
    said = v2_graphs_not_modelled(inputs)
    # `enable_adaptive_verification` (config/speculative.py:633 at v0.34.0) as json.loads reads it, compact or spaced
    assert said is not None and "adaptive verification's varlen decode graphs" in said
