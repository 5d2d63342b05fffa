"""The training loop of one launch bundle on PyTorch: GPipe stages, data-parallel replicas.

Each process is one rank of the bundle (``RANK`` / ``WORLD_SIZE`` / ``MASTER_ADDR`` /
``MASTER_PORT`` as torchrun sets them). Rank ``r`` runs stage ``r % S`` of replica ``r // S``:
the transformer blocks of its layer range (:mod:`hulk.plan.torch_block`, the block
``hulk profile`` measures; block ``i`` is seeded the same in every layout), driven by
``torch.distributed.pipelining``'s ``ScheduleGPipe`` with the plan's micro-batches over a
process group per pipeline. After the backward pass the gradients of each stage are averaged
(one all-reduce of a flat buffer of them all, then / replicas) among the ranks that hold it,
then every rank takes an Adam step.

With the bundle's ``model.recompute`` each stage runs under ``torch.utils.checkpoint``
(GPipe's re-materialisation, as the plan costs it). Data: random, seeded. Iteration ``t``'s global batch is ``replicas * micro_batches *
micro_batch_size`` sequences of ``[seq_len, hidden]`` inputs and targets drawn from
``seed`` and ``t``; replica ``d`` trains on the ``d``-th slice. The loss is the mean squared
error of the last block's output against the target; the reported loss of an iteration is
its mean over the whole global batch, so a single process training the same model on the
same data (:func:`train_single`) reports the same losses up to rounding.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass

from ..errors import InputError
from ..plan.bundle import check_world_size, stage_of
from ..plan.torch_block import make_blocks, require_torch

RESULT_VERSION = "hulk-launch-result/1"


@dataclass
class Shape:
    """The model and batch a launch trains: the bundle's, or scaled down by options."""

    layers: int
    hidden: int
    heads: int
    seq_len: int
    micro_batch_size: int
    bounds: list  # [S + 1] stage boundaries over ``layers``
    recompute: bool = False  # GPipe re-materialisation of each stage


