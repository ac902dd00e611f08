"""Hosts whose GPU memory is not the card's own: unified-memory devices and desktops sharing the card (#27).

Expected values come from logs, not from kvtop: TensorRT-LLM 1.1.0rc3's DGX Spark start printed `device total memory
119.70 GiB` and sized `86720` tokens (case-trtllm-dgxspark-gpt-oss-120b); vLLM's `Free memory on device (F/T GiB)`
lines of GB10 and Jetson Thor hosts give what the host held (T − F); vLLM v0.13.0's `MemorySnapshot.measure` names
the unified devices by compute capability ((8, 7) Orin, (11, 0) Thor, (12, 1) Spark); SGLang's RTX 3090 start under
WSL2 printed 22.76 GiB free of 23.58; lmdeploy#1703's Windows start sized 118 blocks of 64 tokens.
"""

from __future__ import annotations

import math

import pytest

from benchmarks.calibration.corpus import resolve
from benchmarks.calibration.desktop import desktop_excess, desktop_held
from benchmarks.calibration.evaluate import blind, fit_all
from kvtop.domain.calibration.estimate import CapacityPlan, engine_fits, planned_capacity
from kvtop.domain.calibration.host_memory import (
    DESKTOP_HELD_BYTES,
    DESKTOP_HELD_KEY,
    HOST_HELD_SHARE,
    HOST_HELD_SHARE_ERROR,
    host_held,
)
from kvtop.domain.calibration.plan_fits import desktop_held_bytes
from kvtop.domain.calibration.ranges import free_before_load_range
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import compute_capability, gpu_key, gpu_total_bytes, is_unified
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.calibration_fits import CORPUS, ONE_WORKER, corpus_fits
from tests.conftest import CONFIGS
from tests.data_paths import DATA

pytestmark = ONE_WORKER  # its fits are tests/calibration_fits.py's: made once per run

RECORDS = {record.id: record for records in CORPUS.values() for record in records}
SPARK = RECORDS["case-trtllm-dgxspark-gpt-oss-120b"]


def test_gb10_and_thor_totals_are_the_ones_their_logs_printed() -> None:
    assert abs(gpu_total_bytes("GB10") / GIB - 119.70) < 0.005  # `device total memory 119.70 GiB`
    assert gpu_total_bytes("DGX Spark") == gpu_total_bytes("GB10")
    assert abs(gpu_total_bytes("Jetson-Thor") / GIB - 122.82) < 0.005  # `(…/122.82 GiB) on startup`


@pytest.mark.parametrize(
    "name", ["Jetson-AGX-Orin-64GB", "Jetson AGX Orin", "Jetson Orin NX 16GB", "Jetson Orin Nano", "Orin"]
)
def test_a_jetson_orin_without_a_logged_total_asks_for_the_memory(name: str) -> None:
    """Every Orin board, named with its size or without, is the unified device kvtop holds no total of."""
    with pytest.raises(InputError, match="unified-memory device .* --gpu-memory"):
        gpu_total_bytes(name)


@pytest.mark.parametrize(
    ("name", "capability"),
    [("NVIDIA GB10", (12, 1)), ("NVIDIA Thor", (11, 0)), ("Orin", (8, 7)), ("Jetson AGX Orin 32GB", (8, 7)),
     ("Jetson AGX Orin", (8, 7)), ("Jetson Orin NX 16GB", (8, 7)), ("Jetson Orin Nano 8GB", (8, 7))],
)  # fmt: skip

def test_unified_devices_by_the_capabilities_vllm_names_them(name: str, capability: tuple[int, int]) -> None:
    assert is_unified(name)
    assert compute_capability(name) == capability


@pytest.mark.parametrize("name", ["GH200", "NVIDIA GH200 480GB", "H100", "GB200", "RTX3090"])
def test_gpus_with_their_own_memory_are_not_unified(name: str) -> None:
    """GH200's Hopper has its own HBM3, which CUDA reports (torch's `is_integrated` is false there)."""
    assert not is_unified(name)


# (total, free) of `Free memory on device (F/T GiB) on startup`, and TensorRT-LLM's 49.78 GiB outside torch; not
# `cuda:0 (56.65/119.7 GiB)`: a release that reads the kernel's available memory (the device named: v0.14.1 on), so
# the page cache free, and ~40 GiB of k8s pods on its node by its source (another tenant, in neither span). Its share,
# 63.05 / 119.7 = 52.67 %, was under the Thor's 64.89 / 122.82 = 52.83 %, so the span's ends are the same without it.
READINGS = [(119.7, 112.71), (119.7, 110.52), (119.7, 109.33), (119.7, 108.44), (119.7, 61.05),
            (119.70, 119.70 - 49.78), (122.82, 110.49), (122.82, 57.93)]  # fmt: skip
