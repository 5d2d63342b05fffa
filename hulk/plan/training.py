"""The learned planner's teacher and training: generated clusters labelled by the search planner.

The GNN of :mod:`hulk.plan.learned` learns from a teacher, the search planner
(``hulk.plan.plan(..., "search")``), on many generated clusters (:mod:`hulk.plan.generate`).

Teacher labels (:func:`label_sample`)
-------------------------------------
The search planner plans the generated cluster with a time limit and an iteration budget; each
machine's label is the slot of the job whose plan uses it, else idle. A sample whose search plan
runs jobs one after another (Systems A/B/C won) is kept with every machine unlabelled (-1) and
counted; it does not train the model.

Data set (:func:`make_dataset`): sample ``i`` of a seed draws its size log-uniformly from
``sizes``, a generator regime uniformly from ``REGIMES`` (the paper-fitted generator, and
measured cloud networks with 1-8 or many 8-GPU machines per region, mixed or uniform GPUs: see
:func:`hulk.plan.generate.generate_cluster`), and its jobs as a random subset of the catalogue (1 to ``max_jobs`` jobs), dropping the
largest while the jobs need more than ``MEMORY_HEADROOM`` = 0.6 of the cluster's memory. Labels
are computed in parallel worker processes and cached per sample in ``cache_dir`` (the file name
is a hash of everything the label depends on), so a rerun only loads them.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import io
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._checks import check_seed, is_int, is_real
from .._io import atomic_write
from .._progress import Progress
from ..gnn import GNN
from ..graph import Graph
from . import generate, models
from .inputs import as_model_specs
from .learned import MAX_JOBS, LearnedPlanner, decode_groups, encode, rule_groups, slot_order
from .planners import plan
from .rules import job_need_bytes, plan_classes
from ..errors import FileFormatError, InputError

MEMORY_HEADROOM = 0.6
MAX_SAMPLES = 100_000  # a data set larger than this would take days to label
_DATASET_VERSION = 6  # bump when labels or generation change, so caches are not reused

# The generator regimes the teacher's clusters come from: the paper-fitted world, and measured
# cloud networks (hulk.plan.cloud_network) with few machines per region (mixed or uniform
# GPUs) or many. Arguments of generate.generate_cluster; sample i draws one uniformly.
REGIMES = {
    "paper": {},
    "measured-few": {"mode": "measured", "machines_per_region": (1, 8)},
    "measured-few-uniform": {"mode": "measured", "machines_per_region": (1, 8), "gpu_mix": {"A100 80GB": 1}},
    "measured": {"mode": "measured"},
}


def labels_from_plan(plan, jobs, max_jobs: int = MAX_JOBS) -> np.ndarray:
    """Slot per machine from a concurrent plan (idle = ``max_jobs``); all -1 for a sequential
    plan (no machine-to-job classification exists). A machine used by two jobs (one waits for
    the other) takes the larger job's slot."""
    n = len(plan.cluster)
    y = np.full(n, -1 if plan.sequential else max_jobs, dtype=np.int64)
    if plan.sequential:
        return y
    order = slot_order(plan.job_specs)
    for s in reversed(range(len(order))):
        y[np.asarray(plan.jobs[order[s]]["machines"], dtype=np.int64)] = s
    return y



# --------------------------------------------------------------------------------------------
# Data set: generated clusters labelled by the search planner
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SampleSpec:
    index: int
    n: int
    cluster_seed: int
    jobs: tuple
    regime: str = "paper"  # a key of REGIMES

    def cluster(self) -> generate.RegionalCluster:
        return generate.generate_cluster(self.n, seed=self.cluster_seed, **REGIMES[self.regime])


