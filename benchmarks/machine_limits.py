"""Fixed-capacity CPU "machines" for benchmarks: one cgroup per process with a CPU quota.

Processes that stand for machines on one host share its cores. Without limits a process runs
faster when its neighbours idle and slower when they (or other work on the host) compute, so its
speed is neither fixed nor what a profile measured. Here machine ``k`` gets a cgroup of its own:

* a CPU quota: ``cpus_each`` CPUs, i.e. ``cpus_each * period`` microseconds of CPU time per
  ``period`` (cgroup v2 ``cpu.max``; v1 ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``). The quotas
  of all machines must sum to at most the host's cores, so every machine can always have its
  quota; a short period keeps the throttling fine-grained;
* one core (``cpuset.cpus`` = ``k mod cores``), so the process does not migrate;
* a high weight for the parent group (v2 ``cpu.weight`` 10000, v1 ``cpu.shares`` 262144 against
  1024 for ordinary processes), so other work on the host yields to the machines.

A machine then computes at ``cpus_each`` of a core whether its neighbours are busy or idle; a
profile taken in the same cgroup measures that machine. Kernel docs:
https://docs.kernel.org/admin-guide/cgroup-v2.html (cpu.max, cpu.weight, cpuset.cpus) and
https://docs.kernel.org/scheduler/sched-bwc.html (CFS bandwidth control, v1 files).

Both hierarchies are supported: v2 when ``/sys/fs/cgroup/cgroup.controllers`` offers ``cpu``,
else v1 when ``/sys/fs/cgroup/cpu/cpu.cfs_quota_us`` exists (this project's machines mount v1
``cpu`` and ``cpuset`` and a v2 hierarchy with no CPU controller). Needs root.
"""

from __future__ import annotations

import os
from pathlib import Path

V2_ROOT = Path("/sys/fs/cgroup")
V1_CPU = Path("/sys/fs/cgroup/cpu")
V1_CPUSET = Path("/sys/fs/cgroup/cpuset")
V1_SHARES_MAX = 262144
V2_WEIGHT_MAX = 10000


def _write(path: Path, value) -> None:
    path.write_text(f"{value}\n")


def cgroup_version() -> int:
    """2 or 1 (which hierarchy offers the CPU controller), else RuntimeError saying what was found."""
    controllers = V2_ROOT / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return 2
    if (V1_CPU / "cpu.cfs_quota_us").exists():
        return 1
    found = [m for m in Path("/proc/mounts").read_text().splitlines() if "cgroup" in m]
    raise RuntimeError("no writable CPU controller: neither cgroup v2 with 'cpu' in /sys/fs/cgroup/cgroup.controllers "
                       f"nor v1 /sys/fs/cgroup/cpu; cgroup mounts: {found}")


class CpuLimits:
    """Cgroups ``<name>/m0 .. m{n-1}``, each ``cpus_each`` CPUs per ``period_us`` on one core."""

    def __init__(self, n: int, cpus_each: float, period_us: int = 10_000, name: str = "hulkx"):
        cores = os.cpu_count() or 1
        if not 0 < cpus_each <= 1:
            raise ValueError(f"cpus_each must be in (0, 1], got {cpus_each}")
        if n * cpus_each > cores + 1e-9:
            raise ValueError(f"{n} machines x {cpus_each} CPUs exceed the {cores} cores")
        if not 1000 <= period_us <= 1_000_000:
            raise ValueError(f"period_us must be in [1000, 1000000] (the kernel's range), got {period_us}")
        self.n, self.cpus_each, self.period_us, self.name, self.cores = n, cpus_each, period_us, name, cores
        self.quota_us = int(round(cpus_each * period_us))
        self.version = cgroup_version()
        self.dirs: list = []  # per machine: the directories its pid is written to

    def core_of(self, k: int) -> int:
        return k % self.cores

    def setup(self) -> "CpuLimits":
        self.remove()
        if self.version == 2:
            self._setup_v2()
        else:
            self._setup_v1()
        return self

    def _setup_v2(self) -> None:
        parent = V2_ROOT / self.name
        _write(V2_ROOT / "cgroup.subtree_control", "+cpu +cpuset")
        parent.mkdir()
        _write(parent / "cpu.weight", V2_WEIGHT_MAX)
        _write(parent / "cgroup.subtree_control", "+cpu +cpuset")
        for k in range(self.n):
            d = parent / f"m{k}"
            d.mkdir()
            _write(d / "cpu.max", f"{self.quota_us} {self.period_us}")
            _write(d / "cpuset.cpus", self.core_of(k))
            self.dirs.append([d])

    def _setup_v1(self) -> None:
        cpu, cpuset = V1_CPU / self.name, V1_CPUSET / self.name
        cpu.mkdir()
        _write(cpu / "cpu.shares", V1_SHARES_MAX)
        use_cpuset = (V1_CPUSET / "cpuset.cpus").exists()
        if use_cpuset:
            cpuset.mkdir()
            _write(cpuset / "cpuset.cpus", (V1_CPUSET / "cpuset.cpus").read_text().strip())
            _write(cpuset / "cpuset.mems", (V1_CPUSET / "cpuset.mems").read_text().strip())
        for k in range(self.n):
            d = cpu / f"m{k}"
            d.mkdir()
            _write(d / "cpu.cfs_period_us", self.period_us)
            _write(d / "cpu.cfs_quota_us", self.quota_us)
            dirs = [d]
            if use_cpuset:
                s = cpuset / f"m{k}"
                s.mkdir()
                _write(s / "cpuset.cpus", self.core_of(k))
                _write(s / "cpuset.mems", (V1_CPUSET / "cpuset.mems").read_text().strip())
                dirs.append(s)
            self.dirs.append(dirs)

    def wrap(self, k: int, cmd: list) -> list:
        """``cmd`` started inside machine ``k``'s cgroups (the shell moves itself in, then execs)."""
        moves = "; ".join(f"echo $$ > {d / 'cgroup.procs'}" for d in self.dirs[k])
        return ["sh", "-c", f'{moves}; exec "$@"', "sh", *map(str, cmd)]

    def throttled(self) -> list:
        """Per machine: (periods, throttled periods) from cpu.stat so far."""
        out = []
        for dirs in self.dirs:
            stat = dict(line.split() for line in (dirs[0] / "cpu.stat").read_text().splitlines() if line.strip())
            out.append((int(stat.get("nr_periods", 0)), int(stat.get("nr_throttled", 0))))
        return out

    def remove(self) -> None:
        roots = [V2_ROOT / self.name] if self.version == 2 else [V1_CPU / self.name, V1_CPUSET / self.name]
        for root in roots:
            if root.exists():
                for child in sorted(root.glob("m*")):
                    if child.is_dir():
                        child.rmdir()
                root.rmdir()
        self.dirs = []

    def describe(self) -> str:
        files = ("cpu.max" if self.version == 2 else "cpu.cfs_quota_us / cpu.cfs_period_us")
        weight = (f"parent cpu.weight {V2_WEIGHT_MAX}" if self.version == 2
                  else f"parent cpu.shares {V1_SHARES_MAX} (ordinary processes: 1024)")
        return (f"cgroup v{self.version}: each of the {self.n} processes in its own cgroup, {files} = "
                f"{self.quota_us} / {self.period_us} us ({self.cpus_each:g} CPU), pinned to core k mod {self.cores} "
                f"(cpuset.cpus); {weight}; OMP_NUM_THREADS=1 and torch.set_num_threads(1)")
