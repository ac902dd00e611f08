"""The harness compares like with like (issue 26): a row reads equal where kvtop's figures and the engine's agree.

Each expected value is the engine's own, from the committed row (tests/data/engine_diff/): SGLang's cell of
stage 0's KVCacheConfigurator, vLLM's per-layer KV cache specs. kvtop's side is recomputed.
"""

from __future__ import annotations

from typing import Any

from benchmarks.engine_diff.architectures import stage_checks
from benchmarks.engine_diff.kvtop_side import kvtop_plan
from benchmarks.engine_diff.table import engine_side, kvtop_side, load_fixtures


def _row(engine: str, config: str, variant: str) -> tuple[str, dict[str, Any]]:
    for fixture in load_fixtures():
        if fixture["engine"] != engine or fixture["version"] not in ("0.33.0", "0.5.23"):
            continue
        for row in fixture["results"]:
            if (row["config"], row.get("variant"), row.get("gpu"), row.get("kv_dtype")) == (config, variant, "sm90", "auto"):
                return fixture["version"], row
    raise AssertionError(f"no {engine} row of {config} {variant}")


def test_sglang_pp_cell_is_stage_zeros_on_both_sides() -> None:
    # Qwen3-235B-A22B's 94 layers over PP 4 are 23, 23, 24, 24 (SGLang's split); the row's cell is stage 0's:
    # 23 layers × 4 KV heads × 128 × 2 (K, V) × 2 B = 47,104 B; the tightest stage's would be 49,152.
    version, row = _row("sglang", "Qwen--Qwen3-235B-A22B", "pp4")
    assert row["cell_size"] == 23 * 4 * 128 * 2 * 2 == 47_104
    assert kvtop_side("sglang", version, row) == engine_side("sglang", row)
    # Qwen3.5-35B-A3B: full attention at every 4th layer, stage 0 (layers 0-9) holds 2 of them: 4,096 B
    version, row = _row("sglang", "Qwen--Qwen3.5-35B-A3B", "pp4")
    assert row["cell_size"] == 4_096
    assert kvtop_side("sglang", version, row) == engine_side("sglang", row)


def _stage_differences(engine: str, config: str, variant: str) -> list[str]:
    version, row = _row(engine, config, variant)
    plan = kvtop_plan(engine, version, row)
    return [text for check in stage_checks(row, engine, version, plan) for text in check.differences]