def sample_specs(count: int, seed: int = 0, sizes=(16, 300), max_jobs: int = MAX_JOBS) -> list[SampleSpec]:
    """``count`` problem instances, deterministic in ``seed`` (see the module docstring)."""
    seed = check_seed(seed)
    lo, hi = sizes
    if not (is_int(lo) and is_int(hi) and 2 <= lo <= hi):
        raise InputError(f"sizes must be two integers 2 <= lo <= hi, got {sizes!r}")
    out = []
    for i in range(count):
        rng = np.random.default_rng([seed, i])
        n = int(round(math.exp(rng.uniform(math.log(lo), math.log(hi + 0.499)))))
        n = min(max(n, lo), hi)
        cluster_seed = int(rng.integers(0, 2**31 - 1))
        regime = sorted(REGIMES)[int(rng.integers(0, len(REGIMES)))]
        memory = SampleSpec(i, n, cluster_seed, (), regime).cluster().memory_gb.sum() * 1e9
        chosen = draw_jobs(rng, memory, max_jobs)
        if chosen:
            out.append(SampleSpec(i, n, cluster_seed, tuple(chosen), regime))
    return out


def draw_jobs(rng, cluster_memory_bytes: float, max_jobs: int = MAX_JOBS) -> list[str]:
    """A random job set from the catalogue: 1 to ``max_jobs`` distinct models, the largest
    dropped while they need more than ``MEMORY_HEADROOM`` of the cluster's memory (may be empty)."""
    names = sorted(models.catalogue())
    specs = models.catalogue()
    need = dict(zip(names, job_need_bytes([specs[k] for k in names])))
    k = int(rng.integers(1, min(max_jobs, len(names)) + 1))
    chosen = [names[t] for t in rng.choice(len(names), size=k, replace=False)]
    chosen.sort(key=lambda j: -need[j])
    while chosen and sum(need[j] for j in chosen) > MEMORY_HEADROOM * cluster_memory_bytes:
        chosen.pop(0)
    return chosen


@dataclass
class Sample:
    spec: SampleSpec
    labels: np.ndarray        # [N] slot per machine, -1 when the teacher's plan was sequential
    search_makespan_s: float
    search_s: float


def _sample_key(spec: SampleSpec, time_limit_s: float, iterations: int, max_jobs: int) -> str:
    text = json.dumps([_DATASET_VERSION, spec.n, spec.cluster_seed, list(spec.jobs), spec.regime, time_limit_s, iterations, max_jobs,
                       generate.LATENCY_A_MS, generate.LATENCY_B_MS_PER_KM])
    return hashlib.sha1(text.encode()).hexdigest()[:20]


def label_sample(spec: SampleSpec, time_limit_s: float = 2.0, iterations: int = 2000,
                 max_jobs: int = MAX_JOBS) -> Sample:
    """The teacher's labels for one instance (search planner, seed = the sample index)."""
    p = plan(spec.cluster(), list(spec.jobs), "search", time_limit_s=time_limit_s, seed=spec.index,
             max_iterations=iterations)
    return Sample(spec, labels_from_plan(p, list(spec.jobs), max_jobs), p.makespan_s, p.planning_s)


def _label_to_cache(args) -> tuple[int, str]:
    spec, time_limit_s, iterations, max_jobs, path = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    s = label_sample(spec, time_limit_s, iterations, max_jobs)
    buf = io.BytesIO()
    np.savez(buf, labels=s.labels, search_makespan_s=s.search_makespan_s, search_s=s.search_s)
    atomic_write(path, buf.getvalue(), what="label cache file")
    return spec.index, path


def default_cache_dir() -> Path:
    return Path(os.environ.get("HULK_CACHE", Path.home() / ".cache" / "hulk")) / "labels"


def _make_cache_dir(cache_dir) -> Path:
    """The label cache folder, created if needed; a path that is (or runs through) a file is an
    InputError naming the argument, or the HULK_CACHE environment variable it came from."""
    if cache_dir is not None:
        cache, source, fix = Path(cache_dir), "cache_dir", "give a folder"
    elif "HULK_CACHE" in os.environ:
        cache, source, fix = default_cache_dir(), f"HULK_CACHE={os.environ['HULK_CACHE']!r}", "set HULK_CACHE to a folder"
    else:
        cache, source, fix = default_cache_dir(), "the default label cache", "set HULK_CACHE or give cache_dir"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        blocker = next((p for p in [cache, *cache.parents] if p.exists() and not p.is_dir()), cache)
        what = "is a file" if blocker == cache else f"runs through {str(blocker)!r}, which is a file"
        raise InputError(f"{source}: the label cache folder {str(cache)!r} {what}, not a folder; {fix}") from exc
    except OSError as exc:
        raise InputError(f"{source}: cannot create the label cache folder {str(cache)!r} "
                         f"({exc.strerror or exc}); {fix}") from exc
    return cache


