"""The live node composed from fakes at its seams: a fake pynvml module, a recorded process
table, an httpx MockTransport for the engines' endpoints and a model loader of presets."""

from __future__ import annotations

import math
from pathlib import Path

import httpx
import pynvml
import pytest

from kvtop.commands.node_source import DemoSource, LiveSource, open_node_source
from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.engines.vllm.calibration import FITS as VLLM_FITS
from kvtop.domain.errors import InputError, KvtopError
from kvtop.domain.model import ModelSpec
from kvtop.domain.observe import EndpointState, NodeObservation, NvmlState
from kvtop.sources.hub import load_model
from kvtop.sources.nvml import NvmlSource
from kvtop.units import GIB
from tests.data_paths import CASES, SAMPLES
from tests.fakes.fake_process_table import (
    CONTAINER_PID_MIB,
    SGLANG_SERVER_PID,
    VLLM_SERVER_PID,
    two_engine_node,
    vllm_tp8_node,
    vllm_tp8_node_with_api_server,
)
from tests.fakes.fake_pynvml import MIB, FakeGpu, FakePynvml

GPT_OSS = "openai/gpt-oss-120b"


def fake_nvml_of(node: NodeObservation, **options) -> FakePynvml:
    """A fake pynvml module that reports `node`'s GPUs and processes again."""
    gpus = [
        FakeGpu(name=g.name, uuid=g.uuid, pci_bus_id=g.pci_bus_id, total=g.total_bytes, used=g.used_bytes,
                free=g.free_bytes, reserved=g.reserved_bytes, compute=[(p.pid, p.used_bytes) for p in g.processes])
        for g in node.gpus
    ]  # fmt: skip
    return FakePynvml(gpus, driver_version=node.driver_version or "550.90.07", **options)


