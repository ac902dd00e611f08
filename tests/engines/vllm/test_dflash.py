"""vLLM's DFlash drafter (engines/vllm/dflash.py): its weights without the target's embedding and LM head, its layers
a KV spec of their own beside a hybrid's groups, its sliding layers by release.

The drafter: z-lab/Qwen3.6-27B-DFlash (tests/data/calibration/configs/z-lab--Qwen3.6-27B-DFlash.RECONSTRUCTED.json:
5 Qwen3 layers of hidden 5,120, 32 / 8 heads of 128, intermediate 17,408, an fc over 5 target layers).
- Weights, by the config's arithmetic: a layer's qkv 5,120 × 6,144, o 4,096 × 5,120, MLP 3 × 5,120 × 17,408, two norms
  of 5,120 and q/k norms of 128 = 319,826,176 parameters; × 5, the fc 25,600 × 5,120 and two norms: 1,730,213,120
  in BF16 = 3,460,426,240 B (the owner's '3.3GB' drafter). The embedding and LM head (2 × 248,320 × 5,120 × 2 B =
  4.74 GiB) are the target's (llm_base_proposer.py v0.24.0 :1325-1460). After the load vLLM copies every layer's K/V
  rows of qkv_proj into one tensor (qwen3_dflash.py v0.24.0 :305 torch.cat, from load_weights :616): 5 × 2 × 8 × 128
  × 5,120 × 2 B = 104,857,600 B, so 3,565,283,840 B at v0.24.0; from v0.25.0 also the k_norm weights stacked (v0.25.0
  :431-433): 5 × 128 × 2 B = 1,280 B, 3,565,285,120 B. At TP 2 a rank's layers are 5 × (5,120 × (2,048 + 1,024) +
  2,048 × 5,120 + 3 × 5,120 × 8,704 + 2 × 5,120 + 2 × 128) = 5 × 159,918,336, with the fc and norms whole (25,600 ×
  5,120 + 2 × 5,120 = 131,082,240): 930,673,920 parameters, 1,861,347,840 B; its K/V copy 5 × 2 × 4 × 128 × 5,120 × 2
  = 52,428,800 B: 1,913,776,640 B at v0.24.0.
- KV, a GB10 start pinned at --kv-cache-memory-bytes 15360M (vllm.jsonl `file56855606038-aeon-…-dflash10-…`, vLLM
  0.24.0): 'kv_cache_memory_bytes=16106127360', 'block size: 1808', 'GPU blocks: 869', 'Mamba cache: float32, mode
  align', 'GPU KV cache size: 269,589 tokens' for 262,144 a request. The drafter's 8 × 128 layers are a spec apart
  from the target's 4 × 256 (v1/core/kv_cache_utils.py v0.24.0 :1176-1213 groups layers by spec), so the kinds are
  16 target, 5 draft and 48 GDN layers: groups of 5 (the least), 4 + 1 attention and 10 GDN groups; a block
  5 × 1,808 × 2,048 B, 16,106,127,360 // 18,513,920 = 869; a request 5 × cdiv(262,144, 1,808) + 10 × (2 + 10) = 845
  (MambaSpec 'align': page × (2 + num_speculative_blocks), v1/kv_cache_interface.py :648-657); int(869 / 845 ×
  262,144) = 269,589. Merged with the target's layers (groups of 21) kvtop planned 207 blocks: 375,543 tokens.
- The L40S starts (`niushuai1991-…-dflash7-…`, `…-dflash3-…`, 32,768 a request): the logged 61,224 = int(355 / 190 ×
  32,768) and 79,488 = int(376 / 155 × 32,768), whole blocks of 5 × 20 + 10 × 9 and 5 × 21 + 10 × 5 a request.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.architectures.eagle3 import DFLASH_QWEN3_DRAFTERS
from kvtop.domain.engines.versions import from_flag
from kvtop.domain.engines.vllm.dflash import check_drafter, check_windows, drafter_bytes
from kvtop.domain.engines.vllm.release_calendar import CALENDAR
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.layout import ParallelLayout
from kvtop.sources.hub import load_config_file
from tests.data_paths import DATA

CONFIGS = DATA / "calibration" / "configs"
TARGET = str(CONFIGS / "Qwen--Qwen3.6-27B-FP8.RECONSTRUCTED.json")
DRAFTER = CONFIGS / "z-lab--Qwen3.6-27B-DFlash.RECONSTRUCTED.json"
SPEC = '{"method":"dflash","model":"z-lab/Qwen3.6-27B-DFlash","num_speculative_tokens":%d}'


@pytest.mark.parametrize(("release", "tp", "expected"), [
    ("0.24.0", 1, 3_565_283_840), ("0.25.0", 1, 3_565_285_120), ("0.33.0", 1, 3_565_285_120),
    ("0.24.0", 2, 1_913_776_640),
])  # fmt: skip
def test_the_drafter_holds_its_layers_fc_and_fused_kv_not_the_targets_embedding_and_head(
    release: str, tp: int, expected: int
) -> None:
    drafter = load_config_file(DRAFTER)
    assert drafter_bytes(drafter, ParallelLayout(tp=tp), from_flag(release, CALENDAR)) == expected


def _plan(capsys: pytest.CaptureFixture[str], gpu: str, launch: str) -> dict[str, object]:
    args = ["plan", "--model", TARGET, "--engine", "vllm", "--engine-version", "0.24.0", "--gpu", gpu, "--cmd", launch,
            "--draft-model", str(DRAFTER), "--json"]  # fmt: skip
    assert main(args) == 0
    plan: dict[str, object] = json.loads(capsys.readouterr().out)
    return plan


def test_pinned_pool_is_the_logs_blocks_and_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    launch = ("vllm serve X --quantization modelopt --kv-cache-dtype fp8_e4m3 --mamba-cache-dtype float32 "
              "--max-model-len 262144 --max-num-seqs 64 --max-num-batched-tokens 32768 --gpu-memory-utilization 0.49 "
              f"--kv-cache-memory-bytes 15360M --enable-prefix-caching --speculative-config '{SPEC % 10}'")  # fmt: skip
    plan = _plan(capsys, "GB10", launch)
    assert plan["num_blocks"] == 869
    assert plan["token_capacity"] == 269_589
    labels = [step["label"] for step in plan["steps"]]  # type: ignore[attr-defined]
    assert "blocks of 1,808 tokens (18,513,920 B each)" in labels
    # vLLM warns per KV spec (kv_cache_utils.py v0.24.0 :1195-1212): 4 of 20 slots for the target's 16 layers, none
    # for the drafter's 5 in one group of 5, 2 of 50 for the 48 GDN layers
    note = next(step["note"] for step in plan["steps"] if step["label"].startswith("blocks of 1,808"))  # type: ignore[attr-defined]
    assert ("'Add 4 padding layers, may waste at most 25.00% KV cache memory' (full: 4 groups of 5 for 16 layers); "
            "'Add 2 padding layers, may waste at most 4.17% KV cache memory' (mamba: 10 groups of 5 for 48 layers)"
            ) in note  # fmt: skip


@pytest.mark.parametrize(("draft_tokens", "per_request"), [(7, 190), (3, 155)])
def test_a_request_takes_the_logs_blocks(capsys: pytest.CaptureFixture[str], draft_tokens: int, per_request: int) -> None:
    launch = ("vllm serve X --kv-cache-dtype fp8_e4m3 --max-model-len 32768 --max-num-seqs 10 "
              "--gpu-memory-utilization 0.90 --max-num-batched-tokens 8192 --enable-prefix-caching "
              f"--speculative-config '{SPEC % draft_tokens}' --language-model-only")  # fmt: skip
    labels = [step["label"] for step in _plan(capsys, "L40S", launch)["steps"]]  # type: ignore[attr-defined]
    assert f"tokens: int(blocks ÷ {per_request} × 32,768)" in labels


@pytest.mark.parametrize(("release", "refused"), [("0.24.0", None), ("0.25.0", "refuses it"),
                                                  ("0.26.0", "V2 model runner"), ("0.33.0", "V2 model runner")])  # fmt: skip
def test_mixed_sliding_layers_by_release(release: str, refused: str | None) -> None:
    drafter = load_config_file(DRAFTER)  # 4 sliding_attention layers of 2,048 and a full one
    version = from_flag(release, CALENDAR)
    if refused is None:
        check_windows(drafter, "dflash", version)  # v0.24.0: every layer full attention, as planned
        return
    with pytest.raises(UnsupportedModelError, match=refused):
        check_windows(drafter, "dflash", version)


def _variant(tmp_path: Path, **changes: object) -> Path:
    """The drafter's config with `changes` (None: the key removed), written beside the test."""
    config = json.loads(DRAFTER.read_text())
    for key, value in changes.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    path = tmp_path / "drafter.json"
    path.write_text(json.dumps(config))
    return path


