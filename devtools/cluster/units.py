"""Quantities and times as the API writes them, and what GKE's kubelet keeps for itself."""

from __future__ import annotations

from datetime import datetime

from devtools.cluster.catalog import Pool


def ts(moment: datetime) -> str:
    """RFC 3339 at second precision, as the API writes metadata timestamps."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_ts(moment: datetime) -> str:
    """RFC 3339 with microseconds, as the API writes `eventTime`."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def cpu_quantity(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def memory_quantity(mib: int) -> str:
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


def reserved_cpu_m(cpus: int) -> int:
    """GKE's kubelet CPU reservation: 6% of the first core, 1% of the second, 0.5% of the next two,
    0.25% of the rest."""
    return 60 + 10 * min(1, cpus - 1) + 5 * min(2, max(cpus - 2, 0)) + (max(cpus - 4, 0) * 25) // 10


def reserved_memory_mib(memory_gib: int) -> int:
    """GKE's kubelet memory reservation plus the 100 MiB eviction threshold."""
    left, reserved = float(memory_gib), 0.0
    for size, rate in ((4, 0.25), (4, 0.20), (8, 0.10), (112, 0.06), (10**6, 0.02)):
        part = min(left, size)
        reserved += part * rate
        left -= part
    return int(reserved * 1024) + 100


def capacity_memory_ki(pool: Pool) -> int:
    """What the kernel reports: a little under the machine's nominal memory."""
    return pool.memory_gib * 1024 * 1024 - 2_500_000


def allocatable_memory_mib(pool: Pool) -> int:
    return (capacity_memory_ki(pool) // 1024) - reserved_memory_mib(pool.memory_gib)


def allocatable_cpu_m(pool: Pool) -> int:
    return pool.cpus * 1000 - reserved_cpu_m(pool.cpus)
