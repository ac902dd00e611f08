"""vLLM hybrids with --enable-prefix-caching before v0.26.0 (#27, session 68): opt-in, but run.

From v0.15.0 (config/cache.py:127 mamba_cache_mode) `MambaModelConfig.verify_and_update_config` turns prefix caching on
a hybrid into mamba_cache_mode 'align' (models/config.py :420-432 at v0.24.0, :370-382 at v0.18.0; 'all' for a class
that supports Mamba prefix caching, not modelled). 'align' takes the 'none' branch's block (platforms/interface.py:766
at v0.24.0, models/config.py:204 at v0.18.0) and 2 state blocks a request per Mamba group (v1/kv_cache_interface.py
MambaSpec.max_memory_usage_bytes, :654-655 at v0.24.0). Before v0.15.0 vLLM drops prefix caching for a class without
Mamba prefix caching (models/config.py:344-348 at v0.14.0).

The records (tests/data/calibration/SOURCES.md, sessions 67-68), by hand:
- club-3090 #612 / #652, nvidia/Qwen3.6-35B-A3B-NVFP4 on an RTX 5090, vLLM 0.24.0, fp8 KV, 131,072: the GDN state
  3 × 8,192 × 2 + 32 × 128 × 128 × 4 = 2,146,304 B, the attention token 2 KV heads × 256 × 2 × 1 B = 1,024 B, the
  block 16 × cdiv(2,146,304, 16 × 1,024) = 2,096; 10 attention + 30 GDN layers: groups of 10, a block 10 × 2,096 ×
  1,024 = 21,463,040 B; a request cdiv(131,072, 2,096) = 63 + 3 groups × 2 = 69 blocks. The logs' 5.98 GiB gives
  299 blocks, int(299 ÷ 69 × 131,072) = 567,978 (logged 567,978); 6.01 GiB gives 300, 569,878 (logged 569,878).
  With one state block a group ('none') no block count gives either: 66 a request.
- fancai's Modal notes, Qwen/Qwen3.5-9B on an L40S, vLLM 0.18.0, fp8 KV, 65,536: the attention token 4 × 256 × 2 ×
  1 B = 2,048 B, block 16 × cdiv(2,146,304, 32,768) = 1,056; 8 + 24 layers, 4 groups of 8 (17,301,504 B a block);
  20.27 GiB gives 1,257 blocks, 1,257 // 4 × 1,056 = 331,584 (logged 331,584; v0.18.0 prints blocks // groups × block).
"""

from __future__ import annotations

from typing import Any

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS
from tests.data_paths import DATA
from tests.engines.measured_flags import plan_json

GIB = 1 << 30
NVFP4 = str(CONFIGS / "heldout" / "nvidia--Qwen3.6-35B-A3B-NVFP4.json")
CLUB = ("--model", NVFP4, "--engine", "vllm", "--engine-version", "0.24.0", "--gpu", "RTX 5090",
        "--max-model-len", "131072", "--gpu-memory-utilization", "0.92", "--max-num-seqs", "1",
        "--max-num-batched-tokens", "8192", "--kv-cache-dtype", "fp8")  # fmt: skip
QWEN35_9B = str(DATA / "calibration" / "configs" / "Qwen--Qwen3.5-9B.RECONSTRUCTED.json")
MODAL = ("--model", QWEN35_9B, "--engine", "vllm", "--engine-version", "0.18.0", "--gpu", "L40S",
         "--max-model-len", "65536", "--kv-cache-dtype", "fp8")  # fmt: skip
NEMOTRON = str(CONFIGS / "heldout" / "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4.json")


def _club(capsys: pytest.CaptureFixture[str], pool_gib: float, cmd: str) -> dict[str, Any]:
    return plan_json(capsys, CLUB, "--cmd", cmd, "--kv-cache-memory-bytes", str(int(pool_gib * GIB)))


@pytest.mark.parametrize(("pool_gib", "blocks", "tokens"), [(5.98, 299, 567_978), (6.01, 300, 569_878)])
def test_club_3090_prefix_caching_at_0_24_reproduces_the_logged_tokens(
    capsys: pytest.CaptureFixture[str], pool_gib: float, blocks: int, tokens: int
) -> None:
    out = _club(capsys, pool_gib, "vllm serve nvidia/Qwen3.6-35B-A3B-NVFP4 --enable-prefix-caching")
    assert out["page_size"] == 2_096
    assert out["num_blocks"] == blocks
    assert out["token_capacity"] == tokens
    assert out["kv_pool_bytes"] == blocks * 21_463_040


def test_without_prefix_caching_a_request_takes_one_state_block_a_group(capsys: pytest.CaptureFixture[str]) -> None:
    """The same pool in mode 'none': 63 + 3 = 66 blocks a request, int(299 ÷ 66 × 131,072) = 593,795 (not logged)."""
    out = _club(capsys, 5.98, "vllm serve nvidia/Qwen3.6-35B-A3B-NVFP4")
    assert (out["page_size"], out["num_blocks"], out["token_capacity"]) == (2_096, 299, 593_795)


def test_mamba_cache_mode_all_falls_back_to_align_for_a_gdn_hybrid(capsys: pytest.CaptureFixture[str]) -> None:
    """models/config.py:429-432 at v0.24.0: 'all' on a class without Mamba prefix caching becomes 'align'."""
    cmd = "vllm serve nvidia/Qwen3.6-35B-A3B-NVFP4 --enable-prefix-caching --mamba-cache-mode all"
    assert _club(capsys, 5.98, cmd)["token_capacity"] == 567_978


def test_modal_qwen35_9b_at_0_18_reproduces_the_logged_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_json(capsys, MODAL, "--cmd", "vllm serve Qwen/Qwen3.5-9B --enable-prefix-caching",
                    "--kv-cache-memory-bytes", str(int(20.27 * GIB)))  # fmt: skip
    assert (out["page_size"], out["num_blocks"], out["token_capacity"]) == (1_056, 1_257, 331_584)


@pytest.mark.parametrize(("version", "said"), [
    ("0.24.0", "default mamba_cache_mode for NemotronHForCausalLM with prefix caching on is 'all'"),
    ("0.14.0", "keeps prefix caching on for NemotronHForCausalLM"),
])  # fmt: skip
def test_a_mamba_prefix_caching_class_is_refused(
    capsys: pytest.CaptureFixture[str], version: str, said: str
) -> None:
    """NemotronH supports Mamba prefix caching (nemotron_h.py SupportsMambaPrefixCaching at v0.14.0 and v0.24.0):
    'all' from v0.15.0, the Mamba chunk's block before; neither is modelled."""
    args = ["plan", "--json", "--no-calibration-store", "--model", NEMOTRON, "--engine", "vllm", "--engine-version",
            version, "--gpu", "H100", "--cmd", "vllm serve x --max-model-len 8192 --enable-prefix-caching"]  # fmt: skip
    assert main(args) != 0
    assert said in capsys.readouterr().err