# the readings of releases that take the kernel's available memory (the page cache free) at their span's ends: a GB10
# host's `Free memory on device (115.95/121.69 GiB) on startup` (vLLM v0.27+, search-index id 58755311174), 5.74 GiB
# held, and a headless 121.69 GiB GB10 host's 22.8 GiB with a raised `vm.min_free_kbytes`
# (tonyd2wild/GLM-5.3-Flash-NVFP4-DFlash2-2x-DGX-Spark#19)
AVAILABLE_ENDS = [(121.69, 121.69 - 5.74), (121.69, 121.69 - 22.8)]


def span_centre(readings: list[tuple[float, float]]) -> float:
    """The centre of the shares (total − free) ÷ total the readings span: what a host is assumed to hold."""
    shares = [(total - free) / total for total, free in readings]
    return (min(shares) + max(shares)) / 2


def test_the_assumed_host_share_spans_every_reading_and_no_more() -> None:
    shares = [(total - free) / total for total, free in READINGS]
    low, high = HOST_HELD_SHARE - HOST_HELD_SHARE_ERROR, HOST_HELD_SHARE + HOST_HELD_SHARE_ERROR
    assert low <= min(shares) and max(shares) <= high
    assert min(shares) - low < 0.005 and high - max(shares) < 0.005


def _spark_plan(name: str | None, measured: MeasuredInputs) -> CapacityPlan:
    fits = corpus_fits(SPARK.source)
    return planned_capacity(SPARK.model, SPARK.settings, gpu_total_bytes=gpu_total_bytes("GB10"),  # type: ignore[arg-type]
                            gpu_name=name, measured=measured, fits=fits)  # fmt: skip


def test_the_dgx_spark_start_planned_as_a_unified_host_holds_its_logged_tokens() -> None:
    """As a card of its own (119.70 GiB given) the plan is some eight times the 86,720 tokens logged and its interval
    misses; as a GB10 the host's share is assumed, stated, and the interval holds the log's figure. The share's
    readings were taken after the engine's CUDA context (the 49.78 GiB outside torch after the load holds it), so the
    term is the whole share, the centre of the readings' span, and the plan's context term lies within it: error 0,
    not taken off the total again (session 72): the free memory before load is the total less the share alone."""
    assert SPARK.tokens == 86_720
    as_card = _spark_plan(None, MeasuredInputs(gpu_total_bytes=gpu_total_bytes("GB10")))
    assert as_card.token_capacity_min > 5 * SPARK.tokens
    plan = _spark_plan("GB10", MeasuredInputs())
    host, context = plan.estimate.term(Term.HOST), plan.estimate.term(Term.CONTEXT)
    share, error = host_held(gpu_total_bytes("GB10"))
    assert context is not None and context.bytes > 0 and context.error_bytes == 0 and context.in_host_share
    assert host is not None and host.source == "assumed" and host.error_bytes == error
    assert abs(host.bytes - span_centre(READINGS) * gpu_total_bytes("GB10")) < 0.01 * GIB  # 29.34 % of 119.70 GiB
    free = plan.ledger.measured.calibrated.free_before_load_bytes if plan.ledger.measured.calibrated else None
    assert free == gpu_total_bytes("GB10") - host.bytes
    assert plan.token_capacity_min <= SPARK.tokens <= plan.token_capacity_max
    assert plan.dominant is host
    assert any("what the host leaves to the GPU is assumed" in note for note in plan.estimate.host_notes)


def test_the_logged_host_share_of_the_dgx_spark_start_lies_in_the_assumption() -> None:
    """49.78 GiB outside torch after the load, less at most the engine's own context, is what the host held."""
    held, error = host_held(gpu_total_bytes("GB10"))
    assert held - error <= 49.78 * GIB <= held + error


def test_a_measured_free_memory_holds_the_hosts_share() -> None:
    plan = _spark_plan("GB10", MeasuredInputs(free_before_load_bytes=round((119.70 - 49.78) * GIB)))
    host = plan.estimate.term(Term.HOST)
    assert host is not None and host.bytes == 0 and host.source == "measured"


def test_vllm_on_a_unified_host_sizes_from_the_total_and_says_the_host_share() -> None:
    """vLLM's budget is the total × utilisation (its free memory only gates the start): no host term in it."""
    model = load_model(str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json"))
    # pinned to 0.33.0: from 0.34.0 the extensible KV cache sizes from the free memory (the host's share a term)
    settings = LaunchSettings(engine="vllm", gpu_memory_utilization=0.5, engine_version="0.33.0")
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("GB10"), gpu_name="GB10")
    given = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("GB10"), gpu_name="GB10",
                             measured=MeasuredInputs(free_before_load_bytes=60 * GIB))  # fmt: skip
    assert plan.estimate.term(Term.HOST) is None
    assert plan.ledger.token_capacity == given.ledger.token_capacity
    assert any("starts only where the host leaves what it asks free (at 0.5 × the total: " in note
               for note in plan.estimate.host_notes)  # fmt: skip
    # its figures are the start verdict's: 0.5 × 119.70 GiB = 59.85 GiB asked free, so 59.85 GiB left to the host
    assert plan.start is not None
    assert "vLLM needs 59.85 GiB free at its start (0.5 × 119.70 GiB), so the host may hold at most 59.85 GiB" in (
        plan.start.reason
    )


