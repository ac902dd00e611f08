"""A Mistral-format hub repo (params.json, no config.json) read from the fake hub, then from the cache offline."""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.mistral_params import NOTE
from tests.conftest import CONFIGS
from tests.sources.fake_hub import FakeHub, HubFile, HubRepo
from tests.sources.test_hub import kvtop, one_line_error

PIXTRAL = "mistralai/Pixtral-12B-2409"


def _pixtral_repo() -> HubRepo:
    params = (CONFIGS / "recon" / "recon--mistralai--Pixtral-12B-2409" / "params.json").read_bytes()
    return HubRepo(files={"params.json": HubFile(head=params, size=len(params))})


def test_a_repo_with_params_json_only_is_read_as_vllm_maps_it_then_from_the_cache(tmp_path: Path) -> None:
    with FakeHub({PIXTRAL: _pixtral_repo()}) as hub:
        online = kvtop(tmp_path, "--model", PIXTRAL, "--engine", "vllm", "--json", endpoint=hub.endpoint)
        assert online.returncode == 0, online.stderr[-400:]
        plan = json.loads(online.stdout)
        assert plan["config_format"] == NOTE and "params.json" in plan["model_source"]
        served = len(hub.requests)
        cached = kvtop(
            tmp_path, "--model", PIXTRAL, "--engine", "vllm", "--json", endpoint=hub.endpoint, offline=True
        )
        assert cached.returncode == 0, cached.stderr[-400:]
        assert len(hub.requests) == served  # HF_HUB_OFFLINE: not one request
        assert json.loads(cached.stdout)["kv_bytes_per_token"] == plan["kv_bytes_per_token"]


def test_a_repo_with_neither_file_says_so(tmp_path: Path) -> None:
    with FakeHub({PIXTRAL: HubRepo(files={"README.md": HubFile(head=b"x", size=1)})}) as hub:
        line = one_line_error(kvtop(tmp_path, "--model", PIXTRAL, endpoint=hub.endpoint))
    assert "has no config.json (nor Mistral's params.json) on the hub" in line
