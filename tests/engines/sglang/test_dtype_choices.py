"""SGLang's `--dtype` words (kvtop/domain/engines/sglang/arg_choices.py), expected from SGLang's own argparse choices."""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import check_parallel, parse_flags


# SGLang: srt/server_args.py `"--dtype", choices=["auto", "half", "float16", "bfloat16", "float", "float32"]` in the
# v0.5.6 and v0.5.15 wheels, ServerArgs.dtype's choices at v0.5.23 (srt/arg_groups/fields/model.py:173)
@pytest.mark.parametrize(("version", "word", "refused"), [
    (None, "float128", True), ("0.5.6", "float128", True), ("0.5.23", "fp8", True), ("0.5.10", "bfloat16", False),
    ("0.4.0", "float128", False),  # before v0.5.6 not read: nothing refused
])  # fmt: skip
def test_sglang_dtype_by_release(version: str | None, word: str, refused: bool) -> None:
    flags = ["--dtype", word, *(["--engine-version", version] if version else [])]
    try:
        check_parallel(parse_flags("sglang", flags))
    except InputError as error:
        assert refused and error.field == "--dtype" and "invalid choice" in str(error)
        return
    assert not refused