@pytest.mark.parametrize(
    "record_id", ["my-deepseek-r1-distill-qwen-7b-3090", "case-lmdeploy-1703-internlm-20b-w4-3090"]
)
def test_a_desktop_host_is_said_and_only_lowers_the_low_end(record_id: str) -> None:
    """The WSL2 and Windows starts: the same centre and high end, a lower low end, the log's figure inside."""
    record = RECORDS[record_id]
    fits = corpus_fits(record.source)

    def plan(desktop: bool) -> CapacityPlan:
        return planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,  # type: ignore[arg-type]
                                gpu_name=gpu_key(record.gpu), measured=MeasuredInputs(desktop=desktop), fits=fits)  # fmt: skip

    without, with_desktop = plan(False), plan(True)
    assert with_desktop.ledger.token_capacity == without.ledger.token_capacity
    assert with_desktop.token_capacity_max == without.token_capacity_max
    assert with_desktop.token_capacity_min < without.token_capacity_min
    assert with_desktop.token_capacity_min <= record.tokens <= with_desktop.token_capacity_max  # type: ignore[operator]
    assert any(
        note.startswith("memory the desktop holds (not modelled)")
        for note in with_desktop.estimate.host_notes
    )
    assert not without.estimate.host_notes


def test_the_desktop_share_holds_what_the_two_desktop_starts_held_beyond_linux() -> None:
    """The chain `DESKTOP_HELD_BYTES` states, as benchmarks/calibration/desktop.py computes it against the fits on
    every record. WSL2: the 3090 SGLang start printed 22.76 GiB free before its load; under WSL2 CUDA's total is the
    whole card, 24,576 MiB = 24.00 GiB (`gpu_totals.wsl2_total_estimate`; planned as the Linux fit's 23.58 until
    session 58), so 1.24 GiB was held: the desktop held that less the plan's context term. Windows: lmdeploy#1703 sized 118 blocks of 64 tokens (7,552
    logged) where the plan without the desktop sizes 119; a block of internlm-20b is 64 tokens × 60 layers × 2 (K, V)
    × 5,120 × 2 B = 75 MiB and TurboMind takes 0.8 of the free memory, so one block is 93.75 MiB of free memory: the
    most the desktop held and still left 118 blocks lies between one and two such steps. The share holds the larger,
    rounded up to the MiB (389 MiB at the end of session 51: 0.82 GiB held where the per-SM context fit gives about 0.44;
    903 MiB in session 58, the WSL2 start's total the whole card). The RTX 5080's vLLM start under WSL2: its source
    read '~14.6 GiB free at startup' of the whole 15.92 GiB, less one process's context (session 58: 1,047 MiB); the RTX
    3050 4 GB laptop card's likewise ('3.21/4.0 GiB' free at startup: 0.73 GiB beyond its context, session 58), and the
    RTX 3060's SGLang start under Docker Desktop by its pool (session 60)."""
    fits = corpus_fits()
    sglang = RECORDS["my-deepseek-r1-distill-qwen-7b-3090"]
    assert sglang.wsl2  # `host_os: wsl2`: Docker Desktop on WSL2
    plain = planned_capacity(sglang.model, sglang.settings, gpu_total_bytes=sglang.gpu_total_bytes,  # type: ignore[arg-type]
                             gpu_name=gpu_key(sglang.gpu), fits=fits, measured=sglang.host_measured())  # fmt: skip
    context = next(estimate.bytes for estimate in plain.estimate.terms if estimate.term is Term.CONTEXT)
    total = next(estimate.bytes for estimate in plain.estimate.terms if estimate.term is Term.CUDA_TOTAL)
    assert total == 24576 << 20 and round(sglang.figures["free_before_load"] / GIB, 2) == 22.76
    wsl2 = desktop_excess(sglang, fits)
    assert wsl2 == total - sglang.figures["free_before_load"] - context
    record = RECORDS["case-lmdeploy-1703-internlm-20b-w4-3090"]
    block = 64 * record.model.num_layers * 2 * record.model.hidden_size * 2  # type: ignore[union-attr]
    assert block == 75 << 20 and record.tokens == 118 * 64
    windows = desktop_excess(record, fits)
    assert windows is not None and block / 0.8 <= windows <= 2 * block / 0.8
    rtx5080 = RECORDS["file60166145902-qwen2.5-3b-rtx5080-wsl2-v0260"]  # vLLM sizes from the total: its free at start
    printed = desktop_excess(rtx5080, fits)
    assert printed is not None and printed < 16_303 * (1 << 20) - round(14.6 * GIB)  # less one process's context
    # the RTX 3050 4 GB laptop card's vLLM start under WSL2: 'Free memory on device (3.21/4.0 GiB) on startup', less
    # one process's context on its 16 SMs (session 58: the card's row made that context calibrated, not assumed)
    rtx3050 = RECORDS["file68393499563-qwen2.5-3b-awq-rtx3050-4gb-wsl2-v0110"]
    laptop = desktop_excess(rtx3050, fits)
    assert laptop is not None and laptop < 4_096 * (1 << 20) - round(3.21 * GIB)  # less one process's context
    # the RTX 3060 12 GB SGLang start under Docker Desktop (session 60): no free memory printed, so found like
    # lmdeploy#1703's by the pool it sized; at most what its source says the Windows desktop used at the preflight
    # ('3055 MiB in use is ordinary Windows desktop')
    rtx3060 = RECORDS["ghourimarti-travel-planner-qwen2.5-7b-awq-rtx3060-wsl2-mf055"]
    travel = desktop_excess(rtx3060, fits)
    assert travel is not None and 0 < travel <= 3055 << 20
    # TensorRT-LLM's GLM-4 engine on an RTX 4090 under WSL2 (session 62): 'total: 23.99 GiB, available: 12.22 GiB' when
    # it sized its KV cache, beside a 10,194 MiB engine: what the card held besides is at most 23.99 − 12.22 − 9.955 GiB,
    # the desktop's share that less the CUDA context
    glm4 = RECORDS["tritonbackend-issue625-glm-4-9b-chat-int8wo-4090-wsl2"]
    engine = desktop_excess(glm4, fits)
    assert engine is not None and 0 < engine <= round((23.99 - 12.22 - 10_194 / 1024) * GIB)
    most, found = desktop_held(CORPUS, fits)
    assert dict(found) == {sglang.id: wsl2, record.id: windows, rtx5080.id: printed, rtx3050.id: laptop,
                           rtx3060.id: travel, glm4.id: engine}  # fmt: skip
    assert most == math.ceil(max(wsl2, windows, printed, laptop, travel, engine) / (1 << 20)) << 20 == DESKTOP_HELD_BYTES


