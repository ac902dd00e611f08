"""`--disable-chunked-prefix-cache` (chunked_prefix.py): planned as no change on a model without MLA, refused with MLA.

The start: DeepSeek-R1-Distill-Qwen-1.5B on one A100-PCIE-40GB, SGLang 0.5.9 (`pip install sglang==0.5.9`), the launch a
sidecar wrote with the flag (search-index id 53948216720, §9.5: `--context-length 5120 … --mem-fraction-static 0.9
--max-running-requests 32 --chunked-prefill-size 4096 --random-seed 0 --disable-chunked-prefix-cache … --tp-size 1
--ep-size 1`), its log: 'Load weight begin. avail mem=38.87 GB', 'Load weight end. … avail mem=35.36 GB', 'KV Cache
allocated. #tokens: 1178703'. SGLang's own arithmetic on those figures (0.5.9 model_runner.py `profile_max_num_token`:
free after the load less the pre-load free × (1 − 0.9), over 28 layers × 2 KV heads × 128 × 2 × 2 B = 28,672 B a token):
(35.36 − 0.1 × 38.87) GiB / 28,672 B = 1,178,637 tokens, the log's within its two decimals (± 0.005 GiB: ± 187 tokens).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import DATA

DISTILL = DATA / "calibration" / "configs" / "deepseek-ai--DeepSeek-R1-Distill-Qwen-1.5B.RECONSTRUCTED.json"
DEEPSEEK_V3 = DATA / "configs" / "deepseek-ai--DeepSeek-V3.json"
A100_40GB = 40960 << 20
LAUNCH = ["--context-length", "5120", "--trust-remote-code", "--dtype", "auto", "--kv-cache-dtype", "auto",
          "--mem-fraction-static", "0.9", "--max-running-requests", "32", "--chunked-prefill-size", "4096",
          "--random-seed", "0", "--tp-size", "1", "--ep-size", "1"]  # fmt: skip
FLAG = "--disable-chunked-prefix-cache"
LOGGED = MeasuredInputs(free_before_load_bytes=round(38.87 * GIB), free_after_load_bytes=round(35.36 * GIB))
LOG_TOKENS, ROUNDING = 1_178_703, 187


def _tokens(flags: list[str], measured: MeasuredInputs | None = None) -> int:
    model = model_from_config(json.loads(DISTILL.read_text()), source=DISTILL.name)
    settings = parse_flags("sglang", flags).model_copy(update={"engine_version": "0.5.9"})
    ledger = predict(model, settings, gpu_total_bytes=A100_40GB, gpu_name="A100-40GB", measured=measured)
    return ledger.engine.token_capacity


def test_the_flag_changes_nothing_without_mla() -> None:
    assert _tokens([*LAUNCH, FLAG]) == _tokens(LAUNCH)


def test_the_log_s_figures_give_its_pool_with_the_flag() -> None:
    assert abs(_tokens([*LAUNCH, FLAG], LOGGED) - LOG_TOKENS) <= ROUNDING


def test_the_flag_is_refused_on_an_mla_model() -> None:
    model = model_from_config(json.loads(DEEPSEEK_V3.read_text()), source=DEEPSEEK_V3.name)
    settings = parse_flags("sglang", ["--tp-size", "8", FLAG]).model_copy(update={"engine_version": "0.5.9"})
    with pytest.raises(InputError, match="on an MLA model"):
        predict(model, settings, gpu_total_bytes=143771 << 20, gpu_name="H200")
