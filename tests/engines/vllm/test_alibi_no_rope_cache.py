"""ALiBi models hold no rope cos/sin cache, and `--attention-backend` (which decides Step1's refusal) is written
back and listed as read.

Before, `kvtop plan` of Step1ForCausalLM (tests/data/engine_diff/registry/configs/Step1ForCausalLM.json) with
`--attention-backend TRITON_ATTN` charged "the rope's cos/sin cache (32,768 positions × 64 × 2 B)" = 4,194,304 B
beside the weights, though vLLM 0.33.0's models/step1.py builds no rope (Step1Attention: Attention(use_alibi_sqrt=
True), no get_rope); its "engine flags:" line left the flag out and `--help` listed it as "accepted, not modelled".
vLLM's baichuan.py: BaichuanForCausalLM takes ALiBi unless hidden_size is 4,096 (Baichuan2-7B, rope).
"""

from __future__ import annotations

from kvtop.commands.common import engine_flags_help
from kvtop.domain.architectures.positions import alibi_positions
from kvtop.domain.calibration.estimate import preload_estimate
from kvtop.domain.calibration.terms import Term
from kvtop.domain.rope_cache import rope_cache_bytes
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS
from tests.engines.vllm.test_alibi_sqrt_backend import CONFIG, ledger

STEP1_BOOK = 6_600_136_704  # vLLM 0.33.0's meta build at TP 1 with TRITON_ATTN (tests/domain/test_step1_default.py)


def test_step1_s_weights_carry_no_rope_cache() -> None:
    model = load_config_file(CONFIG)
    assert alibi_positions(model) and rope_cache_bytes(model, 2, "rotary_embedding/base.py") is None
    solved = ledger("--attention-backend", "TRITON_ATTN")
    weights = preload_estimate(solved).term(Term.WEIGHTS)
    assert solved.weights_bytes == STEP1_BOOK
    assert weights is not None and "rope" not in weights.basis


def test_baichuan_takes_rope_only_at_hidden_4096() -> None:
    seven = load_config_file(CONFIGS / "heldout" / "mlc--baichuan.json")  # hidden 4,096: Baichuan2-7B's rope
    cache = rope_cache_bytes(seven, 2, "x")
    assert not alibi_positions(seven) and cache is not None and cache[0] == 4096 * 128 * 2  # positions × head dim × 2 B
    assert alibi_positions(seven.model_copy(update={"hidden_size": 5120}))  # Baichuan-13B, Baichuan2-13B: ALiBi


def test_the_backend_is_written_back_and_listed_as_read() -> None:
    assert ledger("--attention-backend", "TRITON_ATTN").settings.to_flags()[-2:] == ["--attention-backend", "TRITON_ATTN"]
    vllm = engine_flags_help().split("(--engine vllm)", 1)[1].split("(--engine", 1)[0]
    read = vllm.split("accepted, read by kvtop's rules", 1)[1].split("accepted, not modelled", 1)[0]
    assert "--attention-backend" in read
    not_modelled = vllm.split("accepted, not modelled", 1)[1]
    assert "--attention-backend" not in not_modelled
