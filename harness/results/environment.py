"""The machine a run measured on, as meta.json records it: environment, packages,
load, CPU model and frequency, timers."""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path
from typing import Any

# --------------------------------------------------------------------- meta


#: The top-level keys of meta.json that :func:`environment_meta` writes.
ENVIRONMENT_KEYS = (
    "python", "packages", "platform", "hostname", "cpu_model", "cpu_count",
    "cpu_affinity", "cpu_frequency", "load_average_start",
)  # fmt: skip


def environment_meta() -> dict[str, Any]:
    """Python, package versions, platform and CPU: what a reader needs to compare."""
    from importlib.metadata import PackageNotFoundError, version

    packages = {}
    for name in PACKAGES:
        try:
            packages[name] = version(name)
        except PackageNotFoundError:
            packages[name] = None
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "packages": packages,
        "platform": platform.platform(),
        "hostname": platform.node(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": _affinity(),
        "cpu_frequency": cpu_frequency(),
        "load_average_start": load_average(),
    }


#: Packages whose versions meta.json records (compare warns when they differ).
PACKAGES = (
    "npuzzle-harness",
    "numpy",
    "numba",
    "llvmlite",
    "pandas",
    "matplotlib",
    "rich",
    "typer",
)


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _affinity() -> list[int] | None:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:
        return None


def cpu_frequency() -> dict[str, Any]:
    """Per-core current frequency (MHz) and governor where the kernel exposes them
    (``/sys/devices/system/cpu/cpu*/cpufreq``); else the MHz ``/proc/cpuinfo``
    reports, with ``source`` saying which. Many VMs expose neither honestly."""
    cores: dict[str, dict[str, Any]] = {}
    base = Path("/sys/devices/system/cpu")
    for d in sorted(base.glob("cpu[0-9]*/cpufreq")):
        entry: dict[str, Any] = {}
        for name, key in (
            ("scaling_cur_freq", "mhz"),
            ("scaling_governor", "governor"),
        ):
            try:
                text = (d / name).read_text().strip()
            except OSError:
                continue
            entry[key] = round(int(text) / 1000) if key == "mhz" else text
        if entry:
            cores[d.parent.name] = entry
    if cores:
        return {"source": "cpufreq", "cores": cores}
    mhz = []
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("cpu mhz"):
                mhz.append(round(float(line.split(":", 1)[1])))
    except (OSError, ValueError):
        pass
    if mhz:
        return {"source": "/proc/cpuinfo (nominal on many VMs)", "mhz": mhz}
    return {"source": "not readable"}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def timer_meta() -> dict[str, Any]:
    """The clocks used for the solve call and their resolutions."""
    perf = time.get_clock_info("perf_counter")
    cpu = time.get_clock_info("process_time")
    return {
        "wall_clock": f"time.perf_counter_ns ({perf.implementation})",
        "perf_counter_resolution_s": perf.resolution,
        "cpu_clock": f"time.process_time_ns ({cpu.implementation})",
        "process_time_resolution_s": cpu.resolution,
    }
