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

v0.5.14 (cuda_graph_config era): the prefill default is `tc_piecewise` (model_executor/cuda_graph_config.py:91), which
`_apply_cuda_graph_compatibility` turns off for "full torch.compile mode" unless the launch typed a prefill backend
(server_args.py:2983-2995, rule :3008), in `_handle_cuda_graph_config` (:2508) before `_handle_gpu_memory_settings`
(:2524), whose reserve skips a disabled prefill backend (:3300): the 0.5.10 … 0.5.13 effect (LAUNCH_ERAS keeps it).
v0.5.15 … v0.5.23: the prefill default on CUDA is `breakable` (cuda_graph_config.py `default_prefill_backend`, 0.5.15
and 0.5.15.post1 :101, 0.5.16 :104, 0.5.17 :119, 0.5.21 :131, 0.5.23 :123); torch compile sits only in the
`tc_piecewise` rules (0.5.15.post1 server_args.py:3284 in `_disable_tc_piecewise_cudagraph_if_incompatible` :3271,
reached only `if prefill.backend == Backend.TC_PIECEWISE` :3264; 0.5.16 :3701, 0.5.17 :4388, 0.5.18 :4602, 0.5.19 …
0.5.21 arg_groups/cuda_graph_hook.py:182/:182/:190; gone from 0.5.22), so the reserve keeps the breakable prefill
graphs as without the flag; a multimodal class on the piecewise allowlist (and from 0.5.18 not on the breakable one) runs
tc_piecewise at 0.5.16 … 0.5.21, whose rules turn them off for it (prefill_graphs_off.MULTIMODAL_GRAPH_ERAS,
TC_LAUNCH_ERAS). In both eras the compile runs in the decode graph runner (0.5.14 runner/decode_cuda_graph_runner.py
:735 `torch_compile_decoration.patch_model`, 0.5.23 :1353), which the scheduler builds after the worker and its pool
(0.5.14 managers/scheduler.py:782 then :855, pool model_runner.py:813; 0.5.23 scheduler.py:1033 then :1124): nothing
compiled is held when the pool is sized. The runner's model loop between 0.5.15 and 0.5.22 was not read.
Refused before v0.5.10 (model runner not read).
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
    Era("0.5.14", True, "0.5.14 server_args.py:3008 turns the default tc_piecewise prefill graphs off; compile after "
                        "the pool (scheduler.py:855)"),
    Era("0.5.15", True, "0.5.15 … 0.5.23 cuda_graph_config.py default_prefill_backend: breakable, which torch compile "
                        "leaves on; compile after the pool (0.5.23 scheduler.py:1124)"),
))  # fmt: skip


def torch_compile_on(inputs: EngineInputs) -> bool:
    """Whether the launch types `--enable-torch-compile`."""
    return flag_set(inputs.settings, FLAG[2:])


def check_torch_compile(inputs: EngineInputs) -> None:
    """Refuse `--enable-torch-compile` at a release whose effect on memory was not read (ACCEPTED_ERAS)."""
    era = era_for(ACCEPTED_ERAS, inputs.version)
    if torch_compile_on(inputs) and not era.value:
        raise InputError(f"a flag whose effect on memory kvtop models only from SGLang 0.5.10, not "
                         f"{inputs.version.label} ({era.source}); plan without it", field=FLAG)  # fmt: skip
