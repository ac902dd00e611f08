"""SGLang 0.5.23's Bailing multimodal port (BailingMMNativeForConditionalGeneration, held-out wave 4a) refuses an
omni checkpoint: a config with `audio_config` (srt/models/bailing_mm.py: "Audio is not supported by the Bailing
SGLang port"). The engine's answer is the registry sweep's row for inclusionAI/Ming-Lite-Omni-Preview
(tests/data/engine_diff/registry/sglang-0.5.23.json: status refused at TP 1 and 2)."""

from __future__ import annotations

import json
from typing import Any

from benchmarks.engine_diff.registry_sweep import load_rows
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import CONFIGS

MING = "inclusionAI--Ming-Lite-Omni-Preview"


def _config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CONFIGS / "heldout" / "wave4a" / f"{MING}.json").read_text())
    return data


def _refusals(config: dict[str, Any], version: str) -> tuple[str, ...]:
    model = model_from_config(config, source=MING)
    settings = parse_flags("sglang", ["--tp", "1", "--engine-version", version])
    ledger = predict(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    assert ledger.version.text == version
    return tuple(refusal.field for refusal in launch_refusals(ledger))


def test_the_engine_refused_the_omni_checkpoint() -> None:
    rows = [r for r in load_rows("sglang", "0.5.23") if r["config"] == MING]
    assert {r["tp"] for r in rows} == {1, 2} and all(r["status"] == "refused" for r in rows)


def test_kvtop_refuses_an_audio_tower_on_sglangs_bailing_port() -> None:
    assert model_from_config(_config(), source=MING).audio_tower
    assert _refusals(_config(), "0.5.23") == ("audio_config",)


def test_an_image_only_config_and_an_older_release_are_not_refused() -> None:
    image_only = {k: v for k, v in _config().items() if k != "audio_config"}
    assert "audio_config" not in _refusals(image_only, "0.5.23")
    assert "audio_config" not in _refusals(_config(), "0.5.6.post2")  # no Bailing multimodal class then
