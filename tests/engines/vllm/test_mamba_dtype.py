"""vLLM's `--mamba-cache-dtype` / `--mamba-ssm-cache-dtype` (kvtop/domain/engines/vllm/mamba_dtype.py): the conv and
SSM state's element bytes, hence the state page and the hybrid block.

Expected values: vLLM's arithmetic by hand — MambaSpec's page is the sum over the state's tensors of their elements
× their dtype's bytes; the conv dtype is `get_kv_cache_torch_dtype(mamba_cache_dtype, model dtype)`, the SSM's the
ssm flag's, `auto` the conv's (MambaStateDtypeCalculator._mamba_state_dtype, v0.11.0 mamba_utils.py:47-61, v0.24.0
:84-96); NemotronH's config class puts the config's dtype, else float16 (v0.13.0 models/config.py:501-510), in
place of an `auto` SSM dtype; a gated delta net passes the ssm flag from v0.17.0 (qwen3_next.py v0.16.0:230-232,
v0.17.0:339-343). The AEON GB10 start (tests/data/calibration/vllm.jsonl, id containing 'aeon') logged
'block size: 1808' under `--mamba-cache-dtype float32`: an independent check of the page.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.cli import main
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.kv_storage import kv_storage_for
from kvtop.domain.engines.vllm.mamba_dtype import state_dtypes
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.kv import kv_book
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.data_paths import DATA
from tests.engines.measured_flags import plan_json

QWEN36 = str(DATA / "calibration" / "configs" / "Qwen--Qwen3.6-27B-FP8.RECONSTRUCTED.json")
DFLASH = str(DATA / "calibration" / "configs" / "z-lab--Qwen3.6-27B-DFlash.RECONSTRUCTED.json")
FALCON_H1 = str(CONFIGS / "heldout" / "tiiuae--Falcon-H1-0.5B.json")
NEMOTRON_H = str(CONFIGS / "nvidia--Nemotron-H-56B-Base-8K.json")
JAMBA = str(CONFIGS / "heldout" / "ai21labs--AI21-Jamba-1.5-Mini.json")
KIMI_LINEAR = str(CONFIGS / "heldout" / "wave5" / "moonshotai--Kimi-Linear-48B-A3B-Instruct.json")
# the AEON start's launch (its note in vllm.jsonl), at vLLM 0.24.0 on the GB10
AEON = ("vllm serve X --quantization modelopt --kv-cache-dtype fp8_e4m3 --attention-backend TRITON_ATTN "
        "{dtype}--max-model-len 262144 --max-num-seqs 64 --max-num-batched-tokens 32768 --gpu-memory-utilization 0.49 "
        "--kv-cache-memory-bytes 15360M --speculative-config "
        "'{{\"method\":\"dflash\",\"model\":\"z-lab/Qwen3.6-27B-DFlash\",\"num_speculative_tokens\":10}}'")  # fmt: skip


def _state(path: str, release: str, **flags: str) -> int:
    """One request's state in the KV book's state pool, every state layer of the rank (tp 1)."""
    model = load_model(path)
    settings = LaunchSettings(engine="vllm", flags=flags)
    storage = kv_storage_for(model, settings, ResolvedVersion(text=release))
    pool = kv_book(model, ParallelLayout(), range(model.num_layers), "bf16", storage).pool("state")
    assert pool is not None and pool.layers
    return pool.bytes_per_request // pool.layers


def _aeon(capsys: pytest.CaptureFixture[str], dtype: str) -> dict[str, Any]:
    base = ("--model", QWEN36, "--engine", "vllm", "--engine-version", "0.24.0", "--gpu", "GB10",
            "--draft-model", DFLASH)  # dflash is planned with its drafter's config (engines/vllm/dflash.py)
    return plan_json(capsys, base, "--cmd", AEON.format(dtype=dtype))


def test_bfloat16_is_taken_from_v0_22_0() -> None:
    """MambaDType gains bfloat16 at v0.22.0 (config/cache.py:35): Falcon-H1's state as under `auto` (bf16)."""
    assert _state(FALCON_H1, "0.22.0", **{"mamba-cache-dtype": "bfloat16"}) == 403_968


