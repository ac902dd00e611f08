"""`--enable-torch-compile`: accepted where the wheels show what it does to memory before the KV pool, refused elsewhere.

v0.5.10 … v0.5.13 (read in the wheels): `_handle_piecewise_cuda_graph` turns the prefill (piecewise) CUDA graphs off
for it (0.5.10 server_args.py:1095, 0.5.11 :1208, 0.5.12 :1315, 0.5.13 :1356), called before
`_handle_gpu_memory_settings` (0.5.12 :914 then :920), whose reserve then holds no prefill-graph term (0.5.12 :1584
`if not self.disable_piecewise_cuda_graph`): prefill_graphs_off.LAUNCH_ERAS. The compile itself runs after the pool:
model_runner.py reads the flag only in `kernel_warmup`'s `_dummy_run` and the graph runners (0.5.12 :2625, :2930;
`init_memory_pool` :749 before `kernel_warmup` :767 and `init_device_graphs` :791; the same order at 0.5.10 :623/:655,
0.5.11 :733/:771, 0.5.13 :784/:834), so nothing compiled is held when the pool is sized. Seen in five starts of a
0.5.12.post1-era fork (tests/data/calibration/SOURCES.md, session 59 helper g): 'Disable piecewise CUDA graph because
--disable-piecewise-cuda-graph is set', mem_fraction_static 0.839.
Refused before v0.5.10 (model runner not read) and from v0.5.14, whose cuda_graph_config turns off only the
`tc_piecewise` prefill backend for it (0.5.14 server_args.py:3008 "full torch.compile mode"; the default backend by
release not read there).
"""

from __future__ import annotations

from kvtop.domain.deployment_flags import flag_set
from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.versions import Era, Eras, era_for
from kvtop.domain.errors import InputError

FLAG = "--enable-torch-compile"
ACCEPTED_ERAS: Eras[bool] = Eras((
    Era("", False, "before 0.5.10 the model runner was not read for what torch.compile holds before the pool"),
    Era("0.5.10", True, "0.5.10 … 0.5.13 server_args.py _handle_piecewise_cuda_graph; compile after the pool"),
    Era("0.5.14", False, "0.5.14 server_args.py:3008: only the tc_piecewise prefill backend turned off, not read"),
))  # fmt: skip


def torch_compile_on(inputs: EngineInputs) -> bool:
    """Whether the launch types `--enable-torch-compile`."""
    return flag_set(inputs.settings, FLAG[2:])


def check_torch_compile(inputs: EngineInputs) -> None:
    """Refuse `--enable-torch-compile` at a release whose effect on memory was not read (ACCEPTED_ERAS)."""
    era = era_for(ACCEPTED_ERAS, inputs.version)
    if torch_compile_on(inputs) and not era.value:
        raise InputError(f"a flag whose effect on memory kvtop models only for SGLang 0.5.10 … 0.5.13, not "
                         f"{inputs.version.label} ({era.source}); plan without it", field=FLAG)  # fmt: skip
