"""The planner's EP field on a launch that spreads experts by a switch (vLLM's `--enable-expert-parallel`: no
size of its own, experts over tp × dp ranks, vllm/config/parallel.py): the field shows the EP the layout runs,
and 1 turns the switch off, so an operator can act on vLLM's own refusal of the switch on a model without experts
('Number of experts in the model must be greater than 0 when expert parallelism is enabled.':
vllm/config/model.py _verify_with_expert_parallelism; kvtop/domain/engines/vllm/dense_ep.py)."""

from __future__ import annotations

from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.ui.planning import apply_edits, field_texts, plan
from tests.ui.fakes import H100_TOTAL_BYTES, LLAMA_70B_REF, llama_model


def _vllm_dp8_ep() -> LaunchSettings:
    # the dsv3-dp-attention-vllm demo's launch: TP1 DP8 with --enable-expert-parallel (its layout row: TP1 DP8 EP8)
    return parse_flags("vllm", ["--model", LLAMA_70B_REF, "--data-parallel-size", "8", "--enable-expert-parallel",
                                "--engine-version", "0.11.0"])  # fmt: skip


def test_the_ep_field_shows_the_switch_as_tp_times_dp() -> None:
    # session 46, F5: the field said 'EP 1' beside the layout row's 'TP1 DP8 EP8'; 1 × 8 = 8
    settings = _vllm_dp8_ep()
    texts = field_texts(settings)
    assert (texts["tp"], texts["dp"], texts["ep"]) == ("1", "8", "8")
    unchanged = apply_edits(settings, texts)
    assert unchanged == settings  # the shown 8 keeps the switch: an untouched form re-solves the same launch
    assert "--enable-expert-parallel" in unchanged.to_flags()


def test_ep_one_turns_the_switch_off_and_follows_a_dp_edit() -> None:
    settings = _vllm_dp8_ep()
    texts = field_texts(settings)
    off = apply_edits(settings, {**texts, "ep": "1"})
    assert (off.effective_ep, off.enable_expert_parallel) == (1, False)
    assert "--enable-expert-parallel" not in off.to_flags()
    halved = apply_edits(settings, {**texts, "dp": "4"})
    assert halved.effective_ep == 4  # the switch kept: experts over tp × dp = 1 × 4


def test_a_dense_model_plans_once_ep_is_one() -> None:
    # Llama-3-70B has no experts: with the switch on, the edit is refused on the EP field; EP 1 plans it
    settings = _vllm_dp8_ep()
    texts = field_texts(settings)
    model = llama_model()
    refused = plan(model, settings, texts, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100")
    assert refused.after is None and refused.error_field == "ep", refused.error
    assert "Number of experts in the model must be greater than 0" in (refused.error or "")
    fixed = plan(model, settings, {**texts, "ep": "1"}, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100")
    assert fixed.after is not None, fixed.error
