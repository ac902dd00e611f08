"""SGLang's MoE communicator groups at 1 < --ep-size < --tp-size on a model with routed experts (session 59, #27).

Expected outcomes from SGLang's code (srt/distributed/parallel_state.py `initialize_model_parallel`, read in the
wheels): 0.4.10 – 0.5.1.post3 build moe_ep and moe_tp with pynccl (one pynccl communicator more than ep 1), 0.5.2 –
0.5.10.post1 with pynccl and custom all-reduce (two more), 0.5.11 on with neither (torch's NCCL communicator forms at
the first collective, after the pool). The model is Qwen3-Coder-30B-A3B (128 experts, moe_intermediate_size 768), on
eight H100s.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

H100_TOTAL = 81_559 * 2**20  # the 81,559 MiB H100 SXM CUDA reports
CONFIG = DATA / "calibration" / "configs" / "Qwen--Qwen3-Coder-30B-A3B-Instruct.json"


def _moe() -> ModelSpec:
    model = model_from_config(json.loads(CONFIG.read_text()), source=CONFIG.name)
    assert model.moe is not None and model.moe.num_routed_experts == 128
    return model


def _plan(release: str, ep: int) -> Ledger:
    flags = ["--model", "m", "--engine-version", release, "--tp-size", "8", "--context-length", "32768"]
    settings = parse_flags("sglang", [*flags, "--ep-size", str(ep)] if ep > 1 else flags)
    return predict(_moe(), settings, gpu_total_bytes=H100_TOTAL, gpu_name="H100", measured=MeasuredInputs())


@pytest.mark.parametrize(
    ("release", "opens"),
    [("0.4.10.post2", "one more pynccl communicator than ep 1"), ("0.5.1.post3", "one more pynccl communicator"),
     ("0.5.2", "two pynccl communicators and two custom all-reduces"), ("0.5.10.post1", "two pynccl communicators")],
)  # fmt: skip
@pytest.mark.parametrize("ep", [2, 4])
def test_ep_inside_tp_is_not_modelled_where_the_groups_open_communicators(release: str, opens: str, ep: int) -> None:
    with pytest.raises(LayoutError, match=rf"^--ep: not modelled: at ep {ep} inside tp 8 SGLang {release} opens {opens}"):
        _plan(release, ep)


@pytest.mark.parametrize("release", ["0.5.11", "0.5.23"])
@pytest.mark.parametrize("ep", [2, 4])
def test_from_0_5_11_ep_inside_tp_gets_ep_1s_pool(release: str, ep: int) -> None:
    """No communicator before the pool, and the experts a rank holds weigh the same: 128 ÷ ep experts of 768 ÷ (8 ÷ ep)
    columns is 128 × 768 ÷ 8 either way; the plan says why."""
    one, inside = _plan(release, 1), _plan(release, ep)
    assert inside.ranks[0].weights_bytes == one.ranks[0].weights_bytes
    assert inside.engine.token_capacity == one.engine.token_capacity > 0
    said = [note for note in inside.engine.notes if f"--ep-size {ep} inside --tp-size 8" in note]
    assert len(said) == 1 and "use_pynccl=False, use_custom_allreduce=False" in said[0]
    assert not any("inside --tp-size" in note for note in one.engine.notes)


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
def test_ep_equal_to_tp_holds_no_group_of_its_own(release: str) -> None:
    """At ep == tp `_MOE_EP = _TP` (0.5.9 :1801, 0.5.23 :2894): planned, no groups note."""
    full = _plan(release, 8)
    assert full.engine.token_capacity > 0 and not any("inside --tp-size" in n for n in full.engine.notes)
