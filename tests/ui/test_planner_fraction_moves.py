"""A planner edit that moves the engine's automatic memory fraction says why under the table (session 57's operator
run: PP 1 → 41 at TP8 turned SGLang's 'auto: 0.818' into 'auto: 0.316' and the reserve into 52.75 GiB a rank, with
no word of the rule).

The figure is SGLang's own: `_handle_gpu_memory_settings` (python/sglang/srt/server_args.py, v0.5.x) reserves
512 MiB + 1.5 MiB × max(chunked_prefill_size, 2048) + 2 MiB × cuda_graph_max_bs + tp_size × pp_size / 8 × 1024 MiB
("Some adjustments for large parallel size"), and takes round((gpu_mem − reserve) ÷ gpu_mem, 3). On an H100
(81,559 MiB; chunked prefill 8,192 and graph batch 512 at TP ≥ 4 for its class) at TP8: 512 + 12,288 + 1,024 + 1,024
= 14,848 MiB, 0.818; at TP8 PP41 the parallel term is 8 × 41 / 8 × 1024 = 41,984 MiB: 55,808 MiB, 0.316."""

from __future__ import annotations

from textual.widgets import Input

from tests.ui.conftest import wait_for
from tests.ui.helpers import shown

H100_MIB = 81_559
BASE_RESERVE_MIB = 512 + 1.5 * 8_192 + 2 * 512  # metadata, prefill activations, decode CUDA graphs


def sglang_auto_fraction(tp: int, pp: int) -> tuple[int, float]:
    reserve = BASE_RESERVE_MIB + tp * pp / 8 * 1024
    return round(reserve), round((H100_MIB - reserve) / H100_MIB, 3)


async def test_pp_41_says_the_fraction_moved_and_the_rule_it_came_from(planner_on):
    tp8_reserve, tp8 = sglang_auto_fraction(8, 1)
    pp41_reserve, pp41 = sglang_auto_fraction(8, 41)
    assert (tp8_reserve, tp8, pp41_reserve, pp41) == (14_848, 0.818, 55_808, 0.316)
    async with planner_on(size=(160, 48)) as (_, pilot, screen):
        assert "memory fraction" not in shown(screen, "#plan-result")  # nothing moved yet
        await pilot.press("tab", "4", "1")  # TP → PP, its text selected on focus
        await wait_for(pilot, lambda: screen.outcome.after is not None and screen.outcome.after.layout.pp == 41)
        assert screen.query_one("#plan-memory_fraction", Input).placeholder == f"auto: {pp41}"
        parallel = 8 * 41 * 1024 // 8  # the term that moved: 41,984 MiB, named so the 0.316 reads
        expected = (f"memory fraction {tp8} → {pp41} from auto 0.5.9: ({H100_MIB} − {pp41_reserve} MiB reserve, "
                    f"{parallel} MiB of it for 328 GPUs of TP × PP (8 × 41; 1,024 MiB per 8 GPUs)")
        assert expected in shown(screen, "#plan-result")
