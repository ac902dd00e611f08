"""FlashInfer's all-reduce + RMSNorm fusion workspace in vLLM's non-torch memory (fusion_workspace.py).

Expected figures come from elsewhere than the module: the token counts from llm-d-planner's v0.19.0 H100 logs
("Maximal number of tokens used by Flashinfer Allreduce Fusion: N", accuracy/results/v0.19.0/logs at d3121e0), the
buffer sizes from flashinfer v0.6.8's trtllm_ar.py arithmetic and SymmDeviceMemory's rounding (comm/mnnvl.py), the
non-torch figures from the corpus records of those starts (tests/data/calibration/vllm.jsonl).
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm import compilation
from kvtop.domain.engines.vllm import fusion_workspace as fw
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.layout import ParallelLayout
from kvtop.units import GIB

MIB = 1 << 20
RECORDS = {record.id: record for record in load("vllm")}


def _inputs(record_id: str, **update: object):  # type: ignore[no-untyped-def]
    return RECORDS[record_id].inputs().model_copy(update=update)


def test_the_token_counts_are_the_ones_the_v0_19_logs_print() -> None:
    # (hidden, TP) → the log line's tokens at max_num_batched_tokens 8,192 (Mistral-Small-24B, Llama-3.3-70B,
    # Llama-4-Scout, Llama-3.1-8B, Qwen2.5-7B, Kimi-VL-A3B's text model)
    printed = {(5120, 2): 6553, (8192, 2): 4096, (8192, 4): 128, (5120, 4): 204, (4096, 4): 256, (3584, 4): 292,
               (2048, 2): 8192}  # fmt: skip
    v019 = ResolvedVersion(text="0.19.0")
    for (hidden, tp), tokens in printed.items():
        assert fw.max_token_num(v019, hidden, 2, tp, 8192) == tokens
    assert fw.max_token_num(v019, 4096, 2, 3, 8192) is None  # FI_SUPPORTED_WORLD_SIZES: 2, 4, 8


def test_hopper_s_max_size_at_tp_8_is_half_a_mib_at_every_release_read() -> None:
    # FI_ALLREDUCE_FUSION_MAX_SIZE_MB[90][8] = 0.5 (allreduce_rms_fusion.py:58 at v0.19.0, :108 at v0.27.1 and
    # v0.33.0), not the field docstring's 1 MB: int(0.5 × 1,048,576) = 524,288 B
    for label in ("0.18.0", "0.19.0", "0.22.1", "0.27.1", "0.33.0"):
        assert fw.hopper_max_size(ResolvedVersion(text=label), 8) == 524_288
    # Llama-3.3-70B (hidden 8,192, bf16): 524,288 // (8,192 × 2) = 32 tokens; gpt-oss-120b (2,880): 524,288 // 5,760 = 91
    assert fw.max_token_num(ResolvedVersion(text="0.22.1"), 8192, 2, 8, 8192) == 32
    assert fw.max_token_num(ResolvedVersion(text="0.22.1"), 2880, 2, 8, 8192) == 91


def test_the_buffers_are_flashinfer_s_and_each_is_held_at_the_multicast_granularity() -> None:
    # trtllm_ar.py at TP 2, 8,192 tokens × 4,096: TP × tokens × hidden × 2 B; TP × 256 flags × 4 B; 3 Lamport copies
    sizes = fw.buffer_sizes(2, 8192, 4096)
    assert (
        sizes
        == (2 * 8192 * 4096 * 2, 2 * 256 * 4, 3 * 2 * 8192 * 4096 * 2)
        == (134_217_728, 2_048, 402_653_184)
    )
    # SymmDeviceMemory: each to 2 MiB, + the 2,048 B signal pad, to 2 MiB (130, 4 and 386 MiB), then to 512 MiB
    assert fw.held_bytes(sizes, multicast_granularity=2 * MIB) == (130 + 4 + 386) * MIB
    assert fw.held_bytes(sizes) == 3 * 512 * MIB
    # at TP 4 the buffers are 64 times smaller (256 tokens), and held the same
    assert fw.held_bytes(fw.buffer_sizes(4, 256, 4096)) == 3 * 512 * MIB


def test_the_workspace_is_most_of_what_tp_adds_to_the_v0_19_logs() -> None:
    tp1 = RECORDS["llmd-v019-llama-3.1-8b-tp1"].figures["non_torch"]
    workspace = 3 * 512 * MIB
    for record_id in ("llmd-v019-llama-3.1-8b-tp2", "llmd-v019-llama-3.1-8b-tp4", "llmd-v019-qwen2.5-72b-tp2",
                      "llmd-v019-kimi-dev-72b-tp4", "llmd-v019-mistral-small-w8a8-tp2"):  # fmt: skip
        inputs = RECORDS[record_id].inputs()
        found = fw.fusion_workspace(inputs, batch_limits(inputs)[0])
        assert found is not None and found.modelled and found.bytes == workspace
        # what TP adds beside it (0.31-0.45 GiB) is no more than v0.11.0 added with no workspace at all (0.42 at TP 2,
        # Llama-3.3-70B 0.55 against Llama-3.1-8B's 0.13 at TP 1) and a tenth of a GiB
        beside = RECORDS[record_id].figures["non_torch"] - tp1 - workspace
        v011 = (
            RECORDS["llmd-v011-llama-3.3-70b-fp8-tp2"].figures["non_torch"]
            - RECORDS["llmd-v011-llama-3.1-8b"].figures["non_torch"]
        )
        assert 0 < beside < v011 + GIB // 10


def test_no_workspace_where_the_pass_builds_none() -> None:
    tp2 = "llmd-v019-llama-3.1-8b-tp2"
    assert fw.fusion_workspace(_inputs("llmd-v019-llama-3.1-8b-tp1"), 8192) is None  # TP 1
    assert fw.fusion_workspace(_inputs("llmd-v019-llama-3.1-8b-pp2"), 8192) is None
    assert fw.fusion_workspace(_inputs(tp2, layout=ParallelLayout(tp=2, pp=2)), 8192) is None  # vllm#35426
    assert fw.fusion_workspace(_inputs(tp2, layout=ParallelLayout(tp=3)), 8192) is None
    assert fw.fusion_workspace(_inputs(tp2, gpu_name="A100-80GB"), 8192) is None  # Ampere: no fusion
    assert fw.fusion_workspace(_inputs(tp2, gpu_name="L40S"), 8192) is None
    assert fw.fusion_workspace(_inputs(tp2, version=ResolvedVersion(text="0.17.0")), 8192) is None
    eager = RECORDS[tp2].inputs()
    eager = eager.model_copy(update={"settings": eager.settings.model_copy(update={"enforce_eager": True})})
    assert fw.fusion_workspace(eager, 8192) is None
    for flags in ({"O0": True}, {"O": "1"}, {"optimization-level": "1"}):  # OPTIMIZATION_LEVEL_00 / _01
        level = RECORDS[tp2].inputs()
        level = level.model_copy(update={"settings": level.settings.model_copy(update={"flags": flags})})
        assert fw.fusion_workspace(level, 8192) is None
    at = RECORDS[tp2].inputs().version
    assert compilation.level({"O3": True}, at) == 3 and compilation.level({}, at) is None


def test_what_is_not_read_is_said_not_modelled() -> None:
    tp2 = "llmd-v019-llama-3.1-8b-tp2"
    configured = RECORDS[tp2].inputs()
    # a field kvtop does not read (PassConfig.fi_allreduce_fusion_max_size_mb sizes the workspace: config/compilation.py
    # :129 at v0.13.0); a stated fuse_allreduce_rms is read (test_compilation_aliases.py)
    flags = {"compilation-config": '{"pass_config": {"fi_allreduce_fusion_max_size_mb": {"2": 16}}}'}
    configured = configured.model_copy(
        update={"settings": configured.settings.model_copy(update={"flags": flags})}
    )
    for inputs in (
        _inputs(tp2, gpu_name="B200", version=ResolvedVersion(text="0.18.0")),  # v0.19.0-0.24.x: fusion_blackwell_trtllm
        configured,
    ):
        found = fw.fusion_workspace(inputs, 8192)
        assert found is not None and not found.modelled and found.bytes == 0 and "not" in found.why
    # a model without its config at hand holds as much (every buffer is below the granularity at Hopper's max sizes)
    found = fw.fusion_workspace(_inputs(tp2, model=None), 8192)
    assert found is not None and found.bytes == 3 * 512 * MIB


def test_from_v0_22_each_buffer_is_held_at_the_allocation_granularity() -> None:
    # torch's CUDASymmetricMemoryAllocator::alloc (flashinfer 0.6.10-0.6.14) and SymmDeviceMemory without multicast
    # (0.6.15 on): the buffer to 16 B, + the 2,048 B signal pad, to CU_MEM_ALLOC_GRANULARITY_RECOMMENDED (2 MiB).
    # Llama-3.1-8B at TP 2: 64 MiB ÷ (4,096 × 2 B) = 8,192 tokens; 2 × 8,192 × 4,096 × 2 B = 128 MiB -> 130 MiB,
    # 2 × 256 × 4 B = 2,048 B -> 2 MiB, 3 × 128 MiB = 384 MiB -> 386 MiB
    assert fw.allocation_held_bytes(fw.buffer_sizes(2, 8192, 4096)) == (130 + 2 + 386) * MIB
    # a buffer that fills its granules exactly less the pad still fits; one byte more takes one granule more
    assert fw.allocation_held_bytes((2 * MIB - 2048,)) == 2 * MIB
    assert fw.allocation_held_bytes((2 * MIB - 2047,)) == 4 * MIB
    tp2 = "llmd-v019-llama-3.1-8b-tp2"
    for version in ("0.22.0", "0.23.0", "0.24.0"):
        found = fw.fusion_workspace(_inputs(tp2, version=ResolvedVersion(text=version)), 8192)
        assert found is not None and found.modelled and found.bytes == 518 * MIB
        assert "(8,192 tokens × hidden 4,096)" in found.why and "518 MiB" in found.why
    # v0.21.0 (flashinfer 0.6.8.post1) still holds each at the 512 MiB multicast granularity
    found = fw.fusion_workspace(_inputs(tp2, version=ResolvedVersion(text="0.21.0")), 8192)
    assert found is not None and found.bytes == 3 * 512 * MIB
    # at TP 4 (2 MiB max size: 256 tokens × 4,096): 4 × 256 × 4,096 × 2 B = 8 MiB -> 10, 4 × 256 × 4 B -> 2,
    # 3 × 8 MiB = 24 MiB -> 26
    found = fw.fusion_workspace(
        _inputs("llmd-v019-llama-3.1-8b-tp4", version=ResolvedVersion(text="0.23.0")), 8192
    )
    assert found is not None and found.bytes == (10 + 2 + 26) * MIB


def test_the_fit_takes_the_rest_and_the_plan_adds_the_workspace_back() -> None:
    inputs = RECORDS["llmd-v019-llama-3.1-8b-tp2"].inputs()
    assert vllm.fit_offset("vllm.non_torch.v18", inputs) == 3 * 512 * MIB
    assert vllm.fit_offset("vllm.activation.v17", inputs) == 0
    assert vllm.fit_offset("vllm.non_torch.v18", RECORDS["llmd-v019-llama-3.1-8b-tp1"].inputs()) == 0
    # the era left unfitted
    fits = {key: fit for key, fit in vllm.FITS.items() if key != "vllm.non_torch.v18"}
    found = next(t for t in vllm.terms(inputs, fits) if t.term is Term.NON_TORCH)
    stand_in = vllm.FITS["vllm.non_torch.v1"]
    assert found.fit_key == "vllm.non_torch.v1"
    assert (
        found.bytes
        == max(stand_in.predict(vllm.fit_features("vllm.non_torch.v18", inputs) or ()), 0) + 3 * 512 * MIB
    )


def test_pipeline_and_data_parallel_gates_follow_the_release() -> None:
    """enable_allreduce_rms_fusion requires `data_parallel_size == 1 and pipeline_parallel_size == 1` at v0.18.0 …
    v0.20.x (config/vllm.py:131-134 at v0.19.0, :134-137 at v0.20.0), has neither at v0.21.0 (:119-139), gates PP
    again at v0.23.0 (:129-156) and neither at v0.24.0 (:131-151). Llama-3.1-8B at TP 2: 8,192 tokens × 4,096, so
    3 × 512 MiB at the multicast granularity (flashinfer 0.6.8.post1, v0.21.0) and 130 + 2 + 386 = 518 MiB at the
    allocation granularity (v0.23.0 on)."""
    tp2 = "llmd-v019-llama-3.1-8b-tp2"
    found = {}
    for version in ("0.20.0", "0.21.0", "0.23.0", "0.24.0"):
        for name, layout in (("pp", ParallelLayout(tp=2, pp=2)), ("dp", ParallelLayout(tp=2, dp=2))):
            workspace = fw.fusion_workspace(_inputs(tp2, layout=layout, version=ResolvedVersion(text=version)), 8192)
            found[version, name] = workspace.bytes // MIB if workspace is not None else None
    assert found == {("0.20.0", "pp"): None, ("0.20.0", "dp"): None, ("0.21.0", "pp"): 1536, ("0.21.0", "dp"): 1536,
                     ("0.23.0", "pp"): None, ("0.23.0", "dp"): 518, ("0.24.0", "pp"): 518, ("0.24.0", "dp"): 518}


def test_where_vllm_builds_none_the_workspace_is_zero_with_the_reason() -> None:
    """No FI_ALLREDUCE_FUSION_MAX_SIZE_MB row, no pass (allreduce_rms_fusion.py:54-70 at v0.19.0: rows 90, 100, 103;
    v0.18.0 :54-65: 90, 100; config/vllm.py's default takes 9.0 and family 100, exactly 10.0 at v0.18.0): an RTX PRO
    6000 (12.0) at v0.19.0, stated true or not, and a GB300 (10.3) at v0.18.0 hold 0. --enforce-eager turns
    compilation off (config/vllm.py:787-793 at v0.18.0: mode NONE), so a stated true runs no pass either."""
    tp2 = "llmd-v019-llama-3.1-8b-tp2"
    true = {**RECORDS[tp2].inputs().settings.flags, "compilation-config.pass_config.fuse_allreduce_rms": "true"}
    settings = RECORDS[tp2].inputs().settings
    cases = (
        (_inputs(tp2, gpu_name="RTXPRO6000"), "12.0"),
        (_inputs(tp2, gpu_name="RTXPRO6000", settings=settings.model_copy(update={"flags": true})), "12.0"),
        (_inputs(tp2, gpu_name="GB300", version=ResolvedVersion(text="0.18.0")), "10.3"),
        (_inputs(tp2, settings=settings.model_copy(update={"flags": true, "enforce_eager": True})), "--enforce-eager"),
    )
    for inputs, reason in cases:
        found = fw.fusion_workspace(inputs, 8192)
        assert found is not None and found.modelled and found.bytes == 0 and reason in found.why


K2_TP2 = "file68717835392-k2-horizon-32b-2xh100-tp2-v0300-len131072"
K2_TP4 = "file68717835392-k2-horizon-32b-4xh100-tp4-v0300-len524288"


def test_from_v0_25_hopper_takes_mnnvl_on_one_node_with_trtllm_as_its_fallback() -> None:
    # flashinfer_all_reduce.py _resolve_fi_ar_backend: "mnnvl" on one node, trtllm where mnnvl's workspace cannot be
    # made (v0.27.1 :134-135, v0.30.0 :156-157, v0.31.0 :165-166; v0.33.0 :162-163 "MNNVL decodes faster than TRTLLM
    # on single-node NVSwitch systems ... on H200 and B200"). From v0.27.0 mnnvl's workspace is one McastGPUBuffer
    # (flashinfer 0.6.18.post1 comm/trtllm_mnnvl_ar.py:104-154): 3 × max(one-shot, two-shot) + the 2,048 B signal pad,
    # to 2 MiB and then to the multicast granularity (comm/mnnvl.py:1015-1035), 512 MiB on the H100.
    # K2-Horizon-32B (hidden 5,120, BF16) at TP 4 on H100, max_num_batched_tokens 8,192: 2 MiB ÷ 10,240 B = 204 tokens;
    # one-shot min(1 MiB ÷ (4 × 2 × 5,120) = 25, 204) × 5,120 × 4 × 2 = 1,024,000 B, two-shot 2 × ceil(204 ÷ 4) × 4 ×
    # 5,120 × 2 = 4,177,920 B; 3 × 4,177,920 = 12,533,760 B -> 12 MiB -> 512 MiB
    found = fw.fusion_workspace(RECORDS[K2_TP4].inputs(), 8192)
    assert found is not None and found.modelled and found.bytes == 512 * MIB
    # the trtllm fallback's three buffers: 4 × 204 × 5,120 × 2 B = 8,355,840 -> 8 MiB, 4 × 256 × 4 B -> 2 MiB,
    # 3 × 8,355,840 = 25,067,520 -> 24 MiB
    assert found.other_bytes == (8 + 2 + 24) * MIB and "falls back to trtllm" in found.why
    # at TP 2: 64 MiB ÷ 10,240 B = 6,553 tokens; two-shot 2 × 3,277 × 2 × 5,120 × 2 = 134,205,440 B; × 3 =
    # 402,616,320 B -> 386 MiB -> 512 MiB; trtllm's: 2 × 6,553 × 5,120 × 2 B = 134,184,960 -> 128 MiB, 2 MiB of
    # flags, 3 × 134,184,960 -> 384 MiB: 514 MiB
    found = fw.fusion_workspace(RECORDS[K2_TP2].inputs(), 8192)
    assert found is not None and found.bytes == 512 * MIB and found.other_bytes == 514 * MIB
    # v0.25.0-v0.26.x (flashinfer 0.6.13 / 0.6.14, torch symmetric memory): the request + pad at 2 MiB alone
    for version in ("0.25.0", "0.26.0"):
        found = fw.fusion_workspace(_inputs(K2_TP2, version=ResolvedVersion(text=version)), 8192)
        assert found is not None and found.bytes == 386 * MIB
        found = fw.fusion_workspace(_inputs(K2_TP4, version=ResolvedVersion(text=version)), 8192)
        assert found is not None and found.bytes == 12 * MIB and found.other_bytes == 34 * MIB
    # v0.24.0: trtllm on one node, no fallback kept
    found = fw.fusion_workspace(_inputs(K2_TP4, version=ResolvedVersion(text="0.24.0")), 8192)
    assert found is not None and found.bytes == 34 * MIB and found.other_bytes == 0
    # Llama-3.1-8B at TP 2 at v0.33.0: 8,192 tokens, 3 × 2 × 4,096 × 4,096 × 2 B = 384 MiB -> 512 MiB; trtllm 518
    found = fw.fusion_workspace(_inputs("llmd-v019-llama-3.1-8b-tp2", version=ResolvedVersion(text="0.33.0")), 8192)
    assert found is not None and found.bytes == 512 * MIB and found.other_bytes == 518 * MIB
    # where multicast is not read (H20, H800, GH200), trtllm's bytes stay charged
    found = fw.fusion_workspace(_inputs(K2_TP4, gpu_name="H20"), 8192)
    assert found is not None and found.bytes == 34 * MIB and found.other_bytes == 0


def test_gpt_oss_at_tp_8_on_the_h200_holds_twenty_mib_at_v0_22() -> None:
    # 91 tokens × 2,880: one-shot 8 × 91 × 2,880 × 2 = 4,193,280 B (+ 2,048 pad → 6 MiB), flags 8 × 256 × 4 = 8,192 B
    # (→ 2 MiB), Lamport 3 × 4,193,280 = 12,579,840 B (+ 2,048 → 12 MiB): 20 MiB (34 MiB with 1 MB's 182 tokens)
    inputs = RECORDS["heyram74-inferencex-gpt-oss-120b-h200-tp8-v0221"].inputs()
    found = fw.fusion_workspace(inputs, batch_limits(inputs)[0])
    assert found is not None and found.modelled
    assert found.bytes == (6 + 2 + 12) * MIB == 20_971_520