def test_an_all_sliding_config_is_one_windowed_group_on_both_sides() -> None:
    # Mistral-7B-v0.1's sliding_window 4,096 covers all 32 layers: vLLM's 16 layers a stage are SlidingWindowSpec
    version, row = _row("vllm", "mistralai--Mistral-7B-v0.1", "pp2")
    spec = row["stages"][0]["layer_specs"][0]
    assert (spec["kind"], spec["layers"], spec["page_size_bytes"] // spec["block_size"]) == ("SlidingWindowSpec", 16, 2048)
    assert _stage_differences("vllm", "mistralai--Mistral-7B-v0.1", "pp2") == []


def test_a_mamba_page_is_compared_padded_as_vllm_pads_it() -> None:
    # Falcon-H1-0.5B at TP 2: vLLM's MambaSpec page is the attention page, 800 tokens × 256 B = 204,800 B
    version, row = _row("vllm", "tiiuae--Falcon-H1-0.5B", "pp2")
    mamba = next(s for s in row["stages"][0]["layer_specs"] if s["kind"] == "MambaSpec")
    assert mamba["page_size_bytes"] == 800 * 256 == 204_800
    assert _stage_differences("vllm", "tiiuae--Falcon-H1-0.5B", "pp2") == []
    # Qwen3.5-27B (gated delta net): 832 tokens × 2 KV heads × 256 × 2 × 2 B = 1,703,936 B
    version, row = _row("vllm", "Qwen--Qwen3.5-27B", "pp2")
    state = next(s for s in row["stages"][0]["layer_specs"] if s["kind"] == "MambaSpec")
    assert state["page_size_bytes"] == 832 * 2 * 256 * 2 * 2 == 1_703_936
    assert not [t for t in _stage_differences("vllm", "Qwen--Qwen3.5-27B", "pp2") if "KV" in t]


def test_minimax_m3_index_cache_is_the_dsa_index_pool() -> None:
    # vLLM 0.33.0 registers MiniMax-M3's lightning-indexer key cache as `<layer>.self_attn.attn.index_cache`, an
    # MLAAttentionSpec (MiniMaxM3IndexerCache, models/minimax_m3/common/indexer.py): the committed registry row of
    # nvidia--MiniMax-M3-NVFP4 at TP 1 holds 57 of them, page 32,768 B per 128 tokens = 1 head × 128 × 2 B = 256 B a
    # token; its 60 attention layers' FullAttentionSpec pages are 4 KV heads × 128 × 2 (K, V) × 2 B = 2,048 B a token
    from benchmarks.engine_diff.architectures import _engine_kv
    from benchmarks.engine_diff.registry_sweep import row_of

    row = row_of("vllm", "0.33.0", "nvidia--MiniMax-M3-NVFP4", 1)
    pools = _engine_kv(row["stages"][0]["layer_specs"])
    assert pools == {"full": (60, 4 * 128 * 2 * 2), "dsa_index": (57, 128 * 2)}


def test_sglangs_marlin_wna16_act_order_indices_are_not_in_the_loaded_weights(monkeypatch: Any) -> None:
    # SGLang 0.5.23's CompressedTensorsWNA16MoE.process_weights_after_loading replaces w13/w2_weight_g_idx and
    # w13/w2_g_idx_sort_indices with [E, 0] tensors unless the checkpoint's actorder is "group"; its shape tensors
    # stay. Kimi-K2.5 at TP 1: [384, 7168] and [384, 2048] int32 each, twice, on 60 layers = 1,698,693,120 B of its
    # meta build (595,904,229,376 B) the loaded model does not hold: the committed row's 594,205,536,256 B.
    from benchmarks.engine_diff.registry_sweep import row_of
    from benchmarks.engine_diff.run import HERE

    monkeypatch.syspath_prepend(str(HERE))  # the runners' flat imports, as in the engine's venv
    from sglang_standins import param_bytes

    class Tensor:
        def __init__(self, *shape: int) -> None:
            self.count = 1
            for size in shape:
                self.count *= size

        def numel(self) -> int:
            return self.count

        def element_size(self) -> int:
            return 4

    class CompressedTensorsWNA16MoE:  # the scheme's class name is what the harness reads
        def __init__(self, actorder: str | None) -> None:
            self.actorder = actorder

    class Experts:
        def __init__(self, actorder: str | None) -> None:
            self.scheme = CompressedTensorsWNA16MoE(actorder)

    class Model:
        def __init__(self, actorder: str | None) -> None:
            self.experts = Experts(actorder)

        def named_modules(self) -> list[tuple[str, Any]]:
            return [("", self), ("model.layers.1.mlp.experts", self.experts)]

        def named_parameters(self, remove_duplicate: bool = True) -> list[tuple[str, Tensor]]:
            at = "model.layers.1.mlp.experts."
            return [(at + "w13_weight_g_idx", Tensor(384, 7168)), (at + "w2_weight_g_idx", Tensor(384, 2048)),
                    (at + "w13_g_idx_sort_indices", Tensor(384, 7168)), (at + "w2_g_idx_sort_indices", Tensor(384, 2048)),
                    (at + "w13_weight_shape", Tensor(384, 2))]  # fmt: skip

    assert param_bytes(Model(None)) == {"model": 384 * 2 * 4}
    assert param_bytes(Model("group")) == {"model": 384 * (2 * 7168 + 2 * 2048 + 2) * 4}
    row = row_of("sglang", "0.5.23", "moonshotai--Kimi-K2.5", 1)
    emptied = 60 * 384 * (7168 + 2048) * 2 * 4
    assert row["stages"][0]["param_bytes"]["language_model"] == 595_904_229_376 - emptied == 594_205_536_256


def test_ovis_llm_child_is_the_language_model() -> None:
    # vLLM 0.33.0's Ovis (ovis.py) builds the language model as `llm`, beside `visual_tokenizer` and `vte`: the
    # committed registry row of AIDC-AI--Ovis2-34B (held-out wave 2) holds, at TP 1, llm 65,527,752,704 B (its
    # Qwen2.5-32B: 32,763,876,352 parameters in bf16) and 3,546,980,332 + 671,088,640 B of tower and table.
    # The language model is equal, and the tower and table are in kvtop's book now (towers_ovis.py: the AIMv2
    # visual tokenizer and vte, tests/domain/test_towers_ovis.py): equal at TP 1 and 2
    from benchmarks.engine_diff.architectures import _language_bytes
    from benchmarks.engine_diff.registry_judge import EQUAL, judge
    from benchmarks.engine_diff.registry_sweep import load_rows

    rows = {r["tp"]: r for r in load_rows("vllm", "0.33.0") if r["config"] == "AIDC-AI--Ovis2-34B"}
    assert _language_bytes(rows[1]["stages"][0]["param_bytes"]) == (65_527_752_704, 3_546_980_332 + 671_088_640)
    assert {judge("vllm", "0.33.0", rows[tp]).verdict for tp in (1, 2)} == {EQUAL}


def test_laguna_real_configs_are_equal_on_both_engines() -> None:
    # Held-out wave 2's poolside Laguna configs against the committed registry rows. vLLM 0.33.0 (models/laguna.py):
    # Laguna-XS.2-FP8 at TP 1 holds 35,313,001,424 B of parameters (tests/domain/test_laguna.py per tensor) and an
    # fp8 KV cache, auto read from the checkpoint's kv_cache_scheme (layers/attention/attention.py): pages of
    # 32,768 B per 16 tokens, 8 KV heads × 128 × 2 × 1 B = 2,048 B a layer a token. SGLang 0.5.23 (models/laguna.py):
    # 40,894,464 B more for its fp32 LagunaMoEGate (39 × 256 × 2,048 × 2 B) and its k/v scales (40 × 2 × 4 B):
    # 35,353,895,488 B; its cell 139,264 B in bf16, the model keeping no quant_config for auto to read
    from benchmarks.engine_diff.registry_judge import EQUAL, judge
    from benchmarks.engine_diff.registry_sweep import load_rows, row_of

    for engine, version in (("vllm", "0.33.0"), ("sglang", "0.5.23")):
        rows = [r for r in load_rows(engine, version) if r["config"].startswith("poolside--Laguna")]
        assert len(rows) == 4
        assert {judge(engine, version, row).verdict for row in rows} == {EQUAL}
    row = row_of("sglang", "0.5.23", "poolside--Laguna-XS.2-FP8", 1)
    assert (sum(row["stages"][0]["param_bytes"].values()), row["cell_size"]) == (35_353_895_488, 139_264)