ALL_SLIDING = {"layer_types": ["sliding_attention"] * 5}
USE_SWA = {"layer_types": None, "dflash_config": {"target_layer_ids": [1, 16, 31, 46, 61], "use_swa": True}}
PINNED = ("vllm serve X --quantization modelopt --kv-cache-dtype fp8_e4m3 --mamba-cache-dtype float32 "
          "--max-model-len 262144 --max-num-seqs 64 --max-num-batched-tokens 32768 --gpu-memory-utilization 0.49 "
          f"--kv-cache-memory-bytes 15360M --enable-prefix-caching --speculative-config '{SPEC % 10}'")  # fmt: skip


@pytest.mark.parametrize("changes", [ALL_SLIDING, USE_SWA], ids=["all_sliding", "use_swa"])
def test_before_v0_25_every_drafter_layer_is_full(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, changes: dict[str, object]
) -> None:
    # v0.24.0 builds every DFlash layer full attention whatever layer_types or use_swa say (qwen3_dflash.py v0.24.0
    # :112-120): the AEON start's 869 blocks and 269,589 tokens, as with the shipped mixed layer_types
    args = ["plan", "--model", TARGET, "--engine", "vllm", "--engine-version", "0.24.0", "--gpu", "GB10", "--cmd",
            PINNED, "--draft-model", str(_variant(tmp_path, **changes)), "--json"]  # fmt: skip
    assert main(args) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (plan["num_blocks"], plan["token_capacity"]) == (869, 269_589)


