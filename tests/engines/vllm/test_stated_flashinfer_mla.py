"""DeepSeek-R1-0528 on 8 × H20-3e at vLLM 0.11.0 (`muma378-deepseek-r1-0528-8xh20-3e-tp8-v0110-u085`): a pip
install whose log shows FlashInfer's sampler, stated as the launch's install (`LaunchSettings.flashinfer`), so the
profile's sampler is FlashInfer's copies of the logits, not the native path's the plan centres on where the install is
not known (sampler_path.py INSTALL_READ_ERAS: v0.9.0 through v0.11.0).

Independent figures, the start's own log (tests/data/calibration/vllm.jsonl; search-index id 61863824022):
'[topk_topp_sampler.py:55] Using FlashInfer for top-p & top-k sampling.' on all eight ranks, 'Model loading took
79.5829 GiB', 'Available KV cache memory: 36.45 GiB', 'GPU KV cache size: 556,864 tokens'.
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.corpus_records import RECORDS, logged_gib
from tests.data_paths import CONFIGS

RECORD = "muma378-deepseek-r1-0528-8xh20-3e-tp8-v0110-u085"
LAUNCH = ("vllm serve /models/DeepSeek-R1-0528 --engine-version 0.11.0 --tensor-parallel-size 8 "
          "--gpu-memory-utilization 0.85 --no-enable-prefix-caching")  # fmt: skip
LOGGED_TOKENS = 556_864


def _plan(flashinfer: str | None):  # type: ignore[no-untyped-def]
    settings = parse_launch_command(LAUNCH)
    assert settings is not None
    settings = settings.model_copy(update={"flashinfer": flashinfer})
    model = load_config_file(CONFIGS / "deepseek-ai--DeepSeek-R1.json")
    return planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("H20-3E"), gpu_name="H20-3E")


def test_the_record_states_the_install_its_log_shows() -> None:
    record = RECORDS[RECORD]
    assert record["flashinfer"] == "installed"
    assert "Using FlashInfer for top-p & top-k sampling." in record["flashinfer_basis"]


def test_the_stated_install_plans_flashinfers_sampler_within_five_percent() -> None:
    plan = _plan("installed")
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and "the install holds FlashInfer" in activation.basis
    assert abs(plan.ledger.token_capacity / LOGGED_TOKENS - 1) < 0.05
    kv = float(logged_gib(f"{RECORD}:kv"))
    assert abs(plan.ledger.engine.kv_budget_bytes / GIB - kv) / kv < 0.05  # the log's 36.45 GiB


def test_the_unstated_install_keeps_the_native_centre_below_the_log() -> None:
    """Not stated, the centre is the native path's copies (1,024 rows of the 129,280-token vocabulary), 6 % or more
    below the logged tokens; the interval reaches FlashInfer's and holds them."""
    plan = _plan(None)
    assert plan.ledger.token_capacity < 0.95 * LOGGED_TOKENS
    assert plan.token_capacity_max >= LOGGED_TOKENS
