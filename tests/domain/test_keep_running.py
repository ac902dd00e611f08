"""The co-tenant's other way out (kvtop.domain.keep_running): leave it running, move the engine's memory flag.

The node of tests/diagnose_node.py: Meta-Llama-3-70B at TP8 on eight H100s (81,559 MiB, 512 MiB
driver-reserved as NVML reads it; the GPU model is not named). A restart of SGLang (which sizes every rank by the
least free GPU) starts from the plan's own pre-load free, the figure its explained pool stands on, less what others
hold now; vLLM's finds what NVML leaves free less its context at its calibrated figure (docs/calibration.md), with
several ranks 0.525946 + 0.875165 GiB (`vllm.context`). Every figure below is re-solved by
`predict` with the free memory written out by hand, and the share's bounds by SGLang's and vLLM's own
arithmetic:

- SGLang keeps `pre-load × (1 − mem_fraction_static)` as its runtime reserve; its automatic share here is
  0.818, so the reserve it keeps itself is pre-load × 0.182. A share kvtop proposes may take the reserve
  less than 1 GiB (`Thresholds.reserve_excess_bytes`) below that.
- vLLM refuses to start when a GPU has less free than `ceil(total × gpu_memory_utilization)`.
"""

from __future__ import annotations

import math

from kvtop.commands.node_source import DemoSource
from kvtop.domain.diagnose import diagnose
from kvtop.domain.diagnose_findings import AlternativeLimit
from kvtop.domain.incident import incident
from kvtop.domain.ledger import predict
from tests.calibrated_figures import llama_70b_co_tenant_tokens
from tests.diagnose_node import GIB, H100, MIB, RESERVED, co_tenant, llama, node, only, sglang_capacity

AUTO = 0.818  # SGLang 0.5.9's automatic share for Llama-3-70B at TP8 on H100 (test_diagnose pins it)
# The plan's own pre-load free (`predict` with nothing measured: the total less kvtop's default context,
# DEFAULT_CONTEXT_BYTES = 1 GiB): 81,559 − 1,024 = 80,535 MiB before the weights. NVML's 512 MiB reserve is not
# CUDA's: a restart read as NVML free + processes − context was another figure for the same restart (session 46)
SGLANG_RESTART = H100 - GIB
VLLM_RESTART = H100 - RESERVED - round((0.525946 + 0.875165) * GIB)


def test_sglang_raises_its_share_only_as_far_as_its_own_reserve_allows() -> None:
    """6 GiB on GPU 3: a restart with the notebook left running has 80,535 − 6,144 = 74,391 MiB free. At 0.83 the
    reserve is that × 0.17, 0.012 × 74,391 MiB = 0.87 GiB below SGLang's own (× 0.182); at 0.84 it would be
    0.022 × 74,391 MiB = 1.60 GiB below: 0.83 is the most it may take."""
    plan = llama()
    assert plan.engine.memory_fraction == AUTO
    finding = only(diagnose(node(plan, others={3: (co_tenant(9001, 6 * GIB),)})), "co_tenant")
    alternative = finding.alternative
    assert alternative is not None
    left = SGLANG_RESTART - 6 * GIB
    assert left / MIB == 81_559 - 1_024 - 6_144
    assert (0.83 - AUTO) * left < GIB <= (0.84 - AUTO) * left  # the hand bound: 0.87 GiB, then 1.60 GiB
    assert (alternative.share, alternative.limit) == (0.83, AlternativeLimit.RESERVE)
    assert alternative.fix == "--mem-fraction-static 0.83" and alternative.flag == "--mem-fraction-static"
    assert alternative.tokens == sglang_capacity(plan, left, mem_fraction_static=0.83)
    assert alternative.restart_tokens == sglang_capacity(plan, left)  # the automatic share, as launched
    assert alternative.stopped_tokens == sglang_capacity(plan, SGLANG_RESTART)
    assert alternative.gain_tokens == alternative.tokens - alternative.restart_tokens > 0
    assert alternative.reserve_bytes == round(left * (1 - 0.83))
    assert alternative.reserve_needed_bytes == round(left * (1 - AUTO))
    assert alternative.pids == (9001,) and alternative.engine_id == "sglang:4242"
    assert alternative.settings.mem_fraction_static == 0.83
    assert alternative.describe().startswith(
        f"keep pid 9001 running and restart sglang:4242 with --mem-fraction-static 0.83: +{alternative.gain_tokens:,} "
        f"tokens per rank over a restart as launched ({alternative.tokens:,} against {alternative.restart_tokens:,}, "
        "both with the processes held now); "
        f"runtime reserve {left * 0.17 / GIB:.2f} GiB (SGLang keeps {left * 0.182 / GIB:.2f} GiB itself)"
    )