@pytest.mark.parametrize("release", ["0.25.0", "0.26.0", "0.29.0"])
@pytest.mark.parametrize(("changes", "why"), [(ALL_SLIDING, "layer_types, all sliding"),
                                              (USE_SWA, "dflash_config.use_swa")], ids=["all_sliding", "use_swa"])  # fmt: skip
def test_from_v0_25_an_all_sliding_drafter_is_refused(
    tmp_path: Path, release: str, changes: dict[str, object], why: str
) -> None:
    drafter = load_config_file(_variant(tmp_path, **changes))
    with pytest.raises(UnsupportedModelError, match=f"sliding-window in every layer \\({why}\\)"):
        check_drafter(drafter, "dflash", from_flag(release, CALENDAR))


def test_without_the_drafters_config_dflash_is_refused_asking_for_it(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "--model", TARGET, "--engine", "vllm", "--engine-version", "0.24.0", "--gpu", "GB10", "--cmd",
            PINNED]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err
    assert "method=dflash: the drafter's config is not known" in err and "`kvtop plan`'s draft-model option" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("architecture", "release", "built"), [
    ("DFlashDraftModel", "0.24.0", True),
    ("MuseGlimmerAssistantModel", "0.28.0", True),  # speculative.py v0.28.0 :934-957; registry.py v0.29.0 :622-623
    ("DFlashMuseGlimmerAssistantModel", "0.29.0", True),
    ("MuseGlimmerAssistantModel", "0.25.1", False),  # not in the v0.25.1 registry
    ("DFlash2DraftModel", "0.29.0", False),  # qwen3_dflash2 (registry.py v0.29.0 :615): another layout
    ("DFlashLagunaForCausalLM", "0.29.0", False),  # laguna_dflash (v0.29.0 :631)
    ("Qwen3ForCausalLM", "0.29.0", False),
])  # fmt: skip
def test_the_drafter_is_one_vllms_registry_builds_as_dflash_qwen3(
    tmp_path: Path, architecture: str, release: str, built: bool
) -> None:
    drafter = load_config_file(_variant(tmp_path, architectures=[architecture], layer_types=["full_attention"] * 5))
    assert (drafter.dflash_fusion is not None) is (architecture in DFLASH_QWEN3_DRAFTERS)
    version = from_flag(release, CALENDAR)
    if built:
        check_drafter(drafter, "dflash", version)
        return
    with pytest.raises(UnsupportedModelError, match="not one vLLM .* builds as DFlashQwen3ForCausalLM"):
        check_drafter(drafter, "dflash", version)


