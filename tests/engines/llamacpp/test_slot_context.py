"""The context one llama-server request can fill is its slot's, not -c: `int n_ctx_slot = llama_n_ctx_seq(ctx)`,
capped at the model's training context (tools/server/server-context.cpp, `load_model` → slots setup), and
`n_ctx_seq = GGML_PAD(n_ctx / n_seq_max, 256)` unless the cache is unified (src/llama-context.cpp). Expected
figures are that arithmetic by hand; the explain path already reads the log's `n_ctx_seq` as the context."""

from __future__ import annotations

import pytest

from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

LLAMA_31_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")  # max_position_embeddings 131072


def plan(flags: str):  # type: ignore[no-untyped-def]
    return predict(load_model(LLAMA_31_8B), parse_flags("llamacpp", flags.split()), gpu_total_bytes=80 * GIB)


def test_four_slots_split_the_context() -> None:
    """-c 16384 -np 4 (not unified): 4 streams of 16384 / 4 = 4096 cells; a request holds one slot's 4096."""
    ledger = plan("-c 16384 -np 4")
    assert ledger.engine.token_capacity == 16384
    assert ledger.context_length == 4096
    assert ledger.requests_at_context_length == 4.0


def test_a_unified_cache_lets_one_request_fill_it() -> None:
    """--kv-unified: n_ctx_seq = n_ctx, so one request may use all 16384 cells."""
    assert plan("-c 16384 -np 4 --kv-unified").context_length == 16384


def test_a_slot_beyond_the_training_context_is_capped() -> None:
    """-c 262144 -np 1: n_ctx_seq 262144 > n_ctx_train 131072 → the server caps the slot at 131072."""
    ledger = plan("-c 262144 -np 1")
    assert ledger.engine.token_capacity == 262144
    assert ledger.context_length == 131072


# The slot's context by build (kvtop/domain/engines/llamacpp/slot_context.py, llamacpp.md §1, §4). Expected figures
# are llama.cpp's arithmetic by hand: before b6925 `n_ctx_slot = n_ctx / n_parallel` (tools/server/server.cpp
# `init()`), from b6925 (commit cd5e3b57, PR #16736) `min(n_ctx_seq, n_ctx_train)`, and where PR #28030 is read
# (b10754) YaRN flags re-adjust `n_ctx_train = n_ctx_orig_yarn / rope_freq_scale` (src/llama-context.cpp).
YARN_X2 = "--rope-scaling yarn --rope-scale 2"


def test_before_b6925_the_slot_is_not_capped() -> None:
    """b6900 -c 262144 -np 1: 262144 / 1, no cap at n_ctx_train 131072 (the cap came with cd5e3b57, b6925)."""
    assert plan("-c 262144 -np 1 --engine-version b6900").context_length == 262144


def test_before_b6925_a_unified_cache_still_splits_the_context_over_the_slots() -> None:
    """b6900 -c 16384 -np 4 --kv-unified: the server knew no unified slots yet: n_ctx / n_parallel = 4096."""
    ledger = plan("-c 16384 -np 4 --kv-unified --engine-version b6900")
    assert ledger.engine.token_capacity == 16384
    assert ledger.context_length == 4096


def test_from_b6925_the_slot_is_capped_at_the_training_context() -> None:
    assert plan("-c 262144 -np 1 --engine-version b6925").context_length == 131072


def test_yarn_flags_do_not_lift_the_cap_before_pr_28030() -> None:
    """b8000 (issue #17459: the cap ignores RoPE flags; #22140: still so at b8850): 131072, nothing unread."""
    ledger = plan(f"-c 262144 -np 1 {YARN_X2} --engine-version b8000")
    assert ledger.context_length == 131072
    assert ledger.engine.not_modelled == ()


def test_yarn_flags_between_b8850_and_b10754_are_named_not_modelled() -> None:
    """PR #28030's first build is not read: the plan keeps the cap and says so."""
    ledger = plan(f"-c 262144 -np 1 {YARN_X2} --engine-version b9000")
    assert ledger.context_length == 131072
    assert len(ledger.engine.not_modelled) == 1 and "PR #28030" in ledger.engine.not_modelled[0]


def test_yarn_flags_lift_the_cap_where_pr_28030_is_read() -> None:
    """b10754 --rope-scale 2: rope_freq_scale 0.5, n_ctx_train 131072 / 0.5 = 262144 ≥ n_ctx_seq 262144 (the
    b10754 log in meta-oss-cookbook#37: `n_ctx_train adjusted to 262144` from 131072 at `--rope-scale 2`)."""
    assert plan(f"-c 262144 -np 1 {YARN_X2} --engine-version b10754").context_length == 262144


def test_yarn_orig_ctx_sets_the_base_the_scale_multiplies() -> None:
    """--yarn-orig-ctx 16384 --rope-scale 4: n_ctx_train 16384 / 0.25 = 65536, the cap of n_ctx_seq 262144."""
    flags = "-c 262144 -np 1 --rope-scaling yarn --rope-scale 4 --yarn-orig-ctx 16384 --engine-version b10754"
    assert plan(flags).context_length == 65536


def test_a_scale_without_yarn_leaves_the_cap() -> None:
    """--rope-scale 2 alone (the model's scaling type, none for Llama 3.1's llama3 rope): n_ctx_train stays."""
    assert plan("-c 262144 -np 1 --rope-scale 2 --engine-version b10754").context_length == 131072


