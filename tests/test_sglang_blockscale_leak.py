"""SGLang's NVFP4 block-scale copies held beside the scales after the load (kvtop/domain/engines/sglang/
blockscale_leak.py): the TRT-LLM MoE's leaked placeholders, 0.5.10rc0 – 0.5.11's CUTLASS copy, and from 0.5.12 none
where the alias holds."""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.cli import main
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.sglang import calibration as sglang
from kvtop.domain.engines.sglang.blockscale_leak import kept_scale_bytes, leaked_scale_bytes
from kvtop.units import GIB
from tests.data_paths import DATA

RECORDS = {record.id: record for record in load("sglang")}
TP4, TP8 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp4-ep4-sglang059", "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp8-ep8-sglang059"


def test_the_leak_is_the_placeholders_arithmetic() -> None:
    """DeepSeek-R1-0528-NVFP4-v2 (config: hidden 7,168, moe_intermediate 2,048, 256 routed experts, layers 3–60 MoE:
    58; hf_quant_config group 16, float8 scales). At TP 4 / EP 4 a rank holds 64 whole experts:
    w13_blockscale_swizzled [64, 4,096, 448] (2 × 2,048 rows, 7,168 ÷ 16 columns; already multiples of 128 and 4) and
    w2 [64, 7,168, 128] (2,048 ÷ 16): 58 × 64 × (1,835,008 + 917,504) B = 10,217,324,544 B = 9.516 GiB; at TP 8 / EP 8
    32 experts: half, 5,108,662,272 B."""
    for record_id, expected in ((TP4, 10_217_324_544), (TP8, 5_108_662_272)):
        inputs = RECORDS[record_id].inputs()
        assert inputs.model is not None
        layers = range(inputs.model.num_layers)
        assert leaked_scale_bytes(inputs.model, inputs.layout, layers, inputs.gpu_name, inputs.version) == expected


def test_the_weights_term_lands_on_what_sglang_0_5_9_printed() -> None:
    """'Load weight end. … mem usage=102.10 GB' at TP 4 / EP 4 and 52.16 GB at TP 8 / EP 8 (SGLang's 'GB' is GiB:
    free bytes ÷ 1 << 30) on every rank: the book was 92.09 / 47.21 GiB before the rule (10.0 / 4.95 GiB short); with
    the leaked placeholders (9.52 / 4.76 GiB) it lands within 0.5 GiB."""
    for record_id, printed in ((TP4, 102.10), (TP8, 52.16)):
        term = next(t for t in sglang.terms(RECORDS[record_id].inputs(), {}) if t.term is Term.WEIGHTS)
        assert abs(term.bytes / GIB - printed) < 0.5, (record_id, term.bytes / GIB)


def test_0_5_12_frees_them_and_0_5_3_runs_cutlass_by_default() -> None:
    """0.5.12 aliases the placeholders to the scales after the load (modelopt_quant.py:1835-1838: 'alias to free the
    placeholders'), so the same TP 4 launch leaks nothing; 0.5.3's server_args.py sets no MoE runner for DeepSeek, so
    `auto` is CUTLASS, which fills the copies and deletes the originals: nothing held twice either."""
    inputs = RECORDS[TP4].inputs()
    assert inputs.model is not None
    layers = range(inputs.model.num_layers)
    for release in ("0.5.12", "0.5.3"):
        version = inputs.version.model_copy(update={"text": release})
        assert leaked_scale_bytes(inputs.model, inputs.layout, layers, inputs.gpu_name, version) == 0, release


MINIMAX = "file55143547738-minimax-m2.5-nvfp4-2xrtxpro6000-tp2-v0510rc0"
MINIMAX_LOGGED = 181_721  # the start's 'max_total_num_tokens=181721' (search-index id 55143547738)
MINIMAX_LAUNCH = ("python3 -m sglang.launch_server --model-path /m/MiniMax-M2.5-NVFP4/ --fp4-gemm-backend flashinfer_cutlass "
                  "--attention-backend triton --trust-remote-code --tensor-parallel-size 2")  # fmt: skip


def test_cutlass_keeps_the_swizzled_copy_from_0_5_10rc0_to_0_5_11() -> None:
    """MiniMax-M2.5 NVFP4 at TP 2 on the RTX PRO 6000 (SM 12.0: CUTLASS MoE). Config: hidden 3,072, expert
    intermediate 1,536, 256 experts in each of 62 layers, group 16, float8 scales. A rank's w13 scales [256, 1,536,
    192] and w2 [256, 3,072, 48] (already multiples of 128 and 4): 62 × 256 × (294,912 + 147,456) B. 0.5.10rc0 –
    0.5.11 keep the swizzled copy beside them (copy_or_rebind_param, modelopt_quant.py:1811-1813 at 0.5.10rc0); 0.5.9
    deleted the originals (:1623-1625), 0.5.12 aliases them (alias_or_bind_derived_param)."""
    inputs = RECORDS[MINIMAX].inputs()
    assert inputs.model is not None
    layers = range(inputs.model.num_layers)
    for release, expected in (("0.5.9", 0), ("0.5.10rc0", 7_021_264_896), ("0.5.10", 7_021_264_896),
                              ("0.5.11", 7_021_264_896), ("0.5.12", 0)):  # fmt: skip
        version = inputs.version.model_copy(update={"text": release})
        assert kept_scale_bytes(inputs.model, inputs.layout, layers, inputs.gpu_name, version) == expected, release
        assert leaked_scale_bytes(inputs.model, inputs.layout, layers, inputs.gpu_name, version) == 0, release


