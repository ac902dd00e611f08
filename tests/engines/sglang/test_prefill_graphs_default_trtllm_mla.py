"""SGLang's prefill graphs where its default attention backend is trtllm_mla (SM100: default_mla.DEFAULT_MLA_CLASSES),
read in the wheels:
- the multimodal switch to tc_piecewise reads the resolved backend only from 0.5.18, as its third condition, after
  `not is_multimodal_breakable_cuda_graph_supported` (0.5.18 server_args.py:4562-4569; 0.5.19 arg_groups/
  cuda_graph_hook.py:140-149, 0.5.21 :148-157); 0.5.16 / 0.5.17 switch without it (0.5.16 :3663-3671, 0.5.17
  :4352-4360). So Kimi-K2.5 (trtllm_mla by default from 0.5.9) runs tc_piecewise on a B200 at 0.5.16-0.5.17 and keeps
  the breakable backend from 0.5.18 (on the breakable allowlist, configs/model_config.py:1921): its graphs stay in the
  reserve at each, as on an H200 (test_tc_piecewise_switch_offs.py);
- `_disable_prefill_cuda_graph_for_deepseek_trtllm_mla` (0.5.15 … 0.5.23: DeepseekV3ForCausalLM on trtllm_mla) runs
  after the reserve is sized (0.5.18 server_args.py :3677 before :3690; 0.5.23 arg_groups/pipeline.py:218 before
  :245), so a DeepSeek-V3 launch on a B200 at 0.5.18 still reserves its prefill graphs.
Expected: the reserve (`_handle_gpu_memory_settings`) holds the MLA prefill graphs' 1,536 MiB (0.5.17
server_args.py:4910) in each case.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

KIMI_K25 = "heldout/moonshotai--Kimi-K2.5.json"
DSV3 = "deepseek-ai--DeepSeek-V3.json"
WITH_GRAPHS = "1536 MiB of it prefill graphs"  # MLA prefill graphs (0.5.17 server_args.py:4910)


def _b200_source(config: str, version: str) -> tuple[str, int]:
    path = DATA / "configs" / config
    model = model_from_config(json.loads(path.read_text()), source=path.name)
    settings = parse_flags("sglang", ["--context-length", "8192", "--tp", "8"]).model_copy(
        update={"engine_version": version}
    )
    ledger = predict(model, settings, gpu_total_bytes=gpu_total_bytes("B200"), gpu_name="B200")
    return ledger.engine.memory_fraction_source, ledger.engine.page_size


@pytest.mark.parametrize("version", ["0.5.16", "0.5.17", "0.5.18", "0.5.21"])
def test_kimi_k25_on_its_default_trtllm_mla_keeps_its_prefill_graphs(version: str) -> None:
    source, page = _b200_source(KIMI_K25, version)
    assert page == 64  # trtllm_mla, SGLang's default for the class on SM100
    assert WITH_GRAPHS in source and "no prefill graphs" not in source


def test_deepseek_v3s_trtllm_mla_switch_off_comes_after_the_reserve() -> None:
    source, page = _b200_source(DSV3, "0.5.18")
    assert page == 64
    assert WITH_GRAPHS in source and "no prefill graphs" not in source