def test_what_vllm_asks_free_on_a_gb10_is_what_its_start_printed() -> None:
    """`Free memory on device cuda:0 (56.65/119.7 GiB) on startup is less than desired GPU memory utilization (0.92,
    110.12 GiB)` (search-index id 59813453928): the start needs 0.92 × 119.70 GiB free."""
    model = load_model(str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json"))
    # the start check is 0.33.0's (v0.34.0 skips it under the extensible KV cache, v1/worker/utils.py:783-797): pinned
    settings = LaunchSettings(engine="vllm", gpu_memory_utilization=0.92, engine_version="0.33.0")
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("GB10"), gpu_name="GB10")
    assert plan.start is not None and plan.start.needs_bytes == math.ceil(0.92 * gpu_total_bytes("GB10"))
    assert "vLLM needs 110.12 GiB free at its start (0.92 × 119.70 GiB)" in plan.start.reason


def test_the_gb10_start_vllm_refused_may_not_start_where_the_host_holds_what_it_is_assumed_to() -> None:
    """That start's line: the host may hold at most 119.7 − 110.12 = 9.58 GiB for 0.92 to start, and held 119.7 −
    56.65 = 63.05 GiB; the assumption's centre (a share of the total) is above 9.58 GiB and its low end below it, so
    the plan says it may not start (an assumed share is no refusal), not that it is refused."""
    model = load_model(str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json"))
    # the start check is 0.33.0's (v0.34.0 skips it under the extensible KV cache, v1/worker/utils.py:783-797): pinned
    settings = LaunchSettings(engine="vllm", gpu_memory_utilization=0.92, engine_version="0.33.0")
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("GB10"), gpu_name="GB10")
    assert HOST_HELD_SHARE * 119.7 > 119.7 - 110.12
    assert plan.start is not None and f"so the host may hold at most {119.70 - 110.12:.2f} GiB; " in plan.start.reason
    assert any("may not start: it starts at the assumed low end, not at the centre, as the start verdict states" in note
               for note in plan.estimate.host_notes)  # fmt: skip
    assert plan.start.reason.startswith("may not start: ") and not plan.start_refused


