"""The `--speculative-algorithm` values each LMDeploy release accepts (docs/engines/lmdeploy.md §13).

argparse `choices` of `ArgumentHelper.add_spec_group` (lmdeploy/cli/utils.py): any other value, in any case,
stops the command line. Read at every tag v0.10.0 – v0.16.0 and at 1263d5cd (2026-08-21) of InternLM/lmdeploy, and in
the 0.17.0 and 0.18.0 wheels (PyPI).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras

_SOURCE = "lmdeploy/cli/utils.py add_spec_group choices"
METHOD_ERAS: Eras[tuple[str, ...]] = Eras((
    Era("", (), f"{_SOURCE}: no --speculative-algorithm before v0.11.0 (read at v0.10.0 – v0.10.2)"),
    Era("0.11.0", ("eagle", "eagle3", "deepseek_mtp"), f"{_SOURCE} (v0.11.0 – v0.12.2; PR #3945)"),
    Era("0.12.3", ("eagle", "eagle3", "deepseek_mtp", "qwen3_5_mtp"), f"{_SOURCE} (v0.12.3 – v0.15.0; PR #4437)"),
    Era("0.16.0", ("eagle", "eagle3", "deepseek_mtp", "hy3_mtp", "qwen3_5_mtp"),
        f"{_SOURCE} (v0.16.0, 1263d5cd and 0.17.0; PR #4815)"),
    Era("0.18.0", ("eagle", "eagle3", "deepseek_mtp", "hy3_mtp", "qwen3_5_mtp", "dflash"),
        f"{_SOURCE} (0.18.0 cli/utils.py:835-839)"),
))  # fmt: skip
