"""The `--block-size` values vLLM's command line takes, by release (docs/engines/vllm.md §3.7).

v0.13.0 types `CacheConfig.block_size` as `BlockSize = Literal[1, 8, 16, 32, 64, 128, 256]` (config/cache.py), and
`EngineArgs.add_cli_args` turns a Literal into argparse `choices` (engine/arg_utils.py `literal_to_kwargs`): any
other size stops the launch before anything is sized ("argument --block-size: invalid choice: 7 (choose from 1, 8,
16, 32, 64, 128, 256)", the harness's parser, run on the v0.13.0 wheel). v0.33.0 types it `int = Field(gt=0)`: its
parser takes any whole number (the harness: 7 and 24 accepted), `CacheConfig` refuses below 1 (kvtop's own field
check does too), but its model runner then refuses a size no NVIDIA attention backend's kernel blocks divide
(`KERNEL_MULTIPLE_ERAS`: 7 raises 'No common block size for 7'). The change is at v0.18.0 (`SkipValidation[int]`;
v0.17.1 still the Literal): v0.14.0-v0.17.1 read as v0.13.0, v0.18.0 on as v0.33.0 (`CLI_BLOCK_SIZES_ERAS`).
Before v0.13.0, read off the PyPI wheels: v0.6.3.post1 engine/arg_utils.py `'--block-size', type=int,
choices=[8, 16, 32]`; v0.6.4 `[8, 16, 32, 64, 128]`; v0.6.5 `[8, 16, 32]` again; v0.6.6–v0.8.4 `[8, 16, 32, 64,
128]`; v0.8.5 config.py `BlockSize = Literal[1, 8, 16, 32, 64, 128]` (the same get_kwargs Literal → choices, the
Literal read in every wheel to v0.11.0); v0.11.1 config/cache.py adds 256 (v0.11.2–v0.14.0 alike). Before v0.6.3.post1
not read (no size refused).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.versions import Era, Eras, era_for
from kvtop.domain.refusals import Refusal

if TYPE_CHECKING:
    from kvtop.domain.ledger_values import Ledger

BLOCK_SIZE_FLAG = "--block-size"
#: The sizes the CLI takes (None: any whole number from 1, or not read).
CLI_BLOCK_SIZES_ERAS: Eras[tuple[int, ...] | None] = Eras((
    Era("", None, "before v0.6.3.post1 not read: no size refused"),
    Era("0.6.3.post1", (8, 16, 32), "v0.6.3.post1 engine/arg_utils.py '--block-size' choices=[8, 16, 32]"),
    Era("0.6.4", (8, 16, 32, 64, 128), "v0.6.4 engine/arg_utils.py '--block-size' choices=[8, 16, 32, 64, 128]"),
    Era("0.6.5", (8, 16, 32), "v0.6.5 engine/arg_utils.py '--block-size' choices=[8, 16, 32]"),
    Era("0.6.6", (8, 16, 32, 64, 128),
        "v0.6.6 engine/arg_utils.py '--block-size' choices=[8, 16, 32, 64, 128] (v0.7.0-v0.8.4 alike)"),
    Era("0.8.5", (1, 8, 16, 32, 64, 128),
        "v0.8.5 config.py BlockSize = Literal[1, 8, 16, 32, 64, 128], argparse choices (engine/arg_utils.py "
        "get_kwargs; v0.9.0-v0.11.0 alike)"),
    Era("0.11.1", (1, 8, 16, 32, 64, 128, 256),
        "v0.11.1 config/cache.py BlockSize = Literal[1, 8, 16, 32, 64, 128, 256], argparse choices "
        "(engine/arg_utils.py; v0.11.2-v0.14.0 and v0.17.1 read alike)"),
    Era("0.18.0", None, "v0.18.0 config/cache.py block_size: SkipValidation[int]: argparse takes any whole number "
                        "(v0.19.0-v0.21.0 alike; v0.25.0-v0.33.0 `int = Field(gt=0)`, v0.34.0 :188 alike); a gpt-oss-20b start at "
                        "v0.29.0 ran at --block-size 96 (akamaslabs/vllm-benchmark smoke_test_2026-09-15.log)"),
))  # fmt: skip


#: From v0.18.0 (the command line taking any whole number) the model runner splits each KV block into the attention
#: backend's kernel blocks (v1/worker/utils.py `select_common_block_size`): every NVIDIA backend's kernel sizes are
#: multiples of 16 (FlashAttention and Triton `MultipleOf(16)`, FlashInfer 16/32/64, the MLA ones 32 to 256; only the
#: ROCm AITER MLA backends take 1), so a size no multiple of 16 divides raises before the cache is allocated.
KERNEL_MULTIPLE_ERAS: Eras[int | None] = Eras((
    Era("", None, "before v0.18.0 the command line's choices above decide"),
    Era("0.18.0", 16, "v0.18.0 v1/worker/utils.py:326 select_common_block_size raises 'No common block size for N' "
                      "(v0.33.0 :555, v0.34.0 :548); v1/attention/backends/*.py get_supported_kernel_block_sizes"),
))  # fmt: skip


def block_size_refusal(ledger: Ledger) -> Refusal | None:
    """A `--block-size` the release's command line does not take, or (from v0.18.0) one no NVIDIA attention
    backend's kernel blocks divide (None: taken, not stated, or not read)."""
    block = ledger.settings.page_size
    era = era_for(CLI_BLOCK_SIZES_ERAS, ledger.version)
    kernel = era_for(KERNEL_MULTIPLE_ERAS, ledger.version)
    if block is not None and era.value is None and kernel.value is not None and block % kernel.value:
        return Refusal(
            field=BLOCK_SIZE_FLAG,
            message=f"vLLM {ledger.version.label} stops at {BLOCK_SIZE_FLAG} {block}: its command line takes it, but "
            f"no NVIDIA attention backend splits a {block}-token block into its kernel blocks (multiples of "
            f"{kernel.value}): 'No common block size for {block}'",
            source=kernel.source,
        )
    if block is None or era.value is None or block in era.value:
        return None
    sizes = ", ".join(str(size) for size in era.value)
    return Refusal(
        field=BLOCK_SIZE_FLAG,
        message=f"vLLM {ledger.version.label} refuses {BLOCK_SIZE_FLAG} {block}: its command line takes {sizes} "
        f"('invalid choice: {block}'); from v0.18.0 any whole number",
        source=era.source,
    )
