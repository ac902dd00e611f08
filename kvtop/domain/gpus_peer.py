"""Whether two GPUs of a model reach each other's memory (CUDA peer access, "P2P"), as far as the model's name says.

Engines build their fast all-reduce on peer access (vLLM's custom all-reduce maps each rank's IPC buffers, and
turns itself off where `_can_p2p` fails: device_communicators/custom_all_reduce.py:141-150 at v0.8.4), and NCCL
keeps a connection's buffers in the receiving GPU's memory only over P2P (or NVLink): without it, two ranks of one
host talk through its SHM transport, whose buffers are host memory. So what a TP group holds on the device beyond
one rank depends on it.

- NVLink GPUs (`NVLINK_GPUS`: SXM boards): peer access.
- GeForce cards (GTX/RTX followed by the model number): none, as the driver reports it: two RTX 3090s at vLLM 0.8.4
  logged 'Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P test failed'
  (search-index id 60295104134, tests/data/calibration/vllm.jsonl); eight RTX 2080 Ti 'CANNOT Access Peer'
  (CUDA's p2pBandwidthLatencyTest, NVIDIA/nccl-tests#117, which also reports the RTX 4090 without it). Some drivers
  or an NVLink bridge give a pair of RTX 3090s peer access (NVIDIA/nccl#1127: failing on driver 545, passing on
  535 for one user): the common case is taken.
- Anything else (PCIe data-centre and workstation boards, unnamed GPUs): the driver's P2P test decides (None).
"""

from __future__ import annotations

import re

from kvtop.domain.gpus import NVLINK_GPUS, gpu_model_key

# GeForce model tokens as `gpu_model_key` gives them ('RTX3090', 'RTX4090', 'RTX2080-TI', 'GTX1080', 'GTX1660-SUPER'):
# a generation digit, 0, a tier 5-9, 0 (or the GTX 16 series); the workstation names ('RTXA6000', 'RTXPRO6000',
# 'RTX6000-ADA', Turing's Quadro 'RTX8000') have a letter after 'RTX' or a round thousand
_GEFORCE = re.compile(r"^(RTX|GTX)(\d0[5-9]0|16[5-6]0)(?=-|$)")


def peer_access(gpu_name: str | None) -> bool | None:
    """True on NVLink GPUs, False on GeForce cards, None where the name does not decide (the driver's P2P test does)."""
    if gpu_name is None:
        return None
    key = gpu_model_key(gpu_name)
    if key in NVLINK_GPUS:
        return True
    if _GEFORCE.match(key or ""):
        return False
    return None
