"""Qwen2-VL's vision tower under GPTQ stays in the model's dtype at every release kvtop plans (docs/engines/vllm.md,
"Qwen2-VL's tower under GPTQ"): to v0.10.2 `Qwen2VLForConditionalGeneration._maybe_ignore_quant_config` hands the
tower no quant config for GPTQ / GPTQ-Marlin (qwen2_vl.py:1117, :1132-1138 at v0.10.2); from v0.11.0 the tower gets
it (qwen2_vl.py:1277-1283 at v0.13.0, :1412-1419 at v0.33.0) but `maybe_update_config` marks as quantized only the
modules whose safetensors parameters are stored in no float dtype (gptq_marlin.py:302-323 at v0.13.0, auto_gptq.py:
273-298 at v0.33.0), so a tower stored BF16, as GPTQModel leaves it, is built unquantized.

Expected figure: the GPTQ start's log (tests/data/calibration/vllm.jsonl,
file61363814597-qwen2-vl-7b-gptq-int4-rtx3090-v0130): 'Model loading took 6.4643 GiB memory' at v0.13.0; the same
rule at v0.10.2 and v0.33.0 (read in their wheels) holds the same weights.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.wording import GIB
from tests.cli_in_process import run_kvtop
from tests.data_paths import CONFIGS

LOGGED_WEIGHTS_GIB = 6.4643
FLAGS = ["--quantization", "gptq_marlin", "--dtype", "half", "--trust-remote-code", "--max-model-len", "4096",
         "--limit-mm-per-prompt", '{"image":1}', "--gpu-memory-utilization", "0.9", "--no-enable-prefix-caching"]  # fmt: skip


def _weights(release: str) -> int:
    config = CONFIGS.parent / "calibration" / "configs" / "Qwen--Qwen2-VL-7B-Instruct-GPTQ-Int4.RECONSTRUCTED.json"
    ran = run_kvtop("plan", "--engine", "vllm", "--engine-version", release, "--gpu", "RTX3090", "--model",
                    str(config), "--no-calibration-store", "--json", "--", *FLAGS)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    return int(json.loads(ran.stdout)["weights_bytes"])


@pytest.mark.parametrize("release", ["0.10.2", "0.33.0"])
def test_the_tower_stays_in_the_model_dtype_before_and_after_v0_11(release: str) -> None:
    at_log = _weights("0.13.0")
    assert abs(at_log / GIB / LOGGED_WEIGHTS_GIB - 1) < 0.005
    assert _weights(release) == at_log