def test_a_share_below_sglangs_own_is_raised_to_the_least_that_gives_every_token_back() -> None:
    """At --mem-fraction-static 0.7, stopping the notebook gives 80,535 MiB × 0.7 of budget back; with it
    left running the share must be 0.7 × 80,535 ÷ 74,391 = 0.7578 or more: 0.76 reaches it, 0.75 does
    not, and its reserve (74,391 MiB × 0.24 = 17.4 GiB) is above SGLang's own."""
    plan = llama("sglang", "--mem-fraction-static", "0.7")
    finding = only(diagnose(node(plan, others={3: (co_tenant(9001, 6 * GIB),)})), "co_tenant")
    alternative = finding.alternative
    assert alternative is not None
    left = SGLANG_RESTART - 6 * GIB
    assert 0.75 < 0.7 * SGLANG_RESTART / left < 0.76
    assert (alternative.share, alternative.limit) == (0.76, AlternativeLimit.REACHED)
    stopped = sglang_capacity(plan, SGLANG_RESTART)
    assert alternative.stopped_tokens == stopped
    assert alternative.tokens == sglang_capacity(plan, left, mem_fraction_static=0.76) >= stopped
    assert sglang_capacity(plan, left, mem_fraction_static=0.75) < stopped
    assert alternative.restart_tokens == sglang_capacity(plan, left)


def test_vllm_lowers_its_share_to_the_largest_it_starts_with() -> None:
    """vLLM budgets 0.92 × total whatever is free: with 6 GiB held it would not start (81,559 − 512 −
    1,434.7 − 6,144 = 73,468.3 MiB free < 0.92 × 81,559 MiB); the largest hundredth that starts is
    floor(73,468.3 ÷ 81,559 × 100) = 0.90 — the share the restart_will_not_fit finding names too."""
    plan = llama("vllm")
    found = diagnose(node(plan, others={3: (co_tenant(9001, 6 * GIB),)}))
    alternative = only(found, "co_tenant").alternative
    assert alternative is not None
    left = VLLM_RESTART - 6 * GIB
    assert left < math.ceil(H100 * 0.92) and math.floor(left / H100 * 100) == 90
    # "0.9": the share floored to two decimals above (90 %), as vLLM's parser reads it back with type=float (v0.11.0
    # wheel, engine/arg_utils.py:764-765 `--gpu-memory-utilization`)
    assert (alternative.fix, alternative.limit) == ("--gpu-memory-utilization 0.9", AlternativeLimit.START)
    assert float(alternative.fix.split()[1]) == 0.90
    assert alternative.restart_tokens == 0  # as launched it would not start
    at_090 = predict(plan.model, plan.settings.model_copy(update={"gpu_memory_utilization": 0.90}), gpu_total_bytes=H100)
    assert alternative.tokens == at_090.token_capacity
    assert only(found, "restart_will_not_fit").fix == alternative.fix  # one share for one question
    assert "(as launched it would not start)" in alternative.describe()


def test_no_alternative_where_no_share_beats_a_restart_as_launched() -> None:
    """vLLM with 2 GiB held still starts at 0.92 and budgets the same (advice, no alternative); LMDeploy's
    demo runs --cache-max-entry-count 0.9, above its own 0.8: kvtop does not raise it further."""
    vllm = only(diagnose(node(llama("vllm"), others={3: (co_tenant(9001, 2 * GIB),)})), "co_tenant")
    assert vllm.alternative is None
    lmdeploy = DemoSource.open("llama70b-tp4-lmdeploy").collect_at(0)
    tenant = only(diagnose(lmdeploy), "co_tenant")
    assert tenant.tokens > 0 and tenant.alternative is None


