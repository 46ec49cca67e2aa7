"""Killed means stopped: the tracker's child processes never outlive it.

Workers and the dbt child ask the kernel to signal them when the tracker dies (Linux's parent
death signal), however it dies, ``kill -9`` included. A worker leads its own process group, so
when it is told to stop it takes the git processes it started with it. SIGTERM and SIGHUP to the
tracker itself stop it as Ctrl-C does: what was landed is kept, the rest is not.
"""

import ctypes
import ctypes.util
import os
import signal
import sys
from types import FrameType

PR_SET_PDEATHSIG = 1


def _set_parent_death_signal(sig: int) -> None:
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)


def die_with_parent() -> None:
    """For a child started with ``preexec_fn``: killed as soon as the tracker is gone."""
    parent = os.getppid()
    _set_parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent:  # the tracker died before the request was made
        os._exit(1)


def start_worker() -> None:
    """Pool initializer: lead a process group that dies, git children and all, with the
    tracker or when the pool is terminated."""
    parent = os.getppid()
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the tracker decides; it terminates the pool
    signal.signal(signal.SIGTERM, _kill_own_group)
    _set_parent_death_signal(signal.SIGTERM)
    if os.getppid() != parent:
        _kill_own_group()


def _kill_own_group(*_: object) -> None:
    os.killpg(os.getpid(), signal.SIGKILL)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def stop_on_termination() -> None:
    """Turn SIGTERM and SIGHUP into the same clean stop as Ctrl-C."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