class CountingLoader:
    """Presets for the hub ids the recorded nodes run; anything else goes to the real loader."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, ref: str, *, override: ConfigOverride | None = None) -> ModelSpec:
        self.calls.append(ref)
        return load_model("gpt-oss-120b" if ref == GPT_OSS else ref, override=override)


def refused() -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    return httpx.Client(transport=httpx.MockTransport(answer))


def live_two_engine_node(**options) -> tuple[LiveSource, CountingLoader]:
    node, table = two_engine_node()
    loader = CountingLoader()
    source = LiveSource(nvml=NvmlSource(nvml_module=fake_nvml_of(node)), table=table, model_loader=loader,
                        http_client=refused(), **options)  # fmt: skip
    return source, loader


def test_live_source_joins_nvml_processes_endpoints_and_predictions() -> None:
    source, _ = live_two_engine_node()
    snapshot = source.collect()
    assert snapshot.source == source.label == "nvml"
    sglang, vllm = (snapshot.engines[0], snapshot.engines[1])
    assert sglang.engine.engine_id == f"sglang:{SGLANG_SERVER_PID}"
    assert sglang.ledger is None
    assert "/path/to/Qwen3-235B-A22B-FP8" in sglang.ledger_error and "not found" in sglang.ledger_error
    assert [(r.gpu_index, r.observed.process_bytes, r.predicted) for r in sglang.ranks] == [
        (0, 9752 * MIB, None),
        (1, 9752 * MIB, None),
    ]
    assert vllm.engine.engine_id == f"vllm:{VLLM_SERVER_PID}"
    # gpt-oss-120b, --max-num-batched-tokens 1024, A100 80 GB (81,920 MiB), the latest release (0.34.0: blocks of
    # 64, its default): a request needs 2,048 full blocks + cdiv(127 + 2 × 1024, 64) + 1 = 35 sliding-window blocks
    # (two batches in flight: async scheduling, vLLM's default) = 2,083 of the blocks the clean prediction leaves: ceil(0.95 × CUDA's total), CUDA's total
    # measured as NVML v2 reports it (81,920 MiB less the 557 MiB reserved, the fake's fb-memory-observations.csv
    # figures: `gpu_total_origin.engine_visible_total`), less the weights — the checkpoint's (`_gpt_oss_120b_book`), the
    # padding vLLM's Marlin MXFP4 backend builds on an SM 8.0 GPU (weights_built.py: every expert padded from
    # 2,880 × 2,880 to 2,944 × 3,072, 4-bit weights and a scale byte per 32, over 36 layers × 128 experts × 3
    # matrices), and beside the book the rope's cos/sin cache every vLLM rank holds (131,072 positions × 64 rotary
    # dims in float32 for gpt-oss; Marlin repacks in place, so nothing else beside) — and the runtime terms: the
    # activation fit `vllm.activation.v17` (tests/calibrated_figures.py: the dummy run's 1,024 × 2,880 bf16 hidden
    # states, 256 seqs × 201,088 float32 logits, the MoE transient of 1,024 tokens × 4 experts × (3 × 2,880 +
    # 2,880) × 2 B), non-torch memory (`vllm.non_torch.v18`, TP 1: no all-reduce) and the CUDA-graph estimate (the
    # latest release captures vLLM's default 51 PIECEWISE and 35 FULL sizes, charged as the fit of
    # `vllm.cuda_graphs` over the first capture and the graphs beyond each mode's first × the 36 layers ÷ 1000); the
    # latest release samples
    # with FlashInfer's top-k/top-p on the A100's compute capability 8.0 (vllm#40376, sampler_path.py), so the
    # activation fit's copies of the logits beyond one, (coefficient − 1) × 256 seqs × 201,088 × 4 B, come off the
    # activation: at the fits of 6063712d 8,357,448,083 B of KV, 3,542 blocks of 2,359,296 B, 222,879 tokens
    marlin_padding = 36 * 128 * 3 * (2_944 * 3_072 - 2_880 * 2_880) * (4 + 8 / 32) / 8
    rope_cache = 131_072 * 64 * 4
    [padding_row] = [row for row in vllm.ledger.ranks[0].weights.rows if row.component == "expert_padding"]
    assert padding_row.bytes == marlin_padding == 5_504_827_392
    assert vllm.ledger.measured.calibrated.weights_extra_bytes == rope_cache == 33_554_432
    assert vllm.ledger.weights_bytes == _gpt_oss_120b_book(1) + marlin_padding + rope_cache == 70_787_197_568
    (per_node,) = VLLM_FITS["vllm.cuda_graphs"].coefficients  # per graph counted (the first capture too) × layer
    v2_graphs = round(per_node * (1 + 34) * 36 / 1000 * GIB)  # V2's own form: the first capture, FULL beyond the first
    non_torch = round(VLLM_FITS["vllm.non_torch.v18"].coefficients[0] * GIB)
    # the latest release runs gpt-oss on V2's runner, which from v0.29.0 takes its measured graphs off beside what its
    # profile held (gpu_worker.py:606-610 at v0.29.0): the V1 graph figure stands for what the profile held, and V2's
    # measured graphs come on top in V2's own form, every PIECEWISE graph measured and FULL alone extrapolated
    # (cudagraph_utils.py:718-831 at v0.29.0; v2_graphs.py since 3ea961bd, which moved this test from the figure
    # twice): the fit on the 34 FULL graphs beyond the first × 36 layers ÷ 1000; and V2's sampler keeps 256 seqs × 201,088 int32 token counts and two bitmasks of ⌈201,088 ÷ 32⌉ = 6,284 int32
    # words a seq, charged from v0.27.0 (v2_sampler_state.py, sample/penalties.py:32-40)
    sampler_state = 256 * 201_088 * 4 + 2 * 256 * 6_284 * 4
    assert sampler_state == 218_783_744
    # Session 65 (D's V2 warm-up pass, 25f08254, merged f9a08217) counts V2's dummy sampler again from v0.33.0
    # (v2_profile.py V2_SAMPLER_COUNTED): its warm-up pass holds, beside the 256 × 201,088 bf16 logits, a float32 copy
    # and FlashInfer's masked copy and softmax (3 × 4 B), with the forward's (1,024 + 256) × 2,880 bf16 rows held
    # across, so the activation is V2's last-stage peak, 728,072,192 B (was the V1 fit's 803,859,221: −75,787,029 B);
    # the V1 graph figure joins the forward's side (v2_graphs.compile_above_peak), so the sampler's lead over the forward
    # (the MoE transient above and 2 × 1,024 × 2,880 bf16 held rows: 106,168,320 B) hides 621,903,872 B of it
    # (−621,903,872 B). non_kv 2,388,621,794 → 1,690,930,893 B. Session 66: the compile the figure stands for ends before
    # the compiled forward runs (piecewise_backend.py:189-190, decorators.py:674-681 at v0.29.0), so the whole counted
    # peak hides it (v2_graphs.profile_peak), the forward too (−106,168,320 B): 1,584,762,573 B; 1,572,492,453 B on the
    # session-66 refit of the graph and non-torch fits; 1,578,241,696 B on session 67's regenerated fits (8a2613b0);
    # 1,582,870,983 B on session 68's (87d89b77, 448480f9: `vllm.cuda_graphs` 0.238832, `vllm.non_torch.v18` read
    # by name above; the counted activation unchanged).
    activation = 256 * 201_088 * (2 + 3 * 4) + (1_024 + 256) * 2_880 * 2
    forward = 1_024 * 4 * (3 * 2_880 + 2_880) * 2 + 2 * 1_024 * 2_880 * 2
    assert (activation, forward) == (728_072_192, 106_168_320)
    assert vllm.ledger.measured.calibrated.activation_bytes == activation
    flashinfer = 0  # the warm-up pass's FlashInfer copies are counted in the V2 peak above, not taken off a fit
    # Session 69: what stands beside V2's profile is the cold compile's combo-kernel benchmark copy of the embedding
    # table (compile_benchmark.py), 201,088 × 2,880 × 2 B, no longer the V1 graph figure; above the counted peak as before
    table = 201_088 * 2_880 * 2
    graphs_charged = max(table - activation, 0)
    assert graphs_charged == 430_194_688
    runtime = graphs_charged + v2_graphs + activation + non_torch + sampler_state
    # session 69's refit (2564963f): `vllm.cuda_graphs` 0.238832 → 0.239585, V2's graphs 0.239585 × 35 × 36 ÷ 1000 GiB
    # = 324,138,068 B (+1,018,745 B over 0.238832's 323,119,323): 1,956,419,507 → 1,957,438,252 B; session 70's refit:
    # 0.239685 × 35 × 36 ÷ 1000 GiB = 324,273,359 B (+135,291 B) and the non-torch fit read by name above +22,693,533 B:
    # 1,980,267,076 B; session 72's refit (5f9ab079): 0.241427 × 35 × 36 ÷ 1000 GiB = 326,630,137 B (+2,356,778 B)
    assert v2_graphs == 326_630_137
    # 1,980,267,076 B before session 72's refit: +2,356,778 B of V2's graphs
    assert vllm.ledger.measured.calibrated.non_kv_bytes == runtime == 1_982_623_854
    cuda_total = (81_920 - 557) * MIB
    budget = math.ceil(0.95 * cuda_total) - vllm.ledger.weights_bytes - runtime
    # 0.34.0's extensible KV cache takes the least of that and the free memory at the worker's start (CUDA's total
    # less the context, `vllm.context`'s constant at TP 1) less what stays and a margin of max(1 GiB, 0.75 × the
    # activation peak) (extensible_kv_cache.py measure_kv_cache_bytes, kvtop's extensible_kv.py): here the request
    context = round(VLLM_FITS["vllm.context"].coefficients[0] * GIB)
    headroom = cuda_total - context - max(GIB, int(0.75 * (activation - flashinfer))) - vllm.ledger.weights_bytes - runtime
    assert budget < headroom and vllm.ledger.engine.kv_budget_bytes == budget
    # a block of 64 tokens (four of 16's) is 4 × 589,824 B over the 18 layer slots the two attention groups share
    # (18 full + 18 sliding-window layers, one tensor a slot: 64 tokens × 2 × 8 KV heads × 64 × 2 B = 131,072 B a
    # slot's block), each slot mapped in whole 2 MiB granules by 0.34.0's extensible cache (extensible_kv_cache.py:304-318
    # blocks_within: n × page ≤ ⌊available ÷ (slots × granule)⌋ × granule)
    assert 18 * 131_072 == 4 * 589_824
    assert budget // (18 * 2 * MIB) * (2 * MIB) // 131_072 == vllm.ledger.engine.num_blocks
    assert vllm.ledger.token_capacity == vllm.ledger.engine.num_blocks * 131_072 // 2_083
    assert vllm.ledger.gpu_total_bytes == 81_920 * MIB and vllm.ledger.kv_bytes_per_token == 73_728
    [rank] = vllm.ranks
    assert (rank.gpu_index, rank.pid, rank.observed.process_bytes) == (2, 2332308, 75_172 * MIB)
    assert rank.observed.foreign_bytes == 4_770 * MIB  # the co-tenant on the same GPU
    # the rank's prediction is the explained ledger's rank (no log here: the ledger's own), and at 0.34.0 the
    # co-tenant's 4,770 MiB come off the free memory at the worker's start, which then binds below the request
    assert headroom - 4_770 * MIB < budget
    # its blocks in whole 2 MiB granules of each of the 18 slots (above)
    rank_blocks = (headroom - 4_770 * MIB) // (18 * 2 * MIB) * (2 * MIB) // 131_072
    assert rank.predicted.token_capacity == rank_blocks * 131_072 // 2_083 < vllm.ledger.token_capacity
    assert vllm.engine.live.state is EndpointState.UNREACHABLE
    assert "not visible" in snapshot.notice
    assert snapshot.observation.unattributed_bytes_by_gpu() == {1: CONTAINER_PID_MIB * MIB}


def _gpt_oss_120b_book(tp: int) -> int:
    """gpt-oss-120b's checkpoint on one rank at TP `tp`, by hand from its config (tests/data/configs/
    openai--gpt-oss-120b.json: hidden 2,880, 36 layers, 64 heads and 8 KV heads of 64, 128 experts of intermediate
    2,880, vocab 201,088): the embedding and the LM head, each 201,088 ÷ tp × 2,880 bf16; per layer the QKV
    projection and its bias ((4,096 + 2 × 512) ÷ tp rows), o_proj and its whole bias, the attention sinks (64 ÷ tp),
    two norms, the router and its bias in bf16, the experts' w13 and w2 in MXFP4 (4 bits and a scale byte per 32)
    with their bf16 biases; the final norm."""
    q, kv = 4_096 // tp, 512 // tp
    layer = ((q + 2 * kv) * (2_880 + 1) + 2_880 * q + 2_880 + 64 // tp + 2 * 2_880 + 128 * 2_880 + 128) * 2
    experts = 128 * 3 * (2_880 // tp) * 2_880 * (4 + 8 / 32) / 8 + 128 * (2 * 2_880 // tp + 2_880) * 2
    return int(2 * 201_088 // tp * 2_880 * 2 + 36 * (layer + experts) + 2_880 * 2)


def test_ledgers_are_predicted_once_per_model_and_settings() -> None:
    source, loader = live_two_engine_node()
    first, second = source.collect(), source.collect()
    assert sorted(loader.calls) == ["/path/to/Qwen3-235B-A22B-FP8", GPT_OSS]
    assert first.engines[1].ledger is second.engines[1].ledger


def test_an_engine_log_supplies_the_token_capacity_the_endpoints_did_not() -> None:
    log = CASES / "vllm/lmcache-1739-qwen3-14b/engine.log"  # logs `GPU KV cache size: 42,656 tokens`
    snapshot = live_two_engine_node(engine_log=log)[0].collect()
    vllm = snapshot.engines[1]
    assert [rank.observed.token_capacity for rank in vllm.ranks] == [42_656]
    assert any("engine log" in note for note in vllm.engine.live.notes)
    assert [rank.observed.token_capacity for rank in snapshot.engines[0].ranks] == [
        None,
        None,
    ]  # not the SGLang one


def test_a_live_nodes_logged_start_is_kept_in_the_calibration_store_once() -> None:
    """Issue 27 item 4: a live engine given its log keeps what the start measured, as `kvtop explain` does.
    The log printed `Available KV cache memory: 6.51 GiB`; vLLM's charge besides weights and KV is then
    0.95 × CUDA's total − the weights − 6.51 GiB, CUDA's total the one the live prediction sizes from: NVML v2's
    81,920 MiB less the 557 MiB reserved (the fake's fb-memory-observations.csv figures), not NVML's own total. The weights are the book's on an A100: gpt-oss-120b's
    65,248,815,744 B (the router's bias in bf16) and the row of vLLM's Marlin MXFP4 expert padding (weights_built.py:
    36 layers × 128 experts × 3 × (2,944 × 3,072 − 2,880 × 2,880) × (4 + 8 ÷ 32) ÷ 8 = 5,504,827,392 B)."""
    from kvtop.domain.calibration.terms import Term

    kept: list = []
    source = live_two_engine_node(engine_log=CASES / "vllm/lmcache-1739-qwen3-14b/engine.log", remember=kept.append)[0]
    source.collect(), source.collect()
    (measure,) = kept  # once: the log does not change while the node is watched
    assert (measure.engine, measure.gpu, measure.tp, measure.model_type) == ("vllm", "A100-80GB", 1, "gpt_oss")  # NVML's A100-SXM4-80GB
    marlin_padding = 36 * 128 * 3 * (2_944 * 3_072 - 2_880 * 2_880) * (4 + 8 / 32) / 8
    weights = 65_248_815_744 + marlin_padding
    cuda_total = (81_920 - 557) * MIB
    runtime = int(0.95 * cuda_total) - weights - int(6.51 * 2**30)
    assert measure.terms[Term.CUDA_TOTAL] == cuda_total
    assert abs(measure.terms[Term.ACTIVATION] - runtime) < 0.005 * 2**30  # the log's two decimals of GiB


def test_a_store_that_cannot_be_written_says_so_once() -> None:
    source = live_two_engine_node(engine_log=CASES / "vllm/lmcache-1739-qwen3-14b/engine.log",
                                  remember=lambda measure: "cannot write /ro/calibration.jsonl (read-only)")[0]  # fmt: skip
    assert "cannot write /ro/calibration.jsonl" in source.collect().notice
    assert "cannot write" not in (source.collect().notice or "")


def test_a_missing_engine_log_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no such file: "):
        live_two_engine_node(engine_log=Path("/nonexistent/engine.log"))


def test_endpoint_capacity_wins_over_the_log() -> None:
    node, table = vllm_tp8_node()
    page = (SAMPLES / "vllm_metrics/v1-nim-qwen3-vl-235b-awq-tp2-grep-fragment.txt").read_text()
    client = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(200, text=page)))
    source = LiveSource(nvml=NvmlSource(nvml_module=fake_nvml_of(node)), table=table, model_loader=CountingLoader(),
                        engine_log=CASES / "vllm/lmcache-1739-qwen3-14b/engine.log", http_client=client)  # fmt: skip
    view = source.collect().engines[0]
    # gpt-oss-120b at TP 8 on H100s: vLLM's Triton MXFP4 backend on Hopper builds the intermediate 2,880 ÷ 8 = 360
    # padded to 384 — in 4-bit weights and their scales and w13's bf16 bias rows, the book's row (weights_built.py:
    # 14,112,768 B a layer) — and holds beside the book the swizzled copy of the scales (HopperMXScaleLayout pads
    # the rows to 256: w13 [128, 768, 90], w2 [128, 3072, 12]) beside the checkpoint's, which stay registered, and
    # float32 expert biases in place of the book's bf16 ones (w13's eighth and its padded rows, w2's whole, as the
    # engines' meta-built w2_weight_bias [128, 2880]): 14,499,840 B a layer (vllm/weights_held.py); together
    # 36 × 28,612,608 = 1,030,053,888 B; with the router's bias bf16 (mlp.router.bias [128] bfloat16, as the
    # engines build it) beside the checkpoint (`_gpt_oss_120b_book`) and the rope's float32 cos/sin cache on every
    # rank (131,072 positions × 64 dims × 4 B) they take the weights' share of ceil(0.95 × CUDA's total), CUDA's total
    # measured as NVML v2 reports it (81,559 MiB less the 336 MiB reserved: the fake's nvidia-smi figures,
    # h100-sxm-8gpu-host-q-d-memory-id0.txt; `gpu_total_origin.engine_visible_total`). vLLM's non-torch memory from v0.18 at
    # TP > 1 is FlashInfer's all-reduce + RMSNorm fusion workspace (fusion_workspace.py: min(1 MiB ÷ (2,880 × 2 B),
    # 1,024) = 182 tokens at TP 8, the one-shot buffer, the barrier flags and the three Lamport buffers each with its
    # 2,048 B signal pad rounded to 2 MiB: 8 + 2 + 24 = 34 MiB) and the fit of `vllm.non_torch.v18` for the rest
    # (0.259317 + 0.360092 GiB with the custom all-reduce at the fits of a7014c84, whose refit moved the all-reduce
    # coefficient from 0.371933: 713,451,110 B before): 700,736,933 B; the activation fit `vllm.activation.v17`
    # (tests/calibrated_figures.py: the dummy run's 1,024 × 2,880 bf16 hidden states, 1,024 seqs × 201,088 float32
    # logits, the MoE transient of 1,024 tokens × 4 experts × (3 × 2,880 ÷ 8 + 2,880) × 2 B) less the copies of the
    # logits beyond one, (coefficient − 1) × 1,024 seqs × 201,088 × 4 B, as the latest release samples with
    # FlashInfer's top-k/top-p on the H100 (vllm#40376, sampler_path.py); the latest release's CUDA-graph estimate is
    # the fit of `vllm.cuda_graphs` over vLLM's default 51 PIECEWISE and 35 FULL sizes (its 256-seq grid, below):
    # (50 + 34) × 36 layers ÷ 1000, and V2's measured graphs, the fit on the 50 FULL beyond the first × 36 ÷ 1000
    # (v2_graphs.py). At the fits of 6063712d 229,893 blocks of 64 tokens at 4 × 73,728 B (the latest release,
    # 0.34.0: its default block), 2,048 + cdiv(127 + 2 × 1024, 64) + 1 = 2,083 blocks a request (2 batches of
    # --max-num-batched-tokens 1024 in flight)
    experts = 128 * 3 * 2_880  # gate, up and down, per unit of intermediate
    bias_rows = 128 * 2 * (384 - 360) * 2  # w13's padded bias rows in bf16
    padding = experts * (384 - 360) * (4 + 8 / 32) / 8 + bias_rows
    book_biases = 128 * (5_760 / 8 + 2_880) * 2
    swizzled_scales = 128 * 768 * 90 + 128 * 3_072 * (384 // 32)
    # from 0.25.0 the checkpoint's scales are freed once swizzled (fused_moe/oracle/mxfp4.py:1153-1156; 0.34.0
    # store_params_in_triton): only the swizzled copy's padding beside the book's (until session 66: 14,499,840 B)
    checkpoint_scales = 128 * 768 * 90 + 128 * 2_880 * (384 // 32)
    held = swizzled_scales - checkpoint_scales + 128 * (2 * 384 + 2_880) * 4 - book_biases - bias_rows
    assert (padding, held, padding + held) == (14_112_768, 1_228_800, 15_341_568)
    [padding_row] = [row for row in view.ledger.ranks[0].weights.rows if row.component == "expert_padding"]
    assert padding_row.bytes == 36 * padding
    rope_cache = 131_072 * 64 * 4
    assert view.ledger.measured.calibrated.weights_extra_bytes == 36 * held + rope_cache == 77_791_232
    weights = _gpt_oss_120b_book(8) + 36 * (padding + held) + rope_cache
    assert view.ledger.weights_bytes == weights == 8_788_958_912
    (per_node,) = VLLM_FITS["vllm.cuda_graphs"].coefficients  # per graph counted (the first capture too) × layer
    # the V1 figure beside V2's profile read at vLLM's 256-seq default grid (v2_graphs.stand_in, from v0.29.0 too since
    # session 62): "PIECEWISE=51 (largest=512), FULL=35 (largest=256)" at 256 seqs, 50 + 34 beyond the first (the 0.19.1
    # A100-40GB start's line, vllm.jsonl file57978845466-qwen3-8b-a100-40gb-v0191)
    v2_graphs = round(per_node * (1 + 50) * 36 / 1000 * GIB)  # V2's own form: the first capture, FULL beyond the first
    non_torch_fit = VLLM_FITS["vllm.non_torch.v18"].coefficients
    workspace = (8 + 2 + 24) << 20  # FlashInfer's fusion workspace at TP 8 (182 tokens × 2,880)
    non_torch = round((non_torch_fit[0] + non_torch_fit[1]) * GIB) + workspace
    assert non_torch == 700_736_933  # session 67's refit (700,738,007 at session 66's)
    sampler_state = 1_024 * 201_088 * 4 + 2 * 1_024 * 6_284 * 4  # V2's sampler state from v0.27.0, as above
    assert sampler_state == 875_134_976
    # V2 from v0.29.0: the V1 graph figure for what its profile held, and its measured graphs in V2's own form beside
    # Session 65: D's V2 warm-up pass (25f08254) makes the activation V2's last-stage peak, the 1,024 × 201,088 bf16
    # logits with the warm-up's float32 copy and FlashInfer's two (3 × 4 B) and (1,024 + 1,024) × 2,880 bf16 rows:
    # 2,894,594,048 B, whose lead over the forward (MoE transient above + 2 × 1,024 × 2,880 × 2 B = 44,236,800 B)
    # hides all 770,340,352 B of the V1 graph figure (v2_graphs.compile_above_peak): 5,700,929,023 → 4,932,670,168 B
    # (−768,258,855); F2's Hopper mnnvl workspace (fusion_workspace.py: from v0.25.0 Hopper's FlashInfer all-reduce
    # is one McastGPUBuffer at the 512 MiB multicast granularity, not the 34 MiB above): +478 MiB = +501,219,328 B,
    # 4,932,670,168 → 5,433,889,496 B.
    non_torch += (512 - 34) * MIB
    activation = 1_024 * 201_088 * (2 + 3 * 4) + (1_024 + 1_024) * 2_880 * 2
    forward = 1_024 * 4 * (3 * 2_880 // 8 + 2_880) * 2 + 2 * 1_024 * 2_880 * 2
    assert (activation, forward) == (2_894_594_048, 44_236_800)
    assert view.ledger.measured.calibrated.activation_bytes == activation
    flashinfer = 0  # the warm-up pass's FlashInfer copies are counted in the V2 peak above, not taken off a fit
    # session 66: the whole counted peak hides the figure (v2_graphs.profile_peak); session 69: the figure is the cold
    # compile's copy of the rank's embedding table (compile_benchmark.py), 201,088 ÷ 8 × 2,880 × 2 B, hidden as well
    graphs = max(201_088 // 8 * 2_880 * 2 - activation, 0)
    runtime = activation + non_torch + graphs + v2_graphs + sampler_state
    # 5,437,701,267 B on the session-66 refit of the graph and non-torch fits; 5,440,548,852 B on session 67's;
    # 5,442,516,299 B on session 68's (87d89b77, 448480f9: the fits read by name above, the activation counted);
    # 5,444,000,755 B on session 69's (2564963f: `vllm.cuda_graphs` 0.238832 → 0.239585, V2's graphs 0.239585 × 51 × 36
    # ÷ 1000 GiB = 472,315,470 B, +1,484,456 B over 470,831,014); 5,444,197,894 B on session 70's (0.239685 × 51 × 36
    # ÷ 1000 GiB = 472,512,609 B, +197,139 B); session 72's (5f9ab079: 0.241427 × 51 × 36 ÷ 1000 GiB = 475,946,771 B,
    # +3,434,162 B)
    assert v2_graphs == 475_946_771
    # 5,444,197,894 B before session 72's refit: +3,434,162 B of V2's graphs
    assert view.ledger.measured.calibrated.non_kv_bytes == runtime == 5_447_632_056
    budget = math.ceil(0.95 * (81_559 - 336) * MIB) - weights - runtime
    # 0.34.0's extensible KV cache: the request binds below the free memory at the worker's start (CUDA's total less
    # the context, `vllm.context` at TP 8 of an MoE model: all three of its terms) less the margin, max(1 GiB, 0.75 ×
    # the activation peak) (extensible_kv_cache.py measure_kv_cache_bytes, kvtop's extensible_kv.py)
    context = round(sum(VLLM_FITS["vllm.context"].coefficients) * GIB)
    peak = activation - flashinfer
    assert budget < (81_559 - 336) * MIB - context - max(GIB, int(0.75 * peak)) - weights - runtime
    # in whole 2 MiB granules of each of the 18 layer slots the two attention groups share (18 full + 18 sliding-window
    # layers, one tensor a slot, as above; extensible_kv_cache.py:304-318 blocks_within): a block of 64 tokens is
    # 64 × 2 × 1 KV head × 64 × 2 B = 16,384 B a slot at TP 8 (4 × 73,728 B ÷ 18). Was written over 36 layers of
    # 8,192 B, which gives the same blocks only at an even granule count: 66,209,458,178 B is 1,753 granules a slot
    # (876.97 of the 36-layer form), 1,753 × 128 = 224,384 blocks
    assert 18 * 16_384 == 4 * 73_728
    blocks = int(budget // (18 * 2 * MIB) * (2 * MIB) // 16_384)
    assert view.ledger.engine.num_blocks == blocks
    assert len(view.ranks) == 8 and view.ledger.token_capacity == blocks * 131_072 // 2_083
    assert {rank.observed.token_capacity for rank in view.ranks} == {551_520}


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (pynvml.NVMLError_LibraryNotFound, "no NVIDIA driver (NVML library not found)"),
        (pynvml.NVMLError_DriverNotLoaded, "no NVIDIA driver (kernel driver not loaded)"),
    ],
)
def test_no_driver_falls_back_to_the_demo_node_only_for_the_tui(error, reason: str) -> None:
    """The TUI may show the demo node, saying so; a headless caller gets one line naming --demo."""
    source = open_node_source(
        None, nvml=NvmlSource(nvml_module=FakePynvml([], init_error=error)), demo_without_driver=True
    )
    assert isinstance(source, DemoSource) and source.label == "demo:llama70b-tp8-sglang"
    snapshot = source.collect()
    assert snapshot.notice == f"{reason}: a demo node"  # the scenario is the source's label, named once
    assert snapshot.observation.nvml_state is NvmlState.DEMO and snapshot.observation.driver_version is None
    assert len(snapshot.engines[0].ranks) == 8
    with pytest.raises(KvtopError) as refused:
        open_node_source(None, nvml=NvmlSource(nvml_module=FakePynvml([], init_error=error)))
    assert str(refused.value).startswith(f"{reason}: no node to read on this machine; add --demo")


def test_an_engine_whose_server_alone_holds_memory_is_predicted_on_the_servers_gpu() -> None:
    node, table = vllm_tp8_node_with_api_server(workers=False)  # no rank: the server is no rank
    source = LiveSource(nvml=NvmlSource(nvml_module=fake_nvml_of(node)), table=table, model_loader=CountingLoader(),
                        http_client=refused())  # fmt: skip
    [view] = source.collect().engines
    assert view.ranks == () and view.ledger is not None
    assert view.ledger.gpu_total_bytes == 81559 * MIB  # the H100 the server holds memory on


def test_a_node_with_a_driver_is_read_live() -> None:
    node, _ = vllm_tp8_node()
    assert isinstance(open_node_source(None, nvml=NvmlSource(nvml_module=fake_nvml_of(node))), LiveSource)


def test_a_driver_that_refuses_is_shown_not_replaced_by_the_demo() -> None:
    nvml = NvmlSource(nvml_module=FakePynvml([], init_error=pynvml.NVMLError_NoPermission))
    source = open_node_source(None, nvml=nvml)
    assert isinstance(source, LiveSource)
    snapshot = source.collect()
    assert snapshot.observation.nvml_state is NvmlState.NO_PERMISSION
    assert snapshot.notice.startswith("no permission to open the NVIDIA devices") and snapshot.engines == ()


def test_demo_is_chosen_by_name_or_path() -> None:
    assert open_node_source("gpu5-lost").label == "demo:gpu5-lost"
    path = Path(__file__).resolve().parents[2] / "examples/scenarios/orphan-vllm-worker.json"
    assert open_node_source(str(path)).label == "demo:orphan-vllm-worker"
    assert open_node_source("default").label == "demo:llama70b-tp8-sglang"