def make_dataset(count: int, seed: int = 0, *, sizes=(16, 300), time_limit_s: float = 2.0, iterations: int = 2000,
                 max_jobs: int = MAX_JOBS, cache_dir=None, workers: int | None = None,
                 progress: bool = True) -> list[Sample]:
    """Generates ``count`` instances and labels them with the search planner, in ``workers``
    processes (default: the CPU count), caching each label file in ``cache_dir``."""
    if not is_int(count) or count < 1:
        raise InputError(f"count must be a positive integer, got {count!r}")
    if not (is_real(time_limit_s) and math.isfinite(time_limit_s) and time_limit_s > 0):
        raise InputError(f"time_limit_s must be a positive number of seconds, got {time_limit_s!r}")
    if not is_int(iterations) or iterations < 0:
        raise InputError(f"iterations must be a non-negative integer, got {iterations!r}")
    if count > MAX_SAMPLES:
        raise InputError(f"count = {count} is more than the {MAX_SAMPLES} samples a data set may have")
    if workers is not None and (not is_int(workers) or workers < 1):
        raise InputError(f"workers must be a positive integer (or None for the CPU count), got {workers!r}")
    seed = check_seed(seed)
    cache = _make_cache_dir(cache_dir)
    specs = sample_specs(count, seed, sizes, max_jobs)
    paths = {s.index: str(cache / f"sample-{_sample_key(s, time_limit_s, iterations, max_jobs)}.npz") for s in specs}
    todo = [s for s in specs if not os.path.exists(paths[s.index])]
    workers = workers or os.cpu_count() or 1
    bar = Progress(len(todo), "labelling", enabled=progress and bool(todo))
    if todo:
        jobs_args = [(s, time_limit_s, iterations, max_jobs, paths[s.index]) for s in todo]
        if workers == 1:
            for a in jobs_args:
                _label_to_cache(a)
                bar.update()
        else:
            ctx = multiprocessing.get_context("spawn")
            with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                for _ in pool.map(_label_to_cache, jobs_args):
                    bar.update()
    return [_load_cached_sample(s, paths[s.index], max_jobs) for s in specs]


def _load_cached_sample(spec: SampleSpec, path: str, max_jobs: int) -> Sample:
    """One cached label file, checked against the sample it belongs to; errors name the file."""
    def bad(why: str, field: str | None = None) -> FileFormatError:
        err = FileFormatError(path, field, why)
        # the message keeps the form of every label cache error: the file first, how to recover last
        Exception.__init__(err, f"label cache file {path!r}: {why}; delete it to relabel the sample")
        return err
    try:
        with np.load(path, allow_pickle=False) as f:
            missing = {"labels", "search_makespan_s", "search_s"} - set(f.files)
            if missing:
                raise bad(f"missing {sorted(missing)}", sorted(missing)[0])
            labels, makespan, seconds = f["labels"], f["search_makespan_s"], f["search_s"]
    except FileFormatError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:  # a truncated archive: BadZipFile
        raise bad(f"unreadable ({type(exc).__name__}: {exc})") from None
    if labels.dtype.kind not in "iu" or labels.shape != (spec.n,):
        raise bad(f"labels have dtype {labels.dtype} and shape {labels.shape}, expected int64 ({spec.n},)", "labels")
    if labels.size and (labels.min() < -1 or labels.max() > max_jobs):
        raise bad(f"labels outside [-1, {max_jobs}]", "labels")
    for name, value in (("search_makespan_s", makespan), ("search_s", seconds)):
        if value.shape != () or value.dtype.kind not in "fiu" or not np.isfinite(value):
            raise bad("search_makespan_s and search_s must be finite scalars", name)
    return Sample(spec, labels.astype(np.int64), float(makespan), float(seconds))


