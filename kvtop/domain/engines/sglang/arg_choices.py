"""The `--dtype` words SGLang takes, by release: any other stops the launch at parsing (argparse's "invalid choice").

Read off the PyPI wheels: v0.5.6 srt/server_args.py `"--dtype", choices=["auto", "half", "float16", "bfloat16",
"float", "float32"]` (:2210), v0.5.15 alike (server_args.py:534), v0.5.23 the same six as `ServerArgs.dtype`'s
`Arg(choices=…)` (srt/arg_groups/fields/model.py:173). Releases between read alike (every side read agrees); before
v0.5.6 not read (nothing refused). `--quantization`'s choices (QUANTIZATION_CHOICES) change by release and only three
are read: not checked.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted

DTYPE_FLAG = "--dtype"
DTYPES = ("auto", "half", "float16", "bfloat16", "float", "float32")
#: the words the release takes (None: not read, nothing refused)
DTYPE_ERAS: Eras[tuple[str, ...] | None] = Eras((
    Era("", None, "before v0.5.6 not read"),
    Era("0.5.6", DTYPES, "srt/server_args.py --dtype choices (v0.5.6 :2210, v0.5.15 :534); v0.5.23 "
                         "srt/arg_groups/fields/model.py:173 ServerArgs.dtype choices"),
))  # fmt: skip


def refuse_dtype(value: object, version: ResolvedVersion, flag: str = DTYPE_FLAG) -> None:
    """A `--dtype` outside the release's words (a release not stated: the latest's); a release not read refuses none."""
    era = DTYPE_ERAS.era(version)
    if isinstance(value, str) and era.value is not None and value not in era.value:
        raise InputError(f"SGLang {version.label} refuses {quoted(value)} ('invalid choice'): it takes "
                         f"{', '.join(era.value)} ({era.source})", field=flag)  # fmt: skip
