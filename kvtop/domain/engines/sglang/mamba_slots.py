"""SGLang's linear-attention (Mamba / GDN / KDA) state slots and the bytes they take from the rest, by release
(docs/engines/sglang.md §4.2): `handle_max_mamba_cache` (model_runner_kv_cache_mixin.py), from v0.5.17
`KVCacheConfigurator._handle_max_mamba_cache`.

Speculative decoding keeps D (`--speculative-num-draft-tokens`) intermediate states a running request beside the
slots, and how the release charges them changes the slot count: v0.5.7 takes `per_req × max_running_requests × D`
off the rest in the auto branch alone; v0.5.8 … v0.5.12 take `per_req × (max_running_requests ÷ attn_dp) × D` off the
rest before any branch sizes the slots; v0.5.13 … v0.5.16 solve the
slots and the intermediates jointly from the Mamba share (`K = share // (per_req × (1 + D ÷ ratio))`, the
intermediates for min(max_running_requests ÷ attn_dp, K ÷ ratio) requests); v0.5.17 on counts the pool's padding
slot on both; before v0.5.7 (0.5.5) each slot holds its intermediates: refused. Without speculation the slots fill the
whole share (§4.2.1).

`--mamba-full-memory-ratio` r sets the share, rest × r ÷ (1 + r) (default 0.9: 0.5.5 server_args.py:420, 0.5.10 :550,
0.5.23 arg_groups/fields/schedule.py:220); `--max-mamba-cache-size` M sets the slots, M ÷ attn_dp, the intermediates
for min(mrr ÷ attn_dp, slots ÷ ratio) requests from v0.5.13 (the branch before the auto one: 0.5.7
model_runner_kv_cache_mixin.py:150-159, 0.5.10 :201-205, 0.5.13 :92-110, 0.5.17 mem_cache/kv_cache_configurator.py:1874-1895,
0.5.23 :3303-3324). Before v0.5.7 M is read otherwise (0.5.5 model_runner.py:1325-1343: only with the radix
cache off, the auto branch overwrites it): refused there."""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.deployment import SpecKind
from kvtop.domain.deployment_flags import flag_float, flag_int
from kvtop.domain.engines.sglang.deployment import setup as deployment_setup
from kvtop.domain.engines.sglang.flag_releases import check_flag_release
from kvtop.domain.engines.sglang.mamba_strategy import MAMBA_SLOT_ERAS
from kvtop.domain.engines.sglang.spec_requests import spec_default_requests
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.span import flag_text
from kvtop.domain.wording import GIB

DEFAULT_MAMBA_FULL_MEMORY_RATIO = 0.9  # ServerArgs.mamba_full_memory_ratio (v0.5.4 … v0.5.23)
RATIO_FLAG, SIZE_FLAG = "--mamba-full-memory-ratio", "--max-mamba-cache-size"
# the first release read whose handle_max_mamba_cache takes a typed M as the slots whatever the radix cache
SIZE_FROM = Eras((
    Era("", False, "0.5.5 model_runner.py:1325-1343: M read only with the radix cache off"),
    Era("0.5.7", True, "0.5.7 model_runner_kv_cache_mixin.py:150-159: M // attn_dp"),
))  # fmt: skip
# The slots with the radix cache off and --max-running-requests not typed, by release (None: the auto branch sizes
# them). 0.5.5 … 0.5.8 take 512 (0.5.5 model_runner.py:1340-1344, ÷ attn_dp for a GDN hybrid alone :1362-1365; 0.5.7
# model_runner_kv_cache_mixin.py:155-162, 0.5.8 :173-180, ÷ attn_dp); 0.5.9 on asks for the typed count (0.5.9
# :178-186, 0.5.10 :206-214), else the auto branch.
RADIX_OFF_DEFAULT_ERAS: Eras[int | None] = Eras((
    Era("", 512, "0.5.5 model_runner.py:1340-1344, 0.5.7 model_runner_kv_cache_mixin.py:155-162, 0.5.8 :173-180"),
    Era("0.5.9", None, "0.5.9 model_runner_kv_cache_mixin.py:178-186: the typed count, else the auto branch"),
))  # fmt: skip
# A PD prefill rank (`--disaggregation-mode prefill`) never verifies drafts: whether the release then keeps no
# intermediate states, by release (None: not read). 0.5.17 reserves them on every rank (kv_cache_configurator.py
# :1870-1872, :1930); 0.5.23 skips them there (:172-181 `_pd_prefill_skips_mamba_spec_state`, :3294-3298 `reserves_spec_state`;
# its role-switch and unified-memory exceptions are flags kvtop refuses).
PD_PREFILL_SKIP_ERAS: Eras[bool | None] = Eras((
    Era("", False, "0.5.17 mem_cache/kv_cache_configurator.py:1870-1872, :1930: reserved on every rank"),
    Era("0.5.18", None, "0.5.18 … 0.5.22 not read"),
    Era("0.5.23", True, "0.5.23 mem_cache/kv_cache_configurator.py:172-181, :3294-3298"),
))  # fmt: skip
# NGRAM's D when not typed (0.5.10 server_args.py:3108, 0.5.14 arg_groups/speculative_hook.py:420-421, 0.5.23 :1318)
NGRAM_DEFAULT_DRAFT_TOKENS = 12