def _capacity(capsys: pytest.CaptureFixture[str], release: str) -> tuple[int, int, int]:
    config = str(DATA / "configs" / "heldout" / "nvidia--MiniMax-M2.5-NVFP4.json")
    assert main(["plan", "--model", config, "--engine", "sglang", "--engine-version", release, "--gpu", "RTXPRO6000",
                 "--cmd", MINIMAX_LAUNCH]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    tokens = int(next(line for line in lines if line.startswith("Token capacity")).split()[2].replace(",", ""))
    interval = next(line for line in lines if line.startswith("Interval")).split()
    return tokens, int(interval[1].replace(",", "")), int(interval[3].replace(",", ""))


def test_the_kept_copy_brings_the_plan_to_what_the_nightly_printed(capsys: pytest.CaptureFixture[str]) -> None:
    """The 2026-03-30 nightly (0.5.10rc0's rules) printed 181,721 tokens; planned with the kept copy kvtop lands
    within 5 % and its interval holds it, where 0.5.9's rules (no copy) plan 60 % more."""
    tokens, low, high = _capacity(capsys, "0.5.10rc0")
    assert abs(tokens / MINIMAX_LOGGED - 1) < 0.05 and low <= MINIMAX_LOGGED <= high
    without, _, _ = _capacity(capsys, "0.5.9")
    assert without > 1.6 * MINIMAX_LOGGED


GB300_TP2 = "prathmesh-mtinferencex-minimax-m2.5-nvfp4-gb300-tp2-pd-prefill-v0513"
GB300_TP2_PRINTED_GIB = 63.38  # its 'Load weight end. … mem usage=63.38 GB' (SGLang's 'GB' is GiB), both ranks


def _plan_weights_gib(capsys: pytest.CaptureFixture[str], release: str) -> float:
    config = str(DATA / "configs" / "heldout" / "nvidia--MiniMax-M2.5-NVFP4.json")
    assert main(["plan", "--model", config, "--engine", "sglang", "--engine-version", release, "--gpu", "GB300",
                 "--tp", "2", "--kv-cache-dtype", "fp8_e4m3", "--context-length", "196608",
                 "--mem-fraction-static", "0.85"]) == 0  # fmt: skip
    line = next(line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("− weights"))
    return float(line.split("(")[1].split()[0])


def test_from_0_5_12_the_alias_frees_the_copy(capsys: pytest.CaptureFixture[str]) -> None:
    """0.5.12 on, `alias_or_bind_derived_param` (layers/utils/common.py:74-106 at 0.5.12 and 0.5.23) writes the
    swizzled scales into w13/w2_weight_scale and re-registers the placeholder's name as them: MiniMax-M2.5's scales
    [256, 1,536, 192] and [256, 3,072, 48] at TP 2 are their padded shape, so nothing is held twice. The GB300 start
    at 0.5.13 printed 63.38 GiB of weights a rank; the plan of that launch at 0.5.13 and at 0.5.23 (whose classes,
    counted as built, hold the 6.54 GiB placeholders before the load) both land within 0.5 GiB of it, where the copy
    held would put 0.5.23's 6.5 GiB above."""
    inputs = RECORDS[GB300_TP2].inputs()
    assert inputs.model is not None
    layers = range(inputs.model.num_layers)
    for release in ("0.5.12", "0.5.13", "0.5.22", "0.5.23"):
        version = inputs.version.model_copy(update={"text": release})
        assert kept_scale_bytes(inputs.model, inputs.layout, layers, inputs.gpu_name, version) == 0, release
    for release in ("0.5.13", "0.5.23"):
        assert abs(_plan_weights_gib(capsys, release) - GB300_TP2_PRINTED_GIB) < 0.5, release


def test_marlin_keeps_every_placeholder_below_blackwell() -> None:
    """From 0.5.13 an SM 8.0 – 9.x GPU runs the NVFP4 MoE on Marlin at `auto` (`create_moe_runner`,
    modelopt_quant.py:2183-2188 at 0.5.13), whose branch of process_weights_after_loading returns after
    `prepare_moe_nvfp4_layer_for_marlin` (:1907-1914), before the alias: MiniMax-M2.5 at TP 2 on an H100 keeps the
    62 × 256 × (1,536 × 192 + 3,072 × 48) B of placeholders (the CUTLASS test's figure). 0.5.12 raises there
    ('Current platform does not support NVFP4', :1525-1528): no Marlin, nothing kept by this rule."""
    inputs = RECORDS[GB300_TP2].inputs()
    assert inputs.model is not None
    layers = range(inputs.model.num_layers)
    for release, expected in (("0.5.12", 0), ("0.5.13", 7_021_264_896), ("0.5.22", 7_021_264_896)):
        version = inputs.version.model_copy(update={"text": release})
        assert kept_scale_bytes(inputs.model, inputs.layout, layers, "H100", version) == expected, release
    assert 62 * 256 * (1_536 * 192 + 3_072 * 48) == 7_021_264_896
