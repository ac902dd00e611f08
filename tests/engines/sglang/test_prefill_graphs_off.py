"""SGLang turns its prefill (piecewise) CUDA graphs off for a multimodal model before it sizes the automatic fraction,
so the reserve holds none of their 8 MiB a size (prefill_graphs_off.py; SGLang 0.5.10.post1 server_args.py:1109-1111,
called at :778 before `_handle_gpu_memory_settings` at :784, whose reserve adds them only `if not
self.disable_piecewise_cuda_graph`, :1305).

Expected figure: the log of a Qwen3-VL-8B-Instruct start on one H200 (tests/data/calibration/sglang.jsonl,
file62110908920-qwen3-vl-8b-h200, search-index id 62110908920), which printed 'mem_fraction_static=0.8388' and
'piecewise_cuda_graph=disabled' with `--context-length 8192` (chunked_prefill_size 8192). By SGLang's arithmetic on
the H200's 143,771 MiB: reserve 512 + 1.5 × 8,192 + 2 × 256 (decode graphs) + 1/8 × 1,024 = 13,440 MiB, no prefill
graphs; round((143,771 − 13,440) / 143,771, 3) = round(0.906537, 3) = 0.907; × 0.95 × the tower term
(24 × 1152² / (24 × 1024²) = 1.265625, 1 − 0.1 × 0.265625 = 0.9734375) = 0.8387624…, printed 0.8388. With the 42 + 16
= 58 prefill sizes to 8,192 (464 MiB) kvtop had 13,904 MiB → 0.903 → 0.8350632…, 0.52 GiB more reserve on the
139.16 GiB free before the load.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

QWEN3_VL_8B = DATA / "configs" / "heldout" / "Qwen--Qwen3-VL-8B-Instruct.json"
H200 = 143771 << 20


def _fraction(version: str, flags: list[str]) -> tuple[float, str]:
    model = model_from_config(json.loads(QWEN3_VL_8B.read_text()), source=QWEN3_VL_8B.name)
    settings = parse_flags("sglang", flags).model_copy(update={"engine_version": version})
    engine = predict(model, settings, gpu_total_bytes=H200, gpu_name="H200").engine
    return engine.memory_fraction, engine.memory_fraction_source


def test_the_logged_fraction_of_a_vlm_start_holds_no_prefill_graphs() -> None:
    fraction, source = _fraction("0.5.10.post1", ["--context-length", "8192", "--dtype", "bfloat16"])
    assert round(fraction, 4) == 0.8388
    assert fraction == pytest.approx(0.907 * 0.95 * 0.9734375, abs=1e-12)
    assert "no prefill graphs" in source


def test_before_prefill_graphs_were_on_by_default_nothing_changes() -> None:
    """0.5.9: no prefill graphs by default (PCG_DEFAULT_SINCE 0.5.10rc0), the same 13,440 MiB reserve, no words."""
    fraction, source = _fraction("0.5.9", ["--context-length", "8192"])
    assert fraction == pytest.approx(0.907 * 0.95 * 0.9734375, abs=1e-12)
    assert "prefill graphs" not in source
