"""vLLM's dotted `--limit-mm-per-prompt.image 0` is the JSON form: FlexibleArgumentParser gathers the dotted keys into
one object, json.loads each value, and appends it as a further `--limit-mm-per-prompt JSON`, which argparse keeps
(v0.10.2 utils/__init__.py:1889-1925; v0.13.0 utils/argparse_utils.py:314-347; v0.34.0 :462-500).

Expected values from a start's log, not from kvtop: the logged text-only start of Qwen/Qwen3.5-35B-A3B bf16, vLLM
0.20.0, eager, 0.90, max_model_len 4096, one RTX PRO 6000 Blackwell Server Edition: 'Model loading took 64.69 GiB' and
209,088 KV tokens (search-index id 67603003401, tests/data/calibration/SOURCES.md; test_tower_limits.py reads the JSON
form against it)."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.mm_limits import read_limits
from kvtop.domain.errors import InputError
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.ledger import Ledger
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import CONFIGS

LOGGED_WEIGHTS_GIB, LOGGED_TOKENS = 64.69, 209088
LAUNCH = ["--enforce-eager", "--gpu-memory-utilization", "0.90", "--max-model-len", "4096", "--llm-class"]
RTX_PRO_6000_MIB = 97887  # nvidia-smi's total of the card (kvtop/domain/gpus.py)
DOTTED_OFF = ["--limit-mm-per-prompt.image", "0", "--limit-mm-per-prompt.video", "0"]


def _plan(*flags: str, release: str = "0.20.0") -> Ledger:
    model = model_from_config(json.loads((CONFIGS / "heldout" / "Qwen--Qwen3.5-35B-A3B.json").read_text()))
    settings = parse_flags("vllm", [*LAUNCH, *flags, "--engine-version", release])
    return calibrated_ledger(model, settings, gpu_total_bytes=RTX_PRO_6000_MIB * 2**20, gpu_name="RTXPRO6000")


def test_dotted_zeros_plan_the_logged_text_only_start() -> None:
    off = _plan(*DOTTED_OFF)
    assert abs(off.ranks[0].weights_bytes - LOGGED_WEIGHTS_GIB * GIB) < 0.05 * GIB  # the logged load, 0.01 GiB print
    assert abs(off.ranks[0].token_capacity / LOGGED_TOKENS - 1) < 0.05
    assert off.ranks[0].token_capacity == _plan("--limit-mm-per-prompt", '{"image": 0, "video": 0}').ranks[0].token_capacity


def _counts(argv: list[str], release: str = "0.20.0") -> dict[str, int]:
    settings = parse_flags("vllm", ["--model", "m", *argv, "--engine-version", release], engine_line=True)
    assert settings.unknown_flags == ()
    limits = read_limits(settings.flags, ResolvedVersion(text=release)).limits
    assert limits is not None
    return dict(limits.counts)


@pytest.mark.parametrize(("argv", "counts"), [
    (DOTTED_OFF, {"image": 0, "video": 0}),
    (["--limit-mm-per-prompt.image=2"], {"image": 2}),
    (["--limit-mm-per-prompt.video.count", "0"], {"video": 0}),  # {"video": {"count": 0}}, v0.11.1 on
    # the dotted object is appended after the whole JSON, and argparse keeps the last: {"image": 3} is dropped
    (["--limit-mm-per-prompt", '{"image": 3}', "--limit-mm-per-prompt.audio", "1"], {"audio": 1}),
])  # fmt: skip
def test_dotted_keys_read_as_vllms_parser_builds_them(argv: list[str], counts: dict[str, int]) -> None:
    assert _counts(argv) == counts


def test_a_count_dict_before_v0_11_1_is_refused_as_the_json_form_is() -> None:
    """v0.11.0 takes dict[str, int] (engine/arg_utils.py:379): `.image.count` builds {"image": {"count": 0}}."""
    with pytest.raises(InputError, match="image: a whole number"):
        check_parallel(parse_flags("vllm", ["--limit-mm-per-prompt.image.count", "0", "--engine-version", "0.11.0"]))
