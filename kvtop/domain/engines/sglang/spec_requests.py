"""The --max-running-requests SGLang sets itself under speculative decoding when it is not typed (32, then 48), by
release and method (docs/engines/sglang.md §4.2): its max_running_requests, a hybrid Mamba model's intermediate states
and req_to_token all follow it.

Read in the wheels: none at v0.4.1.post4, v0.4.3, v0.4.3.post2 (server_args.py:252 / :265 / :266: the count stays
automatic); EAGLE (NEXTN read as EAGLE, EAGLE3 beside it from v0.4.4.post3) takes 32 from v0.4.3.post3 (server_args.py
:279-284) through v0.4.4.post3 (v0.4.4 :280-282, v0.4.4.post1 :280-282, v0.4.4.post3 :311-316; post2 not read), 48 from
v0.4.4.post4 (:329-334; v0.4.5 :330-334); STANDALONE from v0.5.2 (:723-730; v0.5.3 :1053-1060), NGRAM from v0.5.3
(:1127-1133; not in v0.5.3rc0's choices); v0.5.10 :2986-2994 and :3092-3099; v0.5.23 every
method's hook in arg_groups/speculative_hook.py (`_handle_dflash` :438-442, `_handle_dspark` :852-856,
`_handle_frozen_kv_mtp` :992-996, `_handle_eagle_family` :1086-1090, `_handle_ngram` :1294-1298) but UNO's
(`_handle_uno` :449, none). LOOKAHEAD, NGRAM's name in an earlier tree, is taken as NGRAM (its release not pinned).
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.engines.sglang.deployment import setup as deployment_setup
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch import LaunchSettings


class SpecDefault(NamedTuple):
    """The count a release's speculative hook sets where --max-running-requests is not typed, and the methods whose
    hook sets it."""

    requests: int
    methods: frozenset[str]


_EAGLE = frozenset({"EAGLE", "EAGLE3", "NEXTN"})
# by release (a method a release lacks is refused before: spec_methods.py)
SPEC_DEFAULT_ERAS: Eras[SpecDefault] = Eras((
    Era("", SpecDefault(0, frozenset()), "0.4.1.post4 server_args.py:252, 0.4.3 :265, 0.4.3.post2 :266: no count set"),
    Era("0.4.3.post3", SpecDefault(32, _EAGLE), "0.4.3.post3 server_args.py:279-284, 0.4.4 :280-282, 0.4.4.post3 "
        ":311-316 (NEXTN is EAGLE :275-277)"),
    Era("0.4.4.post4", SpecDefault(48, _EAGLE), "0.4.4.post4 server_args.py:329-334, 0.4.5 :330-334"),
    Era("0.5.2", SpecDefault(48, _EAGLE | {"STANDALONE"}), "0.5.2 server_args.py:723-730 (STANDALONE's first; 0.5.1's "
        "choices :1430 lack it, 0.5.2rc* not read)"),
    Era("0.5.3", SpecDefault(48, _EAGLE | {"STANDALONE", "NGRAM", "LOOKAHEAD"}),
        "0.5.3 server_args.py:1053-1060, :1127-1133; 0.5.10 :2986-2994, :3092-3099"),
    Era("0.5.23", SpecDefault(48, _EAGLE | {"STANDALONE", "NGRAM", "LOOKAHEAD", "DFLASH", "DSPARK", "FROZEN_KV_MTP"}),
        "0.5.23 arg_groups/speculative_hook.py:442, :856, :996, :1090, :1298 (UNO's _handle_uno :449 none)"),
))  # fmt: skip


def spec_default_requests(settings: LaunchSettings, version: ResolvedVersion) -> int | None:
    """The count (32, then 48: `SPEC_DEFAULT_ERAS`) where the launch drafts with a method whose hook sets it at
    `version` and --max-running-requests is not typed; else None (the typed count, or SGLang's automatic one, stands)."""
    if settings.max_running_requests:
        return None
    method = deployment_setup(settings).spec_method
    default = SPEC_DEFAULT_ERAS.at(version)
    if method is None or method not in default.methods:
        return None
    return default.requests
