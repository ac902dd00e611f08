"""`--api-key`: one key before v0.10.1, one or more from it (argparse nargs="+").

v0.10.0 declares `FrontendArgs.api_key: Optional[str]` (vllm/entrypoints/openai/cli_args.py:88): a second word after
the flag is vLLM's "unrecognized arguments". v0.10.1 makes it `Optional[list[str]]` (cli_args.py:90; `get_kwargs`
gives a list field `nargs="+"`, engine/arg_utils.py:209-218) and the server accepts any of them (api_server.py:1531);
still so at v0.33.0 (entrypoints/common/cli_args.py:335). Read off the wheels from PyPI; upstream PR
vllm-project/vllm#18548. The flag is memory-neutral (flags_neutral.py): only the count of its values is checked here,
and that it has one: the flag alone is argparse's "expected one argument" (type str) or "expected at least one
argument" (nargs="+"), at every release read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError

API_KEY_FLAG = "--api-key"
KeysTaken = Literal["one", "several"]
KEYS_ERAS: Eras[KeysTaken] = Eras((
    Era("", "one", "v0.10.0 entrypoints/openai/cli_args.py:88 api_key: Optional[str]"),
    Era("0.10.1", "several", "v0.10.1 entrypoints/openai/cli_args.py:90 api_key: Optional[list[str]] (nargs='+')"),
))  # fmt: skip


def refuse_several_keys(flags: Mapping[str, object], version: ResolvedVersion) -> None:
    """An InputError naming `--api-key` where the launch gives it several keys and the release takes one; the keys
    themselves are never quoted."""
    value = flags.get(API_KEY_FLAG.lstrip("-"))
    if not isinstance(value, str) or len(value.split()) < 2 or KEYS_ERAS.at(version) == "several":
        return
    raise InputError(f"vLLM {version.label} takes one key (a list from v0.10.1: entrypoints/openai/cli_args.py); "
                     f"{len(value.split())} given", field=API_KEY_FLAG)  # fmt: skip


def refuse_bare_key(value: object, flag: str = API_KEY_FLAG) -> None:
    """An InputError naming `--api-key` typed with no key after it (kvtop reads a bare flag as a switch, True): vLLM's
    argparse refuses it ("expected one argument"; "expected at least one argument" from v0.10.1)."""
    if value is True:
        raise InputError("takes a key after it: vLLM's argparse refuses the flag alone ('expected one argument')",
                         field=flag)  # fmt: skip