def test_the_aeon_start_s_float32_state_gives_its_logged_block(capsys: pytest.CaptureFixture[str]) -> None:
    """Qwen3.6-27B's GDN layer under 10 DFlash tokens keeps 3 + 10 conv rows of 10,240 channels: in float32
    13 × 10,240 × 4 + 48 × 128 × 128 × 4 (the config's mamba_ssm_dtype) = 3,678,208 B; the fp8 attention token of
    a layer 4 × 256 × 2 × 1 = 2,048 B; the block 16 × cdiv(3,678,208, 16 × 2,048) = 16 × 113 = 1,808 (the log's
    'block size: 1808'). Without the flag the conv rows are 2 B: 3,411,968 B, 16 × 105 = 1,680."""
    assert _aeon(capsys, "--mamba-cache-dtype float32 ")["page_size"] == 1_808
    assert _aeon(capsys, "")["page_size"] == 1_680


def test_a_gdn_s_both_states_follow_the_cache_dtype() -> None:
    """3 × 10,240 × 4 + 48 × 128 × 128 × 4 = 3,268,608 B at v0.16.0 and v0.24.0 alike: at v0.16.0 the GDN passes no
    ssm dtype (qwen3_next.py:230-232, read in the v0.16.0 wheel; Qwen3.5's class arrives at v0.17.0, so this is
    Qwen3-Next's rule applied to Qwen3.6's geometry), so the SSM state follows the cache dtype; at v0.24.0 its 4 B is
    the config's mamba_ssm_dtype float32, which Qwen3.5's config class puts in place of `auto` (models/config.py
    :606-626), not the cache dtype's."""
    for release in ("0.16.0", "0.24.0"):
        assert _state(QWEN36, release, **{"mamba-cache-dtype": "float32"}) == 3 * 10_240 * 4 + 48 * 128 * 128 * 4


def test_a_gdn_takes_the_ssm_flag_from_v0_17_0() -> None:
    """--mamba-ssm-cache-dtype float16 over the config's float32 mamba_ssm_dtype: from v0.17.0 the flag's 2 B
    (3 × 10,240 × 2 + 48 × 128 × 128 × 2 = 1,634,304 B); at v0.16.0 the SSM state is the conv's dtype, `auto`: the
    model's bf16, the same 1,634,304 B; at v0.24.0 without it, the config's float32 (3,207,168 B)."""
    flag = {"mamba-ssm-cache-dtype": "float16"}
    assert _state(QWEN36, "0.24.0", **flag) == _state(QWEN36, "0.16.0", **flag) == 1_634_304
    assert _state(QWEN36, "0.24.0") == 3 * 10_240 * 2 + 48 * 128 * 128 * 4 == 3_207_168


def test_a_mamba2_s_auto_ssm_follows_the_conv_dtype() -> None:
    """Falcon-H1-0.5B: conv 1,536 + 2 × 1 × 128 = 1,792 channels × 3 rows, SSM 24 × 64 × 128. `auto` both: bf16,
    10,752 + 393,216 = 403,968 B; --mamba-cache-dtype float32: 21,504 + 786,432 = 807,936 B; the ssm flag alone:
    10,752 + 786,432 = 797,184 B."""
    assert _state(FALCON_H1, "0.13.0") == 403_968
    assert _state(FALCON_H1, "0.13.0", **{"mamba-cache-dtype": "float32"}) == 807_936
    assert _state(FALCON_H1, "0.13.0", **{"mamba-ssm-cache-dtype": "float32"}) == 797_184
    assert _state(FALCON_H1, "0.13.0", **{"mamba-cache-dtype": "float16"}) == 403_968


def test_nemotron_h_s_config_class_keeps_its_ssm_dtype_unless_the_flag_names_one() -> None:
    """Nemotron-H-56B at v0.13.0: conv 16,384 + 2 × 8 × 256 = 20,480 channels × 3 rows; SSM 256 × 64 × 256. Under
    --mamba-cache-dtype float32 the conv is 4 B (245,760) and the SSM the class's float16 (8,388,608): 8,634,368 B;
    with --mamba-ssm-cache-dtype float32 too the SSM is 4 B (16,777,216): 17,022,976 B."""
    assert _state(NEMOTRON_H, "0.13.0", **{"mamba-cache-dtype": "float32"}) == 245_760 + 8_388_608
    both = {"mamba-cache-dtype": "float32", "mamba-ssm-cache-dtype": "float32"}
    assert _state(NEMOTRON_H, "0.13.0", **both) == 245_760 + 16_777_216