def train(samples: list, *, hidden=(64, 64, 64), epochs: int = 30, batch_graphs: int = 8, lr: float = 0.005,
          weight_decay: float = 1e-5, val_fraction: float = 0.15, seed: int = 0, device: str = "cpu",
          max_jobs: int = MAX_JOBS, k_local: int = 8, k_remote: int = 8, idle_ratio: float = 8.0,
          boost: int = 4, progress: bool = True, log=print) -> tuple:
    """Trains a LearnedPlanner on labelled samples; returns ``(planner, history)``.

    Samples are split once (``val_fraction`` for validation, by ``seed``); every epoch shuffles
    the training samples and takes one optimiser step per batch of ``batch_graphs`` graphs. Idle
    machines outnumber the others many times on large clusters, so each step's loss sees at
    most ``idle_ratio`` idle machines per machine with a job (a random subset). Training clusters
    where the greedy rule's plan is more than 2% behind the teacher's are seen ``boost`` times per
    epoch: elsewhere the teacher's labels mostly repeat the rule the features already carry.
    After each epoch the validation clusters are planned with the model's groups (Algorithm 1,
    no refinement); the weights of the epoch whose mean makespan over the teacher's is least
    (ties: best node accuracy) are kept, since node accuracy mostly counts idle machines."""
    seed = check_seed(seed)
    usable = [s for s in samples if (s.labels >= 0).any()]
    if len(usable) < 2:
        raise InputError(f"need at least 2 samples with labels, got {len(usable)} of {len(samples)}")
    for name, v in (("epochs", epochs), ("batch_graphs", batch_graphs), ("boost", boost)):
        if not is_int(v) or v < 1:
            raise InputError(f"{name} must be a positive integer, got {v!r}")
    if not 0 < val_fraction < 1:
        raise InputError(f"val_fraction must be in (0, 1), got {val_fraction!r}")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(usable))
    n_val = max(1, int(round(val_fraction * len(usable))))
    val, tr = [usable[i] for i in perm[:n_val]], [usable[i] for i in perm[n_val:]]
    if boost > 1:  # the samples that teach something the greedy rule does not know, seen more often
        hard = [s for s in tr if _greedy_over_teacher(s) > 1.02]
        log(f"boost: {len(hard)} of {len(tr)} training clusters where the greedy rule's plan is over 2% "
            f"behind the teacher's are seen {boost}x per epoch")
        tr = tr + hard * (boost - 1)
    t0 = time.perf_counter()
    graphs = {id(s): encode(s.spec.cluster(), list(s.spec.jobs), max_jobs=max_jobs, k_local=k_local,
                            k_remote=k_remote, seed=s.spec.index) for s in usable}
    log(f"encoded {len(usable)} clusters ({sum(len(s.labels) for s in usable)} machines) in "
        f"{time.perf_counter() - t0:.1f} s; {len(tr)} for training, {len(val)} for validation")
    greedy_val = float(np.mean([min(_greedy_over_teacher(s), 10.0) for s in val]))
    log(f"the greedy rule's plans on the validation clusters: makespan / teacher's {greedy_val:.4f} (mean)")
    gnn = GNN(num_classes=max_jobs + 1, hidden=hidden, pooling="mean", seed=seed, device=device)
    gnn.fit_scaler(Graph.batch([graphs[id(s)] for s in tr]))
    g_val = Graph.batch([graphs[id(s)] for s in val])
    y_val = np.concatenate([s.labels for s in val])
    history, best, best_acc, best_ratio = [], None, -1.0, math.inf

    def planner_of(model):
        return LearnedPlanner(model, max_jobs, k_local, k_remote)
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(tr))
        # The per-step bar only on a terminal: in a log the epoch line below says it all.
        bar = Progress(math.ceil(len(tr) / batch_graphs), f"epoch {epoch:3d}/{epochs}",
                       enabled=progress and sys.stderr.isatty())
        losses, correct, count = [], 0.0, 0
        for k in range(0, len(tr), batch_graphs):
            batch = [tr[i] for i in order[k:k + batch_graphs]]
            y = np.concatenate([s.labels for s in batch])
            mask = _balanced_mask(y, max_jobs, idle_ratio, rng)
            r = gnn.partial_fit(Graph.batch([graphs[id(s)] for s in batch]), y, mask, lr=lr, weight_decay=weight_decay)
            labelled = int(mask.sum())
            losses.append(r["loss"])
            correct += r["acc"] * labelled
            count += labelled
            bar.update(info=f"loss {np.mean(losses):.4f}")
        v = gnn.evaluate(g_val, y_val)
        ratio = _plan_ratio(planner_of(gnn), val, graphs)
        row = dict(epoch=epoch, train_loss=float(np.mean(losses)), train_acc=correct / max(count, 1),
                   val_loss=v["loss"], val_acc=v["acc"], val_plan_ratio=ratio, seconds=time.perf_counter() - t0)
        history.append(row)
        log(f"epoch {epoch:3d}  train loss {row['train_loss']:.4f} acc {row['train_acc']:.3f}  "
            f"val loss {row['val_loss']:.4f} acc {row['val_acc']:.3f} plan/teacher {ratio:.4f}  {row['seconds']:.0f} s")
        if best is None or (ratio, -v["acc"]) < (best_ratio, -best_acc):
            best_ratio, best_acc, best = ratio, v["acc"], _snapshot(gnn)
    _restore(gnn, best)
    info = dict(samples=len(usable), train=len(tr), val=len(val), epochs=epochs, best_val_acc=best_acc,
                best_val_plan_ratio=best_ratio, greedy_val_plan_ratio=greedy_val, idle_ratio=idle_ratio, boost=boost,
                hidden=list(hidden), lr=lr, batch_graphs=batch_graphs, seed=seed)
    return LearnedPlanner(gnn, max_jobs, k_local, k_remote, info), history