def test_readings_found_after_the_span_was_set_fall_inside_it() -> None:
    """Held out: headless GB10 hosts of 121.69 GiB, caches dropped, found 101.3 – 102.2 GiB free at vLLM's start
    (MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks#47); with `vm.min_free_kbytes` raised, 98.89 and 100.6 (#19 of
    tonyd2wild/GLM-5.3-Flash-NVFP4-DFlash2-2x-DGX-Spark)."""
    low, high = HOST_HELD_SHARE - HOST_HELD_SHARE_ERROR, HOST_HELD_SHARE + HOST_HELD_SHARE_ERROR
    for free in (101.3, 102.2, 98.89, 100.6):
        assert low <= (121.69 - free) / 121.69 <= high


def test_the_corpus_judges_its_desktop_starts_as_plan_desktop_plans_them() -> None:
    """The WSL2 and Windows starts carry `host: desktop`; the blind judge plans them with the desktop said. Since
    session 52 so do the two GTX 1080 starts (file19400629813-*-gtx1080-v064post1): their notes' nvidia-smi shows
    Xorg and gnome-shell on the card (the records' gpu_basis in tests/data/calibration/vllm.jsonl); since session 54
    an RTX 3060 Ti whose committed nvidia-smi shows Xorg and Firefox, and two WSL2 RTX 4090 starts; since session 55 two
    more GTX 1080 desktop starts of opt-125m (file19719842090, file19513493048) and an RTX 2060 12 GB under WSL2; since
    session 58 an RTX 3050 laptop and an RTX 5080 under WSL2; since session 60 one author's RTX 4090 lab notes (seven
    starts), an RTX 5060 Ti and an SGLang RTX 3060 under WSL2 (their sources say so: SOURCES.md, session 60); since
    session 61 an RTX 4090 class note under WSL2 and one author's SLO lab on a desktop RTX 4090 under WSL2 (ten starts:
    its README and ADRs say the Windows compositor shares the card); since session 63 three laptops under WSL2 (an
    RTX 3050, an RTX 4070's AWQ sweep, an RTX 4080's utilization sweep); since session 66 two more under WSL2 and a
    32 GB desktop card."""
    assert {record.id for record in RECORDS.values() if record.desktop} == {
        "my-deepseek-r1-distill-qwen-7b-3090",
        "case-lmdeploy-1703-internlm-20b-w4-3090",
        "case-vllm-13882-qwen2.5-7b-4bit-4060",
        "file19400629813-phi-1_5-gtx1080-v064post1",
        "file19400629813-llama-3.2-1b-gtx1080-v064post1",
        "file19719842090-opt-125m-gtx1080-v064post1",
        "file19513493048-opt-125m-gtx1080-v064post1",
        "file40791855483-qwen3-4b-rtx2060-12gb-v0",
        "romeon728-ledgerly-qwen2.5-3b-awq-rtx3060ti-v0300",
        "file61464053627-qwen3-8b-fp8-rtx4090-wsl2-v0271",
        "file61464053627-qwen3-14b-fp8-rtx4090-wsl2-v0271",
        "file68393499563-qwen2.5-3b-awq-rtx3050-4gb-wsl2-v0110",
        "file60166145902-qwen2.5-3b-rtx5080-wsl2-v0260",
        *(f"file61510271682-qwen2.5-7b-{kind}rtx4090-wsl2-v0271" for kind in ("", "fp8-dynamic-", "gptq-int4-")),
        *(f"file61585879089-qwen3-8b-{kind}rtx4090-wsl2-u0{share}-v0271" for kind in ("", "awq-") for share in (85, 90)),
        "file70376054105-qwen3-0.6b-rtx5060ti-wsl2-v0290",
        "ghourimarti-travel-planner-qwen2.5-7b-awq-rtx3060-wsl2-mf055",
        "file61815222665-qwen2.5-0.5b-rtx4090-wsl2-v0271-llmclass",
        *(f"kuotunyu-slolab-{run}-rtx4090-wsl2-{arm}-v0280" for run, arm in (
            ("qwen3-8b-fp8", "w1-u090"), ("qwen3-8b-awq", "w1-u090"), ("qwen3-8b", "w1-u090"), ("qwen3-4b", "w1-u090"),
            ("qwen3-8b-fp8", "w2-u090-s256"), ("qwen3-8b-fp8", "w2-u082-s256"), ("qwen3-8b-fp8", "w2-u082-s256-mbt8192"),
            ("qwen3-8b", "w2-u082-s40-closedloop"), ("qwen3-8b", "w2-u082-s40-openloop"),
            ("qwen3-8b-fp8-ngram3", "w4-u082-s256"))),
        # session 62: a desktop RTX 3060 (its report: 'desktop'), an RTX 5070 Ti and a GTX 1650 under WSL2, and
        # TensorRT-LLM's GLM-4 engine on an RTX 4090 under WSL2 (its total the whole card)
        *(f"file62571909065-qwen3-0.6b-rtx3060-desktop-v0190-eager-u0{share}" for share in (60, 75)),
        *(f"file56155919944-qwen3-{run}-rtx5070ti-wsl2-v0230" for run in ("8b-fp8", "8b-nvfp4", "14b-nvfp4")),
        "luoaini-sm75-qwen2.5-0.5b-gtx1650-wsl2-v0280",
        "tritonbackend-issue625-glm-4-9b-chat-int8wo-4090-wsl2",
        # session 63: an RTX 3050 Laptop, an RTX 4070 Laptop (one AWQ sweep, six starts) and an RTX 4080 Laptop (one
        # utilization sweep, nine starts), all under WSL2 (their sources say so: SOURCES.md, session 63)
        "damnkuldeep-qwen2.5-1.5b-awq-rtx3050-4gb-wsl2-v0110",
        *(f"file69415599131-qwen2.5-1.5b-instruct-rtx4080laptop-wsl2-v0230-{run}"
          for run in ("fp8-u085", "u033", "u036", "u040", "u045", "u055", "u065", "u075", "u085")),
        *(f"sanss-infra-lab-qwen3-8b-awq-rtx4070laptop-wsl2-v0171-{run}" for run in (
            "len1024-u082-seq1-b2048-eager", "len2048-u085-seq2-b2048-eager", "len2048-u085-seq2-b4096-eager",
            "len2048-u085-seq2-b4096-graphs", "len4096-u085-seq2-b2048-eager-triton-auto",
            "len4096-u085-seq2-b2048-eager-triton-fp8e4m3")),
        # session 66: an RTX 3050 Laptop and a GTX 1660 Ti (two starts) under WSL2, and a 32 GB desktop card driving
        # its display (two context lengths; their sources say so: SOURCES.md, session 66)
        "file70369044151-qwen2.5-1.5b-awq-rtx3050-laptop-wsl2-v0300",
        *(f"fillipeml-qlora-serving-lab-qwen2.5-0.5b-instruct-gtx1660ti-wsl2-v0310-{dtype}-u078"
          for dtype in ("float32", "float16")),
        *(f"file68519422180-qwen3.8-27b-fp8-rtx5090-desktop-v0280-mml{length}" for length in (16384, 7168)),
        # session 67: an RTX 5080 under WSL2 and an RTX 5070 Ti driving its desktop (their sources say so: SOURCES.md,
        # session 67 helper B)
        "file70436763134-qwen3-4b-rtx5080-wsl2-v0250-llm-u085",
        "file61758073700-medgemma-4b-it-rtx5070ti-desktop-v0110-u080",
        # session 68: an RTX 3060 Laptop in Docker Desktop under WSL2 (its report says so: SOURCES.md, session 68 C2)
        "kare0638-vgate-qwen2.5-1.5b-awq-rtx3060laptop-wsl2-v015-llmclass-eager",
        # session 70: an RTX 5060 Ti on a Windows desktop under Docker Desktop / WSL2, three starts (its repository says
        # so: SOURCES.md, session 70 helper A)
        "freshair129-prp-typhoon25-qwen3-4b-rtx5060ti-wsl2-v0290-u070",
        "freshair129-prp-typhoon25-qwen3-4b-rtx5060ti-wsl2-v0300-xinference-u090",
        "freshair129-prp-typhoon25-qwen3-4b-rtx5060ti-wsl2-v0300-xinference-u070-warm",
    }
    record = RECORDS["case-lmdeploy-1703-internlm-20b-w4-3090"]
    judged = blind(record, corpus_fits(record.source), weights_logged=False)
    plain = blind(
        resolve({**record.raw, "host": None}), corpus_fits(record.source), weights_logged=False
    )
    assert judged is not None and plain is not None and judged.truth == 7_552
    assert judged.low < plain.low and judged.predicted == plain.predicted and judged.covered