def test_a_mamba1_state_in_float32_from_v0_10_2_and_refused_at_v0_10_1() -> None:
    """Jamba-1.5-Mini's Mamba1 layer (mamba1_state_shape: conv 8,192 × 3, temporal 8,192 × 16): bf16 311,296 B,
    float32 8,192 × 3 × 4 + 8,192 × 16 × 4 = 622,592 B at v0.11.0; v0.10.1 raises 'fp32 state for mamba1 is not yet
    supported' (mamba_utils.py:33-35)."""
    assert _state(JAMBA, "0.11.0") == 311_296
    assert _state(JAMBA, "0.11.0", **{"mamba-cache-dtype": "float32"}) == 622_592
    with pytest.raises(InputError, match="Mamba1 state in float32"):
        state_dtypes(load_model(JAMBA), LaunchSettings(engine="vllm", flags={"mamba-ssm-cache-dtype": "float32"}),
                     ResolvedVersion(text="0.10.1"))  # fmt: skip


@pytest.mark.parametrize(
    ("release", "value"), [("0.12.0", "float16"), ("0.21.0", "bfloat16"), ("0.24.0", "float64")]
)  # fmt: skip
def test_a_dtype_the_release_lacks_is_refused(release: str, value: str) -> None:
    model = load_model(FALCON_H1)
    settings = LaunchSettings(engine="vllm", flags={"mamba-cache-dtype": value})
    with pytest.raises(InputError, match="--mamba-cache-dtype"):
        state_dtypes(model, settings, ResolvedVersion(text=release))


def test_kda_state_under_a_named_dtype_is_refused_as_not_modelled() -> None:
    """Kimi-Linear's KDA keeps its recurrent state in float32 whatever the flag (kda_state_dtype, v0.24.0
    mamba_utils.py:119-126): not modelled under a named dtype; `auto` leaves it as before."""
    model = load_model(KIMI_LINEAR)
    with pytest.raises(UnsupportedModelError, match="not modelled"):
        state_dtypes(model, LaunchSettings(engine="vllm", flags={"mamba-cache-dtype": "float32"}),
                     ResolvedVersion(text="0.24.0"))  # fmt: skip
    auto = state_dtypes(model, LaunchSettings(engine="vllm"), ResolvedVersion(text="0.24.0"))
    assert auto is not None and (auto.conv, auto.ssm, auto.unstated_ssm) == (2, None, None)  # the bf16 model's


def test_typed_it_is_read_and_a_release_before_it_refuses_it(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["plan", "--model", FALCON_H1, "--engine", "vllm", "--gpu", "H100"]
    assert main([*base, "--engine-version", "0.13.0", "--mamba-cache-dtype", "float32", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all("mamba" not in f["flag"] for f in out["flags_not_read"])
    assert main([*base, "--engine-version", "0.10.0", "--mamba-cache-dtype", "float32"]) != 0
    assert "--mamba-cache-dtype" in capsys.readouterr().err


FALCON_MAMBA = str(CONFIGS / "tiiuae--falcon-mamba-7b.json")


@pytest.mark.parametrize(("dtype", "state"), [((), 19_922_944), (("--dtype", "float32"), 39_845_888)])
def test_an_auto_conv_state_follows_the_served_model_dtype(capsys: pytest.CaptureFixture[str], dtype: tuple[str, ...],
                                                           state: int) -> None:
    """Falcon-Mamba-7B (Mamba1: intermediate 8,192, conv_kernel 4, state_size 16, 64 layers): under `auto` both
    states take the model dtype (get_kv_cache_torch_dtype(mamba_cache_dtype, model_config.dtype), v0.22.0
    mamba_utils.py _mamba_state_dtype; models/mamba.py get_mamba_state_dtype_from_config passes model_config.dtype):
    (3 × 8,192 conv + 8,192 × 16 SSM) elements × 2 B × 64 = 19,922,944 B in bf16, × 4 B = 39,845,888 B under
    `--dtype float32` (the conv state was 2 B there before: 36,700,160)."""
    base = ("--model", FALCON_MAMBA, "--engine", "vllm", "--engine-version", "0.22.0", "--gpu", "H100")
    assert plan_json(capsys, base, *dtype)["request_capacity"]["state_bytes_per_request"] == state
