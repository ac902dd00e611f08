"""SGLang's target cell and the draft, by release (engines/sglang/draft_cell.py, draft_load.py; docs/engines/sglang.md
§6.1, §19.1): the EAGLE term `cell × (1 + draft layers ÷ layers)` exists from 0.5.14 and only where a draft path is
set (typed, or filled in for speculative_hook.py's classes; from 0.5.20 also a path-less target stating
num_nextn_predict_layers); an MTP draft's own embedding and LM head are resident at the target's profile from 0.5.14."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.deployment import Charge, Feature
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.cli_in_process import run_kvtop
from tests.conftest import CONFIGS

H100 = 81559 << 20  # nvidia-smi's total (tests/data/samples/nvidia_smi)
QWEN36 = CONFIGS.parent / "calibration" / "configs" / "Qwen--Qwen3.6-27B-FP8.RECONSTRUCTED.json"
# tests/data/calibration/sglang.jsonl file67494338468 (Oxcart, RTX PRO 6000, the release 0.5.14 stands for)
OXCART = ("python -m sglang.launch_server --model-path /workspace/model --context-length 262144 "
          "--mem-fraction-static 0.92 --max-running-requests 4 --chunked-prefill-size 8192 --kv-cache-dtype fp8_e4m3 "
          "--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
          "--speculative-num-draft-tokens 4 --page-size 64 --cuda-graph-max-bs 4 --attention-backend flashinfer")  # fmt: skip
LOGGED_TOKENS = 1_206_208


def load(name: str) -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / name).read_text()), source=name)


def plan(model: ModelSpec, flags: list[str], draft: ModelSpec | None = None) -> Ledger:
    return predict(model, parse_flags("sglang", flags, strict=True), gpu_total_bytes=H100, gpu_name="H100", draft=draft)


def test_the_oxcart_qwen36_eagle_start_sizes_sixteen_layers_and_holds_the_drafts_own_embedding_and_head(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The log's 36.81 GiB of KV over 1,206,208 tokens is 32,768 B a token: 16 full-attention layers × 4 KV heads ×
    256 × K and V × 1 B (fp8); Qwen3_5ForConditionalGeneration is not in speculative_hook.py's list and its config
    states mtp_num_hidden_layers, so the MTP layer is not in the target's cell. The draft's load, 'draft: 5.19 GB'
    in the page's memory_usage, holds its own embedding and LM head (248,320 × 5,120 × 2 B each, bf16 in the
    checkpoint) at the target's profile."""
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")
    ran = run_kvtop("plan", "--model", str(QWEN36), "--engine", "sglang", "--engine-version", "0.5.14", "--gpu",
                    "RTXPRO6000", "--cmd", OXCART, "--json")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["kv_bytes_per_token"] == 16 * 4 * 256 * 2 * 1 == 32_768
    own = [s for s in out["steps"] if "own embedding and LM head" in s["label"]]
    assert [s["bytes"] for s in own] == [-2 * 248_320 * 5_120 * 2]
    assert abs(out["token_capacity"] / LOGGED_TOKENS - 1) < 0.01  # was +3.2 % with the MTP layer in the cell
    assert out["token_capacity_min"] <= LOGGED_TOKENS <= out["token_capacity_max"]


def test_a_listed_class_without_a_path_gets_the_term_from_0_5_14_and_not_before() -> None:
    """DeepSeek-V3 (speculative_hook.py's list: the model's own path) at TP 8, bf16 MLA: 576 × 2 B a layer, 61 layers;
    0.5.14 adds the one MTP layer (`int(cell × (1 + 1 ÷ 61))`), 0.5.13's profile has no EAGLE term."""
    dsv3 = load("deepseek-ai--DeepSeek-V3.json")
    flags = ["--tp-size", "8", "--speculative-algorithm", "EAGLE", "--engine-version"]
    assert plan(dsv3, [*flags, "0.5.14"]).kv_bytes_per_token == int(61 * 1152 * (1 + 1 / 61)) == 62 * 1152
    assert plan(dsv3, [*flags, "0.5.13"]).kv_bytes_per_token == 61 * 1152


def test_a_draft_model_before_0_5_14_loads_after_the_pool_and_leaves_the_cell() -> None:
    """Llama-3.1-70B TP 8 with an EAGLE-3 head: 0.5.13's target sizes its pool in its own ModelRunner before the draft
    worker exists (80 layers × 512 B, no draft layer), the head's weights taken from what the fraction leaves."""
    llama = load("meta-llama--Llama-3.1-70B-Instruct.json")
    head = load("drafts/sgl-project--SpecForge-llama3-70B-eagle3.json")
    flags = ["--tp-size", "8", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/d/e3",
             "--engine-version"]  # fmt: skip
    old, new = plan(llama, [*flags, "0.5.13"], draft=head), plan(llama, [*flags, "0.5.14"], draft=head)
    assert (old.kv_bytes_per_token, new.kv_bytes_per_token) == (80 * 512, 81 * 512)
    charges = {t.charge for t in old.terms if t.feature is Feature.SPECULATIVE and "draft weights" in t.label}
    assert charges == {Charge.AFTER_POOL}
    assert {t.charge for t in new.terms if t.feature is Feature.SPECULATIVE and "draft weights" in t.label} == {
        Charge.RESIDENT
    }