def test_a_desktop_with_the_free_memory_given_charges_nothing_more() -> None:
    """The WSL2 start printed 22.76 GiB free of the card's 24.00 before its load: given that figure the desktop's share is in
    it, so the low end is the one the same free memory plans without the desktop, and the note says so."""
    record = RECORDS["my-deepseek-r1-distill-qwen-7b-3090"]
    fits = corpus_fits(record.source)

    def plan(desktop: bool) -> CapacityPlan:
        measured = MeasuredInputs(desktop=desktop, free_before_load_bytes=round(22.76 * GIB))
        return planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,  # type: ignore[arg-type]
                                gpu_name=gpu_key(record.gpu), measured=measured, fits=fits)  # fmt: skip

    without, with_desktop = plan(False), plan(True)
    assert with_desktop.estimate.unmodelled_host_bytes == 0
    assert with_desktop.token_capacity_min == without.token_capacity_min
    assert any("is in the free memory given" in note for note in with_desktop.estimate.host_notes)


def test_the_free_memory_note_of_a_unified_host_names_the_hosts_share() -> None:
    """SGLang sizes from the free memory before load: on a GB10 its estimate is CUDA's total less the host's assumed
    share; from 0.5.4 it reads psutil's available memory there (srt/utils/common.py:461-467 at 0.5.4), which counts
    the page cache free: the centre of those readings' span (4.72 % – 18.74 %) × 119.70 = 14.0 GiB; 0.5.3rc0 reads
    cudaMemGetInfo's free (srt/utils.py:406), the page cache held: (5.84 % – 52.83 %) × 119.70 = 35.1 GiB. Those
    shares were read after the engine's context was made (`pre_model_load_memory` after the parallel groups,
    srt/distributed/bootstrap.py:132-137 at 0.5.18), so the context lies within the share: the free memory before
    load is the total × (1 − share), and the note names the share whole. A card of its own says no share."""
    model = load_model(str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json"))
    settings = LaunchSettings(engine="sglang")
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("GB10"), gpu_name="GB10")
    card = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    said = f"less what the host holds of its unified memory ({span_centre(AVAILABLE_ENDS) * 119.70:.1f} GiB, assumed"
    assert "(14.0 GiB, assumed" in said and any(said in note for note in plan.ledger.engine.notes)
    total, host = plan.estimate.term(Term.CUDA_TOTAL), plan.estimate.term(Term.HOST)
    assert total is not None and host is not None
    free = plan.ledger.measured.calibrated.free_before_load_bytes if plan.ledger.measured.calibrated else 0
    assert abs((free or 0) / GIB - 119.70 * (1 - span_centre(AVAILABLE_ENDS))) < 0.01
    old = planned_capacity(model, LaunchSettings(engine="sglang", engine_version="0.5.3rc0"),
                           gpu_total_bytes=gpu_total_bytes("GB10"), gpu_name="GB10")  # fmt: skip
    said_old = f"less what the host holds of its unified memory ({span_centre(READINGS) * 119.70:.1f} GiB, assumed"
    assert "(35.1 GiB, assumed" in said_old and any(said_old in note for note in old.ledger.engine.notes)
    assert not any("unified memory" in note for note in card.ledger.engine.notes)
    assert any(note.startswith("free memory before load is estimated") for note in card.ledger.engine.notes)


