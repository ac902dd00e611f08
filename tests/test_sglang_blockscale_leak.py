"""SGLang 0.5.3 – 0.5.11's leaked NVFP4 block-scale placeholders (kvtop/domain/engines/sglang/blockscale_leak.py)."""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.sglang import calibration as sglang
from kvtop.domain.engines.sglang.blockscale_leak import leaked_scale_bytes
from kvtop.units import GIB

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
