"""A desktop sharing the GPU, known on the node itself: the fact `plan --desktop` states, read rather than said.

Under WSL2 the GPU belongs to Windows: its display driver (WDDM) drives the card, the Linux side reaches it through
the DirectX kernel's paravirtualisation device `/dev/dxg`, and Windows' desktop holds memory on the card before any
engine starts (docs/calibration.md: the RTX 3090 SGLang start under WSL2, my-deepseek-r1-distill-qwen-7b-3090,
held 0.82 GiB before its load). A node running kvtop can see it: Microsoft's WSL kernels name themselves in the
kernel's version string (`/proc/version`: 'Linux version 5.15.167.4-microsoft-standard-WSL2 …'), and `/dev/dxg` is
there. The sources read those (`sources/host_desktop.py`); what they mean is decided here, so it is tested without
the test machine's own files. A host where neither shows is not proven free of a desktop (an X server on a Linux
card): kvtop then knows nothing, and `--desktop` or the planner's field still say it.
"""

from __future__ import annotations

from enum import Enum

from kvtop.domain.redact import RedactedModel, RedactedStr

PROC_VERSION_PATH = "/proc/version"
DXG_PATH = "/dev/dxg"
# what a Microsoft kernel's version string carries (WSL2: '-microsoft-standard-WSL2'; WSL1's '-Microsoft')
WSL_KERNEL_WORDS = ("microsoft", "wsl")


class DesktopEvidence(str, Enum):
    """What on the node showed a desktop shares the GPU."""

    PROC_VERSION = "proc_version"  # the kernel's version string names Microsoft's WSL kernel
    DXG = "dxg"  # the DirectX kernel's GPU device, which only WSL2 has


class HostDesktop(RedactedModel):
    """A desktop (Windows, under WSL2) shares this node's GPUs, measured on the node: how it was known."""

    evidence: DesktopEvidence
    detail: RedactedStr  # the kernel's release as read (never the rest of the line: its builder's address), or the device

    @property
    def origin(self) -> str:
        """Where the fact came from, in words ('read from /proc/version')."""
        if self.evidence is DesktopEvidence.PROC_VERSION:
            return f"read from {PROC_VERSION_PATH}"
        return f"seen {DXG_PATH}"

    @property
    def brief(self) -> str:
        """The fact and where it came from, short: the dashboard header's words ('Windows desktop under WSL2, read from
        /proc/version')."""
        return f"Windows desktop under WSL2, {self.origin}"

    @property
    def cited(self) -> str:
        """`brief` with what was read: the planner's title and the plan's desktop note."""
        return f"{self.brief}: {self.detail}"

    @property
    def sentence(self) -> str:
        """The fact, its origin and what was read, in one line (snapshot's text and JSON). WSL2 proves Windows' display
        driver holds the node's GPUs, not which of them its desktop draws on: any GPU of the node, right for one or
        many."""
        return f"a desktop (Windows, WSL2) may hold memory on any GPU of this node, {self.origin}: {self.detail}"


def kernel_release(version_text: str) -> str:
    """The release in a kernel's version string ('Linux version 5.15.167.4-microsoft-standard-WSL2 (…) …' →
    '5.15.167.4-microsoft-standard-WSL2'); its first word (at most 80 characters) where it is not so worded, never
    the rest of the line: the builder's address is no release, and its words must not make a kernel WSL's."""
    words = version_text.split()
    if len(words) >= 3 and words[:2] == ["Linux", "version"]:
        return words[2]
    return words[0][:80] if words else ""


def is_wsl_kernel(version_text: str) -> bool:
    """Whether a kernel's version string is Microsoft's WSL kernel (its release names it)."""
    release = kernel_release(version_text).lower()
    return any(word in release for word in WSL_KERNEL_WORDS)


def host_desktop(version_text: str | None, dxg_present: bool) -> HostDesktop | None:
    """The desktop fact from what the node shows: its kernel's version string (None: not read) and whether
    `/dev/dxg` exists; None where neither shows WSL (not a proof that no desktop shares the card)."""
    if version_text is not None and is_wsl_kernel(version_text):
        return HostDesktop(evidence=DesktopEvidence.PROC_VERSION, detail=kernel_release(version_text))
    if dxg_present:
        return HostDesktop(
            evidence=DesktopEvidence.DXG, detail="the DirectX kernel's GPU device, which only WSL2 has"
        )
    return None