def test_each_desktop_start_is_judged_with_the_other_desktop_start_s_share() -> None:
    """The judgement holds the desktop share out like every other figure: the fits without one desktop start's source
    hold the most of the other starts' (`desktop_excess` of each, rounded up to the MiB: for the WSL2 SGLang start the
    RTX 5080's 1,047 MiB and lmdeploy#1703's 167, for lmdeploy#1703 the two WSL2 starts'), and fits of a corpus with no
    desktop start hold none (a plan's low end then takes nothing for the desktop); the product's fits hold the
    committed `DESKTOP_HELD_BYTES`. Session 58: the RTX 3050 laptop WSL2 start is the fourth (its card's row made its
    context calibrated); session 60: the RTX 3060 SGLang start under Docker Desktop the fifth; session 62: TensorRT-LLM's
    GLM-4 engine on an RTX 4090 under WSL2 the sixth, so each fold holds five."""
    starts = [RECORDS[record_id] for record_id in ("my-deepseek-r1-distill-qwen-7b-3090",
              "case-lmdeploy-1703-internlm-20b-w4-3090", "file60166145902-qwen2.5-3b-rtx5080-wsl2-v0260",
              "file68393499563-qwen2.5-3b-awq-rtx3050-4gb-wsl2-v0110",
              "ghourimarti-travel-planner-qwen2.5-7b-awq-rtx3060-wsl2-mf055",
              "tritonbackend-issue625-glm-4-9b-chat-int8wo-4090-wsl2")]  # fmt: skip
    for judged in starts:
        fold = corpus_fits(judged.source)
        excesses = [desktop_excess(other, fold) for other in starts if other is not judged]
        assert None not in excesses
        most = max(excess for excess in excesses if excess is not None)
        assert desktop_held_bytes(fold) == math.ceil(most / (1 << 20)) << 20
        assert fold[DESKTOP_HELD_KEY].records == 5 and fold[DESKTOP_HELD_KEY].sources == 5
    assert DESKTOP_HELD_KEY not in fit_all({"sglang": [r for r in CORPUS["sglang"] if not r.desktop]})
    assert desktop_held_bytes(engine_fits("sglang")) == DESKTOP_HELD_BYTES


def _gb10_plan(config: str, settings: LaunchSettings, measured: MeasuredInputs | None = None) -> CapacityPlan:
    model = load_model(str(CONFIGS / config))
    return planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("GB10"), gpu_name="GB10",
                            measured=measured)  # fmt: skip