def test_the_incident_line_offers_it_and_shortens_by_width() -> None:
    """The demo incident: the sentence ends with the alternative; narrower, the same facts in fewer words."""
    snapshot = DemoSource.open("llama70b-tp8-foreign-gpu3").collect_at(0)
    found = diagnose(snapshot)
    tenant = only(found, "co_tenant")
    alternative = tenant.alternative
    assert alternative is not None and alternative.fix == "--mem-fraction-static 0.83"
    answer = incident(snapshot, found)
    assert answer.sentence.endswith(
        "— stop it, then restart sglang:41000 to recover them; or keep it and restart with "
        f"--mem-fraction-static 0.83 to win back {alternative.gain_tokens:,} tokens per rank"
    )
    # the demo's co-tenant costs every rank what 6 GiB less pre-load free takes from SGLang's pool (tests/calibrated_
    # figures.py: 6 GiB × 0.818 ÷ 40,960 B = 128,660.3, the two pools floored to whole tokens, from the demo node's
    # measured CUDA total: 128,660 or 128,661 by where the floors fall)
    lost = llama_70b_co_tenant_tokens(8, 6 * GIB)
    assert 6 * GIB * AUTO / 40_960 - 1 < lost < 6 * GIB * AUTO / 40_960 + 1
    assert tenant.tokens == lost
    assert answer.within(200) == (
        f"GPU 3 (rank TP3 of sglang:41000) loses {lost:,} tokens to pid 4242 (python, 6.00 GiB) — "
        "stop it, then restart sglang:41000; or --mem-fraction-static 0.83"
    )
    # the cause's cost as what pid 4242 takes, never a signed '−128,660' beside the GPU row's own '−122k tok' (the
    # rank's gap against its clean plan, kvtop's miss in it): two figures that read as one gap
    assert answer.within(130) == (
        f"GPU 3 loses {lost:,} tokens to pid 4242 (python, 6.00 GiB): stop it, then restart sglang:41000; "
        "or --mem-fraction-static 0.83"
    )
    assert answer.within(123) == (
        f"GPU 3 (rank TP3 of sglang:41000) loses {lost:,} tokens to pid 4242 (python, 6.00 GiB) — stop it, then restart sglang:41000"
    )
    assert answer.within(90) == f"GPU 3 loses {lost:,} tokens to pid 4242 (python): stop it, then restart sglang:41000"
    assert answer.within(50) == f"GPU 3 loses {lost:,} tokens to pid 4242: stop it"
    assert answer.within(40) == f"GPU 3 loses {lost:,} tokens to pid 4242"
    assert answer.within(20) == f"GPU 3 loses {lost:,} tokens to pid 4242"[:19] + "…"
    assert not any(f"−{lost:,}" in form for form in answer.forms)
    assert all(len(answer.within(width)) <= width for width in range(1, 300))


def test_a_restart_as_launched_is_the_engines_explained_pool_with_the_same_processes() -> None:
    """One figure for one question: with the same 6 GiB held as when it started, a restart as launched is the
    explained pool (the engine line's "predicted", the FP8 advice's base, the planner's before): SGLang's pool from
    the plan's pre-load (81,559 − 1,024 MiB) less the 6 GiB. It was NVML's 81,559 − 512 MiB reserved − SGLang's
    context fit, another basis for the same restart (session 46: 1,093,320 beside 1,093,278 on the demo)."""
    plan = llama()
    snapshot = node(plan, others={3: (co_tenant(9001, 6 * GIB),)})
    explained = snapshot.engines[0].explained
    assert explained is not None
    alternative = only(diagnose(snapshot), "co_tenant").alternative
    assert alternative is not None
    assert alternative.restart_tokens == explained.token_capacity == sglang_capacity(plan, SGLANG_RESTART - 6 * GIB)
    assert "both with the processes held now" in alternative.describe()