# How speculative decoding's intermediate Mamba states are charged, by release (the auto branch's slot solve).
SPEC_STATE_ERAS: Eras[str] = Eras((
    Era("", "per_slot", "0.5.5 model_runner.py:1330-1372: each slot sized and charged per_req × (1 + D): not modelled"),
    Era("0.5.7", "auto_first", "0.5.7 model_runner_kv_cache_mixin.py:163-177: rest −= per_req × mrr × D in the auto "
        "branch alone (the radix-off and typed-size branch charges none)"),
    Era("0.5.8", "first", "0.5.8 model_runner_kv_cache_mixin.py:151-166, 0.5.10 :184-198, 0.5.12 :83-97: rest −= "
        "per_req × (mrr ÷ attn_dp) × D before the slots are sized"),
    Era("0.5.13", "joint", "0.5.13 model_runner_kv_cache_mixin.py:144-159, 0.5.14 :184-199, 0.5.15 :203-218, 0.5.17 "
        "mem_cache/kv_cache_configurator.py:1930-1948, 0.5.23 :3359-3377: K = share // (per_req × (1 + D ÷ ratio)); "
        "rest −= per_req × min(mrr ÷ attn_dp, K ÷ ratio) × D (the padding slot from v0.5.17: eras.MAMBA_SLOT_ERAS)"),
))  # fmt: skip


@dataclass(frozen=True)
class MambaSlots:
    """The slots SGLang sizes (`max_mamba_cache_size`, a rank), the bytes they and the intermediates take."""

    slots: int
    state_bytes: int  # the slots' (with the padding slot from v0.5.17)
    spec_bytes: int  # speculative decoding's intermediate states' charge off the rest (0 without)
    label: str
    draft_tokens: int = 0  # D where the pool holds intermediate states (0: none)


def draft_tokens(settings: LaunchSettings) -> int | None:
    """D, the draft tokens a request verifies (None: no speculation). EAGLE-family top-1 drafting takes steps + 1
    whatever was typed (0.5.10 server_args.py:3074-3080, 0.5.14 arg_groups/speculative_hook.py:383-390, 0.5.23 :1255-1262);
    NGRAM's default is 12; else not typed, SGLang picks it (`_auto_choose_speculative_params`): refused, not guessed."""
    spec = deployment_setup(settings)
    if spec.spec_method is None:
        return None
    steps, topk = (
        flag_int(settings, "speculative-num-steps", least=1),
        flag_int(settings, "speculative-eagle-topk"),
    )
    if spec.spec_kind is not SpecKind.NGRAM and topk == 1 and steps is not None:
        return steps + 1
    if spec.spec_kind is SpecKind.NGRAM and spec.draft_tokens is None:
        return NGRAM_DEFAULT_DRAFT_TOKENS
    if spec.draft_tokens is None:
        raise UnsupportedModelError("a hybrid linear-attention model's state pool holds D intermediate states a "
                                    "request under speculative decoding, and SGLang picks D when "
                                    "--speculative-num-draft-tokens is not typed: not modelled",
                                    field="--speculative-num-draft-tokens")  # fmt: skip
    return spec.draft_tokens


