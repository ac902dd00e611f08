"""`--cuda-graph-backend-prefill disabled` / `--disable-prefill-cuda-graph` (v0.5.14 on): the launch turns the prefill
graphs off before `_handle_gpu_memory_settings`, whose reserve then holds none (`reserved_mem += len(bs) * 8` only
`if prefill.backend != Backend.DISABLED`: 0.5.16 server_args.py:4187-4191, 0.5.23 memory_hook.py:381-386); the
fraction is `round((total − reserve) / total, 3)`. The zcnrex Qwen3-VL-4B B300 start typed it on a multimodal model,
which SGLang already plans without prefill graphs (its log: 'Disable prefill CUDA graph because cuda_graph_config
resolved prefill.backend=disabled'), and logged '#tokens: 1607904' (sglang.jsonl
`zcnrex-qwen3-vl-4b-b300-control-devbuild`)."""

from __future__ import annotations

import re

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS

QWEN3_8B = ["plan", "--model", str(CONFIGS / "Qwen--Qwen3-8B.json"), "--engine", "sglang", "--gpu", "H100"]
RESERVE = re.compile(r"auto 0\.5\.23: \((\d+) − (\d+) MiB reserve")


def _reserve(capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, int, str]:
    assert main([*QWEN3_8B, "--engine-version", "0.5.23", *flags]) == 0
    line = next(text for text in capsys.readouterr().out.splitlines() if "− reserve" in text)
    found = RESERVE.search(line)
    assert found is not None
    return int(found[1]), int(found[2]), line


@pytest.mark.parametrize("flags", [("--cuda-graph-backend-prefill", "disabled"), ("--disable-prefill-cuda-graph",)])
def test_the_launchs_switch_leaves_the_prefill_graphs_out_of_the_reserve(
    capsys: pytest.CaptureFixture[str], flags: tuple[str, ...]
) -> None:
    total, bare, bare_line = _reserve(capsys)
    graphs = int(re.search(r"(\d+) MiB of it prefill graphs", bare_line)[1])  # type: ignore[index]
    assert graphs % 8 == 0 and graphs > 0  # 8 MiB a captured size
    same_total, off, off_line = _reserve(capsys, *flags)
    assert (same_total, off) == (total, bare - graphs)
    assert f"off for {flags[0]}" in off_line
    assert f"(1 − {round((total - off) / total, 3):g})" in off_line


@pytest.mark.parametrize(("flags", "said"), [
    (("--engine-version", "0.5.23", "--cuda-graph-backend-prefill", "full"), "'full' forces a prefill CUDA-graph backend"),
    (("--engine-version", "0.5.23", "--cuda-graph-backend-prefill", "breakable"), "'breakable' forces"),
    (("--engine-version", "0.5.13", "--cuda-graph-backend-prefill", "disabled"), "SGLang 0.5.13 has no"),
    (("--engine-version", "0.5.13", "--disable-prefill-cuda-graph"), "SGLang 0.5.13 has no"),
])  # fmt: skip
def test_another_backend_or_a_release_without_the_flag_is_refused_by_name(
    capsys: pytest.CaptureFixture[str], flags: tuple[str, ...], said: str
) -> None:
    assert main([*QWEN3_8B, *flags]) == 2
    err = capsys.readouterr().err
    assert said in err and flags[2] in err


def test_the_b300_start_as_typed_holds_the_logged_pool(capsys: pytest.CaptureFixture[str]) -> None:
    launch = ["plan", "--model", str(CONFIGS / "heldout" / "Qwen--Qwen3-VL-4B-Instruct.json"), "--engine", "sglang",
              "--engine-version", "0.5.23", "--gpu", "B300", "--bf16-gemm-backend", "cutedsl", "--dtype", "bfloat16",
              "--kv-cache-dtype", "bfloat16", "--attention-backend", "trtllm_mha", "--page-size", "32",
              "--enable-mixed-chunk", "--chunked-prefill-size", "16384", "--cuda-graph-backend-prefill", "disabled",
              "--enforce-disable-flashinfer-allreduce-fusion", "--host", "127.0.0.1", "--port", "32103"]  # fmt: skip
    assert main(launch) == 0
    interval = next(text for text in capsys.readouterr().out.splitlines() if text.startswith("Interval"))
    low, high = (int(n.replace(",", "")) for n in interval.split()[1:4:2])
    assert low <= 1_607_904 <= high
