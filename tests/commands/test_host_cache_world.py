"""`--host-cache` splits over the GPUs the engine lays the launch on, read with the model (kvtop/commands/
deployment_args.py `host_cache_ranks`, through `EngineRules.world_ranks`), not over the flags' tp × dp.

Expected GPUs from LMDeploy's code, never from kvtop: pytorch/config.py `DistConfig.__post_init__` from v0.11.0 (PR
#4004; the same in the 0.18.0 wheel, config.py:224-267): world = ep at ep > 1 else tp, attention TP world ÷ dp; and
serve/openai/launch_server.py spreads the dp servers over max(dp, tp, ep) GPUs. So `--tp 2 --dp 2` is 2 GPUs, and
`--tp 4 --dp 2` is 4, where TurboMind's `TurbomindEngineConfig(dp=…)` takes tp × dp. Gemma-3 has no TurboMind model
(turbomind/supported_models.py through 0.18.0 lists no Gemma3 class; the PyTorch engine's MODULE_MAP has
Gemma3ForConditionalGeneration from v0.7.2), so `lmdeploy serve` without --backend runs it on the PyTorch engine
(`autoget_backend`): only the model says so.
"""

from __future__ import annotations

import json

import pytest

from kvtop.commands.deployment_args import host_cache_ranks, with_host_cache
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

GEMMA3 = DATA / "configs" / "google--gemma-3-27b-it.json"


def _settings(*flags: str) -> LaunchSettings:
    return parse_flags("lmdeploy", ["--model", "m", "--engine-version", "0.16.0", *flags])


@pytest.mark.parametrize(("flags", "gpus"), [
    (("--backend", "pytorch", "--tp", "2", "--dp", "2"), 2),  # world = tp = 2 (not 4)
    (("--backend", "pytorch", "--tp", "4", "--dp", "2"), 4),  # world = tp = 4 (not 8)
    (("--backend", "turbomind", "--tp", "2", "--dp", "2"), 4),  # TurboMind: tp × dp
])  # fmt: skip
def test_the_host_cache_splits_over_the_typed_backends_world(flags: tuple[str, ...], gpus: int) -> None:
    model = model_from_config(json.loads(GEMMA3.read_text()), source=GEMMA3.name)
    assert host_cache_ranks(_settings(*flags), model) == gpus


def test_without_backend_the_model_decides_the_world() -> None:
    """No --backend: the launch alone counts tp × dp = 4 (its backend unknown); with Gemma-3, the PyTorch engine's
    world of tp = 2 GPUs, the split the ledger plans (`layout_from_settings(settings, model)`)."""
    model = model_from_config(json.loads(GEMMA3.read_text()), source=GEMMA3.name)
    settings = _settings("--tp", "2", "--dp", "2")
    assert host_cache_ranks(settings, None) == 4
    assert host_cache_ranks(settings, model) == 2


def test_lmdeploy_still_names_its_missing_host_tier() -> None:
    """LMDeploy has no host KV tier kvtop models: `--backend pytorch --tp 2 --dp 2 --host-cache 8GiB` is refused on
    the flag, whatever the world."""
    model = model_from_config(json.loads(GEMMA3.read_text()), source=GEMMA3.name)
    with pytest.raises(InputError, match="LMDeploy has no host KV tier kvtop models") as raised:
        with_host_cache(_settings("--backend", "pytorch", "--tp", "2", "--dp", "2"), 8 << 30, model)
    assert raised.value.field == "--host-cache"
