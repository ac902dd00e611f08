"""SGLang's explain over two real logs whose printed figures were misread: a token cap (C17), a draft's load (C24)."""

from __future__ import annotations

import json

from kvtop.cli import main
from tests.conftest import CASES, CONFIGS


def test_c17_pool_sizes_within_rounding_name_a_token_cap(capsys) -> None:
    """C17's log: `#tokens: 20480, K size: 0.12 GB, V size: 0.12 GB` and later `max_total_num_tokens=20480 …
    available_gpu_mem=76.95 GB`: the pool was capped, not short of memory. The printed sizes are 2-decimal GiB,
    so K + V lies in 0.23–0.25 GiB (0.115 + 0.115 to 0.125 + 0.125); ÷ (20,480 + page 1) rows that is
    0.23 × 2**30 // 20,481 = 12,058 to 0.25 × 2**30 // 20,481 = 13,106 B per token, which holds Qwen2-0.5B's
    24 layers × 2 KV heads × 64 × 2 (K, V) × 2 B = 12,288 B: not a cell difference (it was said as one)."""
    config = CONFIGS / "heldout" / "mlc--qwen2_0_5b.json"
    argv = ["explain", str(CASES / "sglang" / "C17" / "engine.log"), "--model", str(config), "--gpu", "H100",
            "--no-calibration-store", "--json"]  # fmt: skip
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["logged"]["token_capacity"] == 20_480
    ends = (out["logged"]["kv_bytes_per_token_low"], out["logged"]["kv_bytes_per_token_high"])
    assert ends == (int(0.23 * 2**30) // 20_481, int(0.25 * 2**30) // 20_481) == (12_058, 13_106)
    assert out["predicted"]["kv_bytes_per_token"] == 24 * 2 * 64 * 2 * 2 == 12_288
    assert out["verdict"] == "mismatch"
    assert "token cap (a --max-total-tokens setting or the context bound)" in out["cause"]
    assert "differ from what kvtop was told" not in out["cause"]
    assert not out["cause"].startswith("cause unknown")  # read from the log's own sizes: no flag change needed


def test_c24_draft_load_is_its_own_step(capsys) -> None:
    """C24's log loads the DeepSeek-V4 target (`avail mem=111.47 GB` before, `avail mem=17.47 GB, mem usage=94.00
    GB` after), then the DSpark draft (`avail mem=14.74 GB, mem usage=2.80 GB`): 111.47 − 94.00 = 17.47, not the
    14.74 that is free after both. The draft's load is shown apart, so the figures add up as the log printed them."""
    config = CONFIGS / "heldout" / "deepseek-ai--DeepSeek-V4-Flash.json"
    argv = ["explain", str(CASES / "sglang" / "C24" / "engine.log"), "--model", str(config), "--gpu", "GB10",
            "--no-calibration-store"]  # fmt: skip
    main(argv)
    text = capsys.readouterr().out
    order = ["free before load     119.69 GB (111.47 GiB)", "weights (mem usage)  100.93 GB (94.00 GiB)",
             "free after target    18.76 GB (17.47 GiB)", "draft weights        3.01 GB (2.80 GiB)",
             "free after all loads 15.83 GB (14.74 GiB)"]  # fmt: skip
    at = [text.index(line) for line in order]
    assert at == sorted(at)
    main([*argv, "--json"])
    logged = json.loads(capsys.readouterr().out)["logged"]
    assert logged["weights_bytes"] == round(94.00 * 2**30)
    assert logged["free_after_target_load_bytes"] == round(17.47 * 2**30)
    assert logged["draft_weights_bytes"] == round(2.80 * 2**30)
    assert logged["free_after_load_bytes"] == round(14.74 * 2**30)