def mamba_flags(settings: LaunchSettings, version: ResolvedVersion) -> tuple[float, int | None]:
    """(r, M): `--mamba-full-memory-ratio` (else 0.9) and `--max-mamba-cache-size` (else None), each refused at a
    release without it (flag_releases.py), M before v0.5.7 (SIZE_FROM)."""
    ratio, size = flag_float(settings, RATIO_FLAG[2:]), flag_int(settings, SIZE_FLAG[2:], least=1)
    for flag, value in ((RATIO_FLAG, ratio), (SIZE_FLAG, size)):
        if value is not None:
            check_flag_release(flag, version)
    if size is not None and not SIZE_FROM.at(version):
        raise UnsupportedModelError(f"SGLang {version.label} reads {SIZE_FLAG} only with the radix cache off, its "
                                    f"automatic slot count otherwise ({SIZE_FROM.era(version).source}): not modelled",
                                    field=SIZE_FLAG)  # fmt: skip
    return ratio or DEFAULT_MAMBA_FULL_MEMORY_RATIO, size


def mamba_slots(
    rest_gib: float,
    per_req: int,
    settings: LaunchSettings,
    attn_dp: int,
    version: ResolvedVersion,
    slots_per_request: int,
) -> MambaSlots:
    """§4.2: the auto branch (or --max-running-requests with the radix cache off); `slots_per_request`: Mamba slots a
    running request (`eras.mamba_ratio`, SGLang's `_calculate_mamba_ratio`), which the joint solve divides by."""
    padded = int(MAMBA_SLOT_ERAS.at(version))  # the pool's padding slot charged
    d = draft_tokens(settings)
    era = SPEC_STATE_ERAS.at(version)
    full_ratio, size = mamba_flags(settings, version)
    # under speculation SGLang has set --max-running-requests (48 where not typed: spec_requests.py) before it sizes
    # the pool, and asserts it is set (0.5.10 model_runner_kv_cache_mixin.py:187, 0.5.23 kv_cache_configurator.py:3301)
    asked = settings.max_running_requests or spec_default_requests(settings, version)
    if d is not None and not asked:
        raise UnsupportedModelError("SGLang asserts --max-running-requests is set when it sizes a hybrid's state "
                                    "pool under speculative decoding, and this method's hook sets none (0.5.23 "
                                    "kv_cache_configurator.py:3301): type it", field="--max-running-requests")  # fmt: skip
    if d is not None and flag_text(settings, "disaggregation-mode") == "prefill":
        skip = PD_PREFILL_SKIP_ERAS.era(version)
        if skip.value is None:
            raise UnsupportedModelError(f"whether SGLang {version.label} keeps a hybrid's speculative intermediate "
                                        f"states on a PD prefill rank was not read ({skip.source}): not modelled",
                                        field="--disaggregation-mode")  # fmt: skip
        d = None if skip.value else d  # a prefill rank verifies nothing: no intermediates
    if d is not None and era == "per_slot":
        raise UnsupportedModelError(f"SGLang {version.label} sizes a hybrid's state slots with speculative decoding's "
                                    f"intermediate states inside each ({SPEC_STATE_ERAS.era(version).source})",
                                    field="--speculative-algorithm")  # fmt: skip
    requests = (asked or 0) // attn_dp
    joint = era == "joint"
    spec = 0
    auto = size is None and not settings.disable_radix_cache  # 0.5.7: the branch it charges in
    if d is not None and (era == "first" or (era == "auto_first" and auto)):
        spec = per_req * (asked or 0) * d if era == "auto_first" else per_req * requests * d  # 0.5.7: mrr not ÷ attn_dp
        rest_gib -= spec / GIB
    share = rest_gib * full_ratio / (1 + full_ratio) * GIB
    if size is not None:
        slots = size // attn_dp
        if d is not None and joint:
            spec = per_req * (min(requests, slots // slots_per_request) + padded) * d
    elif settings.disable_radix_cache and asked:
        slots = requests
        if d is not None and joint:
            spec = per_req * (slots + padded) * d
    elif settings.disable_radix_cache and (radix_off_slots := RADIX_OFF_DEFAULT_ERAS.at(version)) is not None:
        slots = radix_off_slots // attn_dp
    elif d is not None and joint:
        slots = int((share - per_req * (1 + d) * padded) // (per_req * (1 + d / slots_per_request)))
        spec = per_req * (min(requests, slots // slots_per_request) + padded) * d
    else:
        slots = int((share - per_req) // per_req) if padded else int(share // per_req)
    slots = max(slots, 0)  # SGLang refuses K ≤ 0 (`too_small_note`): no negative bytes handed back to the rest
    state = (slots + padded) * per_req
    label = f"{slots} slots{' + 1' if padded else ''}" + (f" ({SIZE_FLAG})" if size is not None else "") + (
        f", {d} draft tokens' intermediate states" if d else ""
    )
    return MambaSlots(slots=slots, state_bytes=state, spec_bytes=spec, label=label, draft_tokens=d or 0)


# SGLang refuses a start whose state pool serves no request: K ≤ 0 ('Not enough GPU memory for hybrid
# (mamba/linear-attention) state cache', 0.5.13 model_runner_kv_cache_mixin.py:167, 0.5.17
# mem_cache/kv_cache_configurator.py:1962, 0.5.23 :3392) and K // ratio ≤ 0 ('… state cache is too small to serve any
# requests', 0.5.13 :895, 0.5.17 :1752, 0.5.23 :3152); before v0.5.13 no check, its cap K // ratio gives 0 requests
# (0.5.12 model_runner_kv_cache_mixin.py:830-834): no request served either way
TOO_SMALL_SOURCE = "0.5.13 model_runner_kv_cache_mixin.py:167, :895; 0.5.23 mem_cache/kv_cache_configurator.py:3392, :3152"


def too_small_note(slots: int, slots_per_request: int, version: ResolvedVersion) -> str | None:
    """Why a hybrid's launch serves no request: fewer state slots (a rank) than one running request takes; None where
    it serves one."""
    if slots >= slots_per_request:
        return None
    return (f"the linear-attention state pool holds {slots} slots, fewer than the {slots_per_request} one running "
            f"request takes, so SGLang {version.label} serves no request (from v0.5.13 it refuses the start: 'Not "
            "enough GPU memory for hybrid (mamba/linear-attention) state cache' or '… too small to serve any "
            f"requests', {TOO_SMALL_SOURCE}): raise --mem-fraction-static, lower --max-running-requests or "
            "--speculative-num-draft-tokens, or use GPUs with more memory")  # fmt: skip


def spec_allocated_bytes(requests: int, d: int, per_req: int) -> int:
    """What the state pool allocates for speculative decoding's intermediate states: `MambaPool` builds
    `intermediate_ssm_state_cache` [layers, spec_state_size + 1, D, …] and the conv windows alike, spec_state_size the
    running requests (`HybridReqToTokenPool(mamba_spec_state_size=max_num_reqs)`: 0.5.9 mem_cache/memory_pool.py:270-285,
    model_runner_kv_cache_mixin.py:463; 0.5.10 memory_pool.py:273-294,
    model_runner_kv_cache_mixin.py:446; 0.5.14 memory_pool.py:405-486, model_runner_kv_cache_mixin.py:386) — one
    request more than the charge off the rest counts (SPEC_STATE_ERAS), its bytes out of the reserve. Per request and
    token the slot's `per_req` (0.5.14's deduplicated conv windows hold a little less: the conv state is ~2 % of a
    GDN slot)."""
    return (requests + 1) * d * per_req if d else 0