def _greedy_over_teacher(sample: Sample) -> float:
    """The greedy rule's makespan (Algorithm 1, partition, no refinement) over the teacher's."""
    c, jobs = sample.spec.cluster(), list(sample.spec.jobs)
    return plan_classes(c, jobs, rule_groups(c, jobs)[1]).makespan_s / sample.search_makespan_s


def _plan_ratio(planner: "LearnedPlanner", samples: list, graphs: dict) -> float:
    """Mean over ``samples`` of the makespan of the planner's groups (decoded, Algorithm 1,
    partition, no refinement) over the teacher's: the quantity the model is for, where node
    accuracy mostly counts idle machines right. An infeasible plan counts as 10x the teacher's."""
    ratios = []
    for s in samples:
        c, job_specs = s.spec.cluster(), as_model_specs(list(s.spec.jobs))
        proba = planner.gnn.predict_proba(graphs[id(s)])
        memory, rule = rule_groups(c, job_specs)
        classes = decode_groups(proba, memory, job_specs, rule)
        m = plan_classes(c, job_specs, classes).makespan_s
        ratios.append(min(m / s.search_makespan_s, 10.0) if math.isfinite(m) else 10.0)
    return float(np.mean(ratios))


def _balanced_mask(y: np.ndarray, idle: int, idle_ratio: float, rng) -> np.ndarray:
    busy = (y >= 0) & (y != idle)
    n_idle = int((y == idle).sum())
    keep = 1.0 if n_idle == 0 else min(1.0, idle_ratio * max(int(busy.sum()), 1) / n_idle)
    return (busy | ((y == idle) & (rng.random(y.size) < keep))).astype(np.uint8)


def _snapshot(gnn: GNN) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.gnn")
        gnn.save(p)
        return Path(p).read_bytes()


def _restore(gnn: GNN, blob: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.gnn")
        Path(p).write_bytes(blob)
        gnn.load_weights(p)