def test_yarn_flags_over_a_model_s_own_yarn_are_not_modelled() -> None:
    """gpt-oss-20b ships YaRN (factor 32 over 4096): the GGUF's rope_freq_scale_train is not 1, which kvtop's
    re-adjustment would need; the slot keeps the cap and says it is not modelled."""
    from kvtop.domain.engines.llamacpp import RULES
    from kvtop.domain.engines.llamacpp.cells import cache_cells
    from kvtop.domain.engines.llamacpp.slot_context import slot_context
    from kvtop.domain.engines.versions import NOT_STATED

    model = load_model(str(CONFIGS / "openai--gpt-oss-20b.json"))  # max_position_embeddings 131072
    settings = parse_flags("llamacpp", f"-c 262144 -np 1 {YARN_X2} --engine-version b10754".split())
    slot = slot_context(model, settings, cache_cells(model, settings, 10754), 10754)
    assert slot.tokens == 131072 and slot.not_modelled is not None and "yarn" in slot.not_modelled
    assert RULES.context_length(model, settings, NOT_STATED) == 131072


# `--kv-unified-per-slot N` (ggml-org/llama.cpp PR #24124, from b10662): `n_ctx_slot()` is
# `min(llama_n_ctx_seq, N, n_ctx_train)` (tools/server/server-context.cpp) and, with no -c, tools/server/server.cpp
# sizes the pool `n_ctx = n_parallel * N`. Expected figures are that arithmetic, and the PR's own logs.
def test_the_per_slot_flag_sizes_the_pool_and_caps_each_slot() -> None:
    """The PR's first example, no -c and no -np (auto: 4 unified slots) with `--kv-unified-per-slot 4096`: it
    logs `capping per-slot context (16384) to --kv-unified-per-slot (4096)` and `new slot, n_ctx = 4096`."""
    ledger = plan("--kv-unified-per-slot 4096 --engine-version b10662")
    assert ledger.engine.token_capacity == 16384
    assert ledger.context_length == 4096
    assert ledger.requests_at_context_length == 4.0


def test_with_c_the_per_slot_flag_only_caps_the_slot() -> None:
    """The PR's second example, `-c 8192 --kv-unified-per-slot 4096`: the pool stays -c's 8192 (unified, so
    n_ctx_seq 8192), each slot is capped at 4096."""
    ledger = plan("-c 8192 --kv-unified-per-slot 4096")
    assert ledger.engine.token_capacity == 8192
    assert ledger.context_length == 4096


def test_a_per_slot_cap_above_the_slot_does_not_bind() -> None:
    """-c 16384 -np 4 (4 streams of 4096) with a cap of 8192: min(4096, 8192) = 4096 (the server warns the cap
    has no effect); with -c 0 the pool is the training context 131072 and the cap 8192 binds."""
    assert plan("-c 16384 -np 4 --kv-unified-per-slot 8192").context_length == 4096
    pinned = plan("-c 0 --kv-unified-per-slot 8192")
    assert pinned.engine.token_capacity == 131072
    assert pinned.context_length == 8192


def test_the_per_slot_flag_is_refused_before_its_first_build() -> None:
    """b10661: llama-server has no such argument; kvtop refuses it naming the PR and the first build."""
    from kvtop.domain.errors import InputError

    with pytest.raises(InputError, match="b10662"):
        plan("-c 8192 --kv-unified-per-slot 4096 --engine-version b10661")


def test_override_kv_is_refused_by_name() -> None:
    """`--override-kv llama.context_length=int:262144` would set n_ctx_train (src/llama-model-loader.cpp `get_key`
    returns the override), which kvtop does not read: refused naming the flag, not planned at the GGUF's 131072."""
    from kvtop.domain.errors import InputError

    with pytest.raises(InputError, match="context_length=int:N sets n_ctx_train") as refused:
        plan("-c 262144 -np 1 --override-kv llama.context_length=int:262144")
    assert refused.value.field == "--override-kv"


@pytest.mark.parametrize(
    ("flags", "field"),
    [
        ("--rope-freq-scale nan", "--rope-freq-scale"),
        ("--rope-freq-scale -2", "--rope-freq-scale"),
        ("--rope-freq-scale 1e39", "--rope-freq-scale"),  # beyond a C float: std::stof throws out_of_range
        ("--rope-scale 2 --yarn-orig-ctx nan", "--yarn-orig-ctx"),
        ("--rope-scale 2 --yarn-orig-ctx -16384", "--yarn-orig-ctx"),
        ("--rope-scale 2 --yarn-orig-ctx 4294967296", "--yarn-orig-ctx"),  # beyond std::stoi's int
    ],
)
def test_a_scale_flag_that_is_no_number_llama_cpp_reads_is_refused_by_name(flags: str, field: str) -> None:
    """common/arg.cpp reads these with std::stof / std::stoi: not a finite, non-negative number is refused
    naming the flag (a negative scale was ignored and nan ended in a traceback)."""
    from kvtop.domain.errors import InputError

    with pytest.raises(InputError) as refused:
        plan(f"-c 262144 -np 1 --rope-scaling yarn {flags} --engine-version b10754")
    assert refused.value.field == field


def test_a_scale_of_0_is_the_model_s() -> None:
    """`--rope-freq-scale 0` / `--yarn-orig-ctx 0`: llama.cpp's "from the model" (common/common.h defaults)."""
    flags = "-c 262144 -np 1 --rope-scaling yarn --rope-freq-scale 0 --yarn-orig-ctx 0 --engine-version b10754"
    assert plan(flags).context_length == 131072


def test_cli_refuses_a_nan_scale_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from kvtop.cli import main

    args = ["plan", "--model", LLAMA_31_8B, "--engine", "llamacpp", "--engine-version", "b10754", "--gpu", "H100",
            "-c", "262144", "-np", "1", "--rope-scaling", "yarn", "--rope-freq-scale", "nan"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("kvtop: error: --rope-freq-scale: ") and err.count("\n") == 1 and "Traceback" not in err
