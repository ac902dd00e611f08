"""Which GPU models have CUDA peer access by their name (`gpus_peer.peer_access`).

Expected values from the sources the module cites: vLLM 0.8.4 on two RTX 3090s logged 'Custom allreduce is disabled
because your platform lacks GPU P2P capability or P2P test failed' (search-index id 60295104134); CUDA's
p2pBandwidthLatencyTest printed 'CANNOT Access Peer' for eight RTX 2080 Ti (NVIDIA/nccl-tests#117); NVLink SXM boards
run vLLM's custom all-reduce (llm-d's H100 starts); PCIe data-centre and workstation boards depend on the driver (two
L40S at vLLM 0.16.0 registered custom all-reduce graph buffers, search-index id 10876549642; two A100-80GB pods
printed the P2P test failing, dennislee22/vLLM-benchmarking).
"""

from __future__ import annotations

from kvtop.domain.gpus_peer import peer_access


def test_geforce_cards_have_no_peer_access() -> None:
    for name in ("RTX3090", "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090", "RTX2080-TI", "GTX1080",
                 "GTX1660-SUPER", "RTX5090", "RTX5060-TI"):  # fmt: skip
        assert peer_access(name) is False, name


def test_nvlink_boards_have_it() -> None:
    for name in ("H100", "NVIDIA H100 80GB HBM3", "A100-80GB", "B200"):
        assert peer_access(name) is True, name


def test_workstation_and_pcie_data_centre_boards_are_left_to_the_driver() -> None:
    # the workstation names carry a letter or a round thousand after 'RTX' (not a GeForce model number)
    for name in ("RTXA6000", "RTX6000-ADA", "RTX2000-ADA", "Quadro RTX 8000", "RTXPRO6000", "L40S", "L4", "A10", None):  # fmt: skip
        assert peer_access(name) is None, name