def test_a_wider_drafter_keeps_its_own_embedding_from_v0_25() -> None:
    # llm_base_proposer.py v0.25.1 :1478-1489: hidden 5,120 beside a 4,096 target keeps the drafter's embedding,
    # 248,320 × 5,120 × 2 B = 2,542,796,800 B more than at v0.24.0 (which shares it whatever the width); beside both,
    # the fused context-KV copy (qwen3_dflash.py v0.24.0 :305: 5 × 2 × 8 × 128 × 5,120 × 2 B = 104,857,600 B) and from
    # v0.25.0 the k_norm stack (:431-433: 5 × 128 × 2 B = 1,280 B)
    drafter = load_config_file(DRAFTER)
    fused, norms = 5 * 2 * 8 * 128 * 5_120 * 2, 5 * 128 * 2
    shared = drafter_bytes(drafter, ParallelLayout(), from_flag("0.24.0", CALENDAR), target_hidden=4096)
    own = drafter_bytes(drafter, ParallelLayout(), from_flag("0.25.0", CALENDAR), target_hidden=4096)
    assert shared == 1_730_213_120 * 2 + fused
    assert own == 1_730_213_120 * 2 + 248_320 * 5_120 * 2 + fused + norms
    same_width = drafter_bytes(drafter, ParallelLayout(), from_flag("0.29.0", CALENDAR), target_hidden=5120)
    assert same_width == 1_730_213_120 * 2 + fused + norms


def test_the_embedding_and_head_assumed_shared_are_the_weights_error(capsys: pytest.CaptureFixture[str]) -> None:
    # kvtop reads no checkpoint: vLLM keeps a drafter's own embedding and head where it ships them
    # (llm_base_proposer.py v0.24.0 :1355-1375, :1409-1431), 2 × 248,320 × 5,120 × 2 B = 5,085,593,600 B here
    launch = ("vllm serve X --kv-cache-dtype fp8_e4m3 --max-model-len 32768 --max-num-seqs 10 "
              f"--gpu-memory-utilization 0.90 --speculative-config '{SPEC % 7}' --language-model-only")  # fmt: skip
    weights = next(term for term in _plan(capsys, "L40S", launch)["terms"] if term["term"] == "weights")  # type: ignore[attr-defined]
    assert weights["error_bytes"] >= 2 * 248_320 * 5_120 * 2
    assert "a DFlash drafter's embedding and LM head assumed the target's (its checkpoint not read): ± 4.74 GiB" in (
        weights["basis"])
