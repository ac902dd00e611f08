"""The `--speculative-algorithm` values each SGLang release accepts (docs/engines/sglang.md §19.1).

0.5.6.post2: argparse `choices` of server_args.py (EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM; exact case). 0.5.23:
any text, read by `SpeculativeAlgorithm.from_string` (speculative/spec_info.py) in upper case: the enum's names
(DFLASH, UNO, DSPARK, EAGLE, EAGLE3, FROZEN_KV_MTP, STANDALONE, NGRAM, and NONE: no speculation), NEXTN (spec_registry.py
_RESERVED_ALIASES, read as EAGLE) or a plugin's registered name (none built in), anything else a ValueError. Read in
the 0.5.6.post2 and 0.5.23 wheels only: releases between them accept either list's names, earlier ones
0.5.6.post2's and LOOKAHEAD (an earlier tree's name for NGRAM, its release not pinned). kvtop compares in upper case, as 0.5.23 does, so a lower-case name a 0.5.6.post2 argparse
refuses still passes (a launch is never refused for a name a release read takes).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras

NO_SPECULATION = "NONE"  # 0.5.23 spec_info.py SpeculativeAlgorithm.NONE: from_string("none") is no speculation
V0_5_6 = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")
V0_5_23 = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO", "FROZEN_KV_MTP", NO_SPECULATION)
METHOD_ERAS: Eras[tuple[str, ...]] = Eras((
    Era("", (*V0_5_6, "LOOKAHEAD", NO_SPECULATION), "releases before 0.5.6.post2 not read: its choices, and LOOKAHEAD, which an "
        "earlier tree's speculative/spec_info.py from_string maps (NONE, EAGLE, EAGLE3, STANDALONE, LOOKAHEAD; the "
        "name NGRAM later took; release not pinned)"),
    Era("0.5.6.post2", V0_5_6, "server_args.py --speculative-algorithm choices (read at 0.5.6.post2)"),
    Era("0.5.7", tuple(dict.fromkeys((*V0_5_6, *V0_5_23))),
        "releases after 0.5.6.post2 and before 0.5.23 not read: either one's names"),
    Era("0.5.23", V0_5_23, "speculative/spec_info.py SpeculativeAlgorithm.from_string (read at 0.5.23)"),
))  # fmt: skip
