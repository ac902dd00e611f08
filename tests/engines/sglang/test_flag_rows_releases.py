"""The flag tables' first and last releases, re-read on 40 SGLang wheels (session 60): each expected value is a line
of a wheel's `python/sglang/srt/server_args.py` (argparse call, or the `A[...]` field `add_cli_args_from_dataclass`
turns into a flag from v0.5.14), read by hand, not the table's own scan."""

from __future__ import annotations

import json

from kvtop.domain.engines.sglang.flags import SglangFlags
from kvtop.domain.engines.sglang.flags_neutral import NEUTRAL_GROUPS
from kvtop.domain.engines.sglang.flags_table import RELEASES_READ, merged
from kvtop.domain.engines.sglang.flags_unmodelled import UNMODELLED
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

NEUTRAL = merged(group for _, group in NEUTRAL_GROUPS.values())


def test_the_phase_graph_fields_are_flags_from_0_5_14_not_0_5_16() -> None:
    # 0.5.14 server_args.py:1951 `cuda_graph_bs_prefill: A[Optional[List[int]], "..."]`, :1943 -max-bs-prefill, :1918
    # `cuda_graph_config`;
    # 0.5.13 server_args.py has none of them (no add_cli_args_from_dataclass before 0.5.14)
    for flag in ("--cuda-graph-bs-prefill", "--cuda-graph-max-bs-prefill", "--cuda-graph-config"):
        assert UNMODELLED[flag].first == "0.5.14", flag


def test_a_flag_gone_names_the_last_wheel_that_declares_it() -> None:
    # "--disable-piecewise-cuda-graph": 0.5.10rc0 server_args.py:5387, 0.5.19 :3959; no field of that name in 0.5.20
    row = UNMODELLED["--disable-piecewise-cuda-graph"]
    assert (row.first, row.last, row.source) == ("0.5.10rc0", "0.5.19", "srt/server_args.py:3959 (v0.5.19)")


def test_flags_only_releases_between_the_first_seven_had_are_refused_by_name() -> None:
    # "--enable-deepep-waterfill": 0.5.12 server_args.py:6141 … 0.5.15.post1; not in 0.5.9 nor 0.5.16
    row = UNMODELLED["--enable-deepep-waterfill"]
    assert (row.first, row.last) == ("0.5.12", "0.5.15.post1")
    assert "--enable-deepep-waterfill" in SglangFlags().unmodelled
    assert {"--record-nolora-graph", "--no-record-nolora-graph"} <= SglangFlags().unmodelled  # BooleanOptionalAction


def test_every_row_spans_read_releases() -> None:
    for table in (UNMODELLED, NEUTRAL):
        for flag, row in table.items():
            assert row.first in RELEASES_READ, flag
            assert row.last is None or RELEASES_READ.index(row.last) >= RELEASES_READ.index(row.first), flag


def test_default_chat_template_kwargs_is_memory_neutral() -> None:
    # session 60 (helper b: markat1/course-assistant's Qwen3-8B starts on HAMi slices, SGLang 0.5.20, typed it): a
    # default merged into each chat request's template kwargs on the CPU (0.5.20 srt/entrypoints/openai/
    # serving_chat.py:273-274), so the plan is the one without it
    assert "--default-chat-template-kwargs" in NEUTRAL
    path = DATA / "configs" / "Qwen--Qwen3-8B.json"
    model = model_from_config(json.loads(path.read_text()), source=path.name)
    plain = ["--tp-size", "1", "--mem-fraction-static", "0.85", "--max-running-requests", "8"]
    typed = [*plain, "--default-chat-template-kwargs", '{"enable_thinking": false}']
    tokens = [
        predict(model, parse_flags("sglang", flags).model_copy(update={"engine_version": "0.5.20"}),
                gpu_total_bytes=81559 << 20, gpu_name="H100").engine.token_capacity
        for flags in (plain, typed)
    ]  # fmt: skip
    assert tokens[0] == tokens[1]