def shape_of(doc, layers=None, hidden=None, heads=None, seq_len=None, micro_batch_size=None) -> Shape:
    """The bundle's shape with overrides; with fewer (or more) layers the stage boundaries are
    scaled in proportion, each stage keeping at least one layer."""
    model = doc["model"]
    L = model["layers"] if layers is None else layers
    bounds = [st["layers"][0] for st in doc["stages"]] + [model["layers"]]
    S = len(doc["stages"])
    if L < S:
        raise InputError(f"--layers {L}: the plan has {S} stages and each needs at least one layer")
    scaled = [0] + [round(b * L / model["layers"]) for b in bounds[1:-1]] + [L]
    for s in range(1, S):  # keep every stage non-empty, in order
        scaled[s] = min(max(scaled[s], scaled[s - 1] + 1), L - (S - s))
    h = model["hidden"] if hidden is None else hidden
    if heads is None:
        heads = model["heads"] if hidden is None else max(1, h // 64)
    if h % heads:
        raise InputError(f"hidden {h} must be divisible by heads {heads} (give --heads)")
    return Shape(L, h, heads, model["seq_len"] if seq_len is None else seq_len,
                 doc["micro_batch_size"] if micro_batch_size is None else micro_batch_size, scaled,
                 model["recompute"])


def batch(doc, shape: Shape, seed: int, iteration: int, torch, device, dtype):
    """Iteration ``iteration``'s global batch: (inputs, targets), each [D * m * b, seq, hidden]."""
    n = len(doc["pipelines"]) * doc["micro_batches"] * shape.micro_batch_size
    g = torch.Generator().manual_seed(seed * 1_000_003 + iteration)
    x = torch.randn(n, shape.seq_len, shape.hidden, generator=g, dtype=dtype)
    y = torch.randn(n, shape.seq_len, shape.hidden, generator=g, dtype=dtype)
    return x.to(device), y.to(device)


def _blocks(shape: Shape, first: int, last: int, seed: int, torch, device, dtype, recompute: bool = False):
    """Blocks [first, last) as one module; with ``recompute`` the module keeps only its input
    for the backward pass and runs its forward again there (GPipe's re-materialisation)."""
    spec = _BlockSpec(shape.hidden, shape.heads)
    blocks = torch.nn.Sequential(*make_blocks(spec, last - first, first=first, seed=seed, device=device, dtype=dtype))
    if not recompute:
        return blocks
    from torch.utils.checkpoint import checkpoint

    class Recomputed(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):  # x: [batch, seq, hidden]
            return checkpoint(self.inner, x, use_reentrant=False)

    return Recomputed(blocks)


@dataclass
class _BlockSpec:
    hidden: int
    heads: int


def _device(name: str, torch):
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise InputError("--device cuda: no CUDA device is usable here")
    if name == "cuda":
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    return torch.device("cpu")


def train_distributed(doc, path, shape: Shape, *, iterations: int, warmup: int, seed: int, lr: float,
                      device: str = "auto", dtype_name: str = "float32", log=print) -> dict | None:
    """Runs the bundle as this process's rank; returns the result on rank 0 (None elsewhere)."""
    torch = require_torch()
    import torch.distributed as dist
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe

    check_world_size(doc, path, int(os.environ.get("WORLD_SIZE", "1")))  # before any rank waits for the others
    dev = _device(device, torch)
    dtype = getattr(torch, dtype_name)
    dist.init_process_group("nccl" if dev.type == "cuda" else "gloo")
    try:
        rank = dist.get_rank()
        D, S = len(doc["pipelines"]), len(doc["stages"])
        d, s = stage_of(doc, rank)
        # Every rank creates every group, in the same order (torch.distributed requires it).
        pipes = [dist.new_group(ranks=p) for p in doc["pipelines"]]
        replica_groups = [dist.new_group(ranks=st["ranks"]) for st in doc["stages"]]
        torch.manual_seed(seed)
        module = _blocks(shape, shape.bounds[s], shape.bounds[s + 1], seed, torch, dev, dtype, shape.recompute)
        stage = PipelineStage(module, s, S, dev, group=pipes[d])
        mse = torch.nn.functional.mse_loss
        schedule = ScheduleGPipe(stage, n_microbatches=doc["micro_batches"], loss_fn=mse)
        optimizer = torch.optim.Adam(module.parameters(), lr=lr)
        per = doc["micro_batches"] * shape.micro_batch_size  # sequences per replica
        times, losses = [], []
        for t in range(warmup + iterations):
            x, y = batch(doc, shape, seed, t, torch, dev, dtype)
            x, y = x[d * per:(d + 1) * per], y[d * per:(d + 1) * per]
            start = time.perf_counter()
            optimizer.zero_grad(set_to_none=False)
            micro_losses = []
            if s == 0 and s == S - 1:
                schedule.step(x, target=y, losses=micro_losses)
            elif s == 0:
                schedule.step(x)
            elif s == S - 1:
                schedule.step(target=y, losses=micro_losses)
            else:
                schedule.step()
            if D > 1:  # gradients of the stage averaged over its replicas
                _average_gradients(module, replica_groups[s], D, torch, dist)
            optimizer.step()
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
            elapsed = time.perf_counter() - start
            loss = torch.stack([l.detach().float() for l in micro_losses]).mean() if micro_losses else None
            if t >= warmup:
                times.append(elapsed)
                losses.append(loss)
        return _gather(doc, shape, rank, S, times, losses, iterations, warmup, seed, lr, dev, dtype_name,
                       replica_groups[S - 1], torch, dist, log)
    finally:
        dist.destroy_process_group()


def _average_gradients(module, group, replicas: int, torch, dist) -> None:
    """The stage's gradients summed over its replicas and divided by their count: one all-reduce
    of all of them in one flat buffer (as DDP buckets them), so the stage pays one ring's
    2 (n - 1) latency steps, what the cost model charges (csrc/plan/cost.h), not one per tensor."""
    grads = [p.grad for p in module.parameters()]
    flat = torch.cat([g.reshape(-1) for g in grads])  # [sum of the parameters' sizes]
    dist.all_reduce(flat, group=group)
    flat.div_(replicas)
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()


def _gather(doc, shape, rank, S, times, losses, iterations, warmup, seed, lr, dev, dtype_name, last_group,
            torch, dist, log):
    """Iteration times (the slowest rank's, per iteration) and losses (mean over replicas) to rank 0."""
    D = len(doc["pipelines"])
    t = torch.tensor(times, dtype=torch.float64, device=dev)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    loss = torch.zeros(iterations, dtype=torch.float64, device=dev)
    if rank % S == S - 1:
        loss = torch.stack([l.double() for l in losses]).to(dev)
        dist.all_reduce(loss, group=last_group)
        loss /= D
    dist.broadcast(loss, src=S - 1)
    if rank != 0:
        return None
    times, loss = t.cpu().tolist(), loss.cpu().tolist()
    for k, (a, b) in enumerate(zip(times, loss)):
        log(f"iteration {k + 1}/{iterations}: {a:.4f} s, loss {b:.6f}")
    return _result(doc, shape, times, loss, warmup, seed, lr, dev.type, dtype_name, backend=dist.get_backend())


def _result(doc, shape, times, losses, warmup, seed, lr, device, dtype_name, backend) -> dict:
    ordered = sorted(times)
    return dict(version=RESULT_VERSION, job=doc["job"], planner=doc["planner"], processes=doc["nnodes"],
                replicas=len(doc["pipelines"]), stages=len(doc["stages"]), micro_batches=doc["micro_batches"],
                micro_batch_size=shape.micro_batch_size, layers=shape.layers, hidden=shape.hidden,
                heads=shape.heads, seq_len=shape.seq_len, stage_bounds=shape.bounds, device=device,
                dtype=dtype_name, backend=backend, seed=seed, lr=lr, warmup=warmup,
                iteration_s=times, losses=losses, mean_iteration_s=sum(times) / len(times),
                median_iteration_s=ordered[len(ordered) // 2],
                predicted_iteration_s=doc["predicted"]["iteration_s"])


def train_single(doc, shape: Shape, *, iterations: int, warmup: int, seed: int, lr: float,
                 device: str = "cpu", dtype_name: str = "float32", log=print) -> dict:
    """The reference: the same blocks, data and optimiser in one process, whole global batch at once."""
    torch = require_torch()
    dev = _device(device, torch)
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(seed)
    model = _blocks(shape, 0, shape.layers, seed, torch, dev, dtype)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    times, losses = [], []
    for t in range(warmup + iterations):
        x, y = batch(doc, shape, seed, t, torch, dev, dtype)
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        if t >= warmup:
            times.append(time.perf_counter() - start)
            losses.append(float(loss.detach()))
    for k, (a, b) in enumerate(zip(times, losses)):
        log(f"iteration {k + 1}/{iterations} (single process): {a:.4f} s, loss {b:.6f}")
    return _result(doc, shape, times, losses, warmup, seed, lr, dev.type, dtype_name, backend="none")


def write_result(result: dict, path) -> None:
    from .._io import atomic_write
    atomic_write(path, json.dumps(result, indent=2, allow_nan=False) + "\n", what="launch result")