def test_lmdeploy_on_a_gb10_charges_the_share_whole_its_context_within() -> None:
    """LMDeploy reads cudaMemGetInfo's free (the page cache held) and printed no reading on a unified host: its plan
    takes the span of the other engines' readings (5.84 % – 52.83 % of the total), whole, its own context assumed
    within it as theirs was (each read after the engine's context). The budget's host row, the host term and the
    unified note's figure are one figure; no context row takes it off again (review R3 D2)."""
    plan = _gb10_plan("meta-llama--Llama-3.1-8B-Instruct.json", LaunchSettings(engine="lmdeploy"))
    total, host, context = (plan.estimate.term(term) for term in (Term.CUDA_TOTAL, Term.HOST, Term.CONTEXT))
    unified = plan.estimate.unified_host
    assert total is not None and host is not None and context is not None and unified is not None
    assert abs(host.bytes - span_centre(READINGS) * total.bytes) < 0.01 * GIB  # 35.12 GiB of 119.70
    steps = {step.label: step for step in plan.ledger.engine.steps}
    row = steps["− held by the host (unified memory)"]
    assert row.bytes == -host.bytes and unified.held_bytes == host.bytes
    assert "− CUDA context, NCCL" not in steps
    # the context assumed at TP 1 where no fit reaches the GB10 (kvtop knows no SM count for it): 0.75 GiB
    assert context.in_host_share and "the CUDA context and NCCL (0.75 GiB, assumed) within it" in row.note
    weights = sum(-step.bytes for label, step in steps.items() if label.startswith("− weights") and step.bytes)
    assert steps["free after weights (least over ranks)"].bytes == total.bytes - host.bytes - weights


# `Free memory on device (F/121.69 GiB) on startup` of v0.27+ GB10 hosts (v1/worker/gpu_worker.py:766-785 at v0.27.1,
# the worker's first snapshot after `init_device`, its CUDA context and NCCL in it): search-index ids 58755311174,
# 69198182448, 68531280425
STARTUP_FREE_GIB = (115.95, 114.54, 105.9)


def test_vllm_0_34_on_a_gb10_sizes_from_a_free_memory_its_startup_lines_lie_in() -> None:
    """v0.34.0's extensible KV cache takes the free memory at the worker's start (extensible_kv.py), on a GB10 the
    kernel's available memory. Its releases' startup lines were read after the worker's context, so they lie in the
    plan's interval for that free memory, centred on 121.69 GiB × (1 − the span's centre): taken off again (0.55
    GiB, vllm.context), the least-held host's 115.95 GiB would lie above its high end."""
    measured = MeasuredInputs(gpu_total_bytes=round(121.69 * GIB))
    plan = _gb10_plan("Qwen--Qwen3-8B.json", LaunchSettings(engine="vllm", engine_version="0.34.0"), measured)
    context = plan.estimate.term(Term.CONTEXT)
    assert context is not None and context.in_host_share and context.error_bytes == 0
    span = free_before_load_range(plan.estimate)
    assert span is not None
    assert abs(span.value_bytes / GIB - 121.69 * (1 - span_centre(AVAILABLE_ENDS))) < 0.01
    assert all(span.low_bytes <= free * GIB <= span.high_bytes for free in STARTUP_FREE_GIB)
    start = next(step for step in plan.ledger.engine.steps if step.label.startswith("free at the worker's start"))
    assert start.bytes == span.value_bytes


def test_a_small_unified_host_takes_the_share_whole_at_both_ends() -> None:
    """A 7.4 GiB Jetson Orin Nano (review R3 D3): with the context taken off the share, 4.72 % of 7.4 GiB (0.35 GiB)
    lay below SGLang's assumed 0.75 GiB context, so the host term stopped at 0 and the interval's high end lost 0.40
    GiB, while the context's ± 1.25 GiB, which moves no free memory there, was named what to measure first. The share
    whole: the free memory before load is 7.4 GiB × (1 − the span's centre), its interval as wide on both sides,
    and the host's share is the dominant term."""
    model = load_model(str(DATA / "calibration" / "configs" / "google--gemma-3-1b-it.json"))
    total = round(7.4 * GIB)
    settings = LaunchSettings(engine="sglang", mem_fraction_static=0.8)
    plan = planned_capacity(model, settings, gpu_total_bytes=total, gpu_name="Jetson Orin Nano",
                            measured=MeasuredInputs(gpu_total_bytes=total))  # fmt: skip
    span = free_before_load_range(plan.estimate)
    assert span is not None
    assert abs(span.value_bytes / GIB - 7.4 * (1 - span_centre(AVAILABLE_ENDS))) < 0.005
    # the plan's own ends (each term's share of the combined error, none below 0): the host moves as far both ways
    low, central, high = (plan.estimate.figures(side).free_before_load_bytes for side in ("low", "central", "high"))
    assert low is not None and central == span.value_bytes and high is not None
    assert abs((high - central) - (central - low)) <= 2 and high > central
    assert plan.dominant is not None and plan.dominant.term is Term.HOST
