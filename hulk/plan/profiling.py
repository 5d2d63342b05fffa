"""Measure a model's layers with PyTorch and write a ``hulk-profile/1`` profile (``hulk profile``).

The layer measured is the transformer block of :mod:`hulk.plan.torch_block`, sized from the model's
``hidden`` and ``seq_len`` (heads: hidden / 64), the block ``hulk.launch`` trains. A model's layers
are alike, so one block is measured and its figures are written for every layer.

For each micro-batch size b (sequences), on random inputs ``[b, seq_len, hidden]``:

* ``warmup`` untimed forward + backward passes, then ``repeats`` timed ones, the sizes' timed
  passes interleaved (one pass of each size in turn, so a drift in the machine's speed touches
  every size alike); the forward time is
  from the call to the output, the backward time from ``y.backward(grad)`` to the gradients, the
  device synchronised before each clock reading (CUDA); the figure written is the median (or the
  mean with ``statistic="mean"``: the long-run rate, the right figure when the process runs
  under a CPU quota, whose passes alternate between full speed and throttled);
* activation bytes: the bytes of the distinct tensors autograd saves for the backward pass
  (``torch.autograd.graph.saved_tensors_hooks``), the block's parameters excluded;
* the optimiser step: ``torch.optim.Adam`` over the block's parameters, timed the same way,
  divided by the parameter count.

PyTorch is optional (``pip install hulk[torch]``); it is imported when a measurement starts.
"""

from __future__ import annotations

import platform
import statistics
import time

from .._checks import check_int
from ..errors import InputError
from . import torch_block
from .profile import PROFILE_SCHEMA_VERSION, from_doc

__all__ = ["DTYPES", "device_name", "measure"]

DTYPES = ("float32", "float16", "bfloat16")


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def device_name(device) -> str:
    """What the profile calls the device: CUDA's name for a GPU, the CPU model for the CPU."""
    torch = torch_block.require_torch()
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU: {_cpu_name()} ({torch.get_num_threads()} threads)"


def _sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _saved_bytes(torch, block, x, grad) -> float:
    """Bytes of the distinct non-parameter tensors autograd saves in one forward pass."""
    params = {p.untyped_storage().data_ptr() for p in block.parameters()}
    seen = {}

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() not in params:
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = block(x)
    y.backward(grad)
    block.zero_grad(set_to_none=True)
    return float(sum(seen.values()))


def _time_pass(torch, device, block, x, grad) -> tuple:
    _sync(torch, device)
    t0 = time.perf_counter()
    y = block(x)
    _sync(torch, device)
    t1 = time.perf_counter()
    y.backward(grad)
    _sync(torch, device)
    t2 = time.perf_counter()
    block.zero_grad(set_to_none=True)
    return t1 - t0, t2 - t1


def measure(spec, micro_batches=(1, 2, 4), *, device: str = "cpu", dtype: str = "float32", warmup: int = 3,
            repeats: int = 10, gpu: str | None = None, seed: int = 0, threads: int | None = None,
            statistic: str = "median", heads: int | None = None, progress=print):
    """A :class:`hulk.plan.Profile` of ``spec`` (a :class:`hulk.plan.ModelSpec`) measured on
    ``device`` at each micro-batch size (module docstring). ``gpu`` is the GPU type the
    cluster's machines name (default: "cpu" on the CPU, the CUDA device's name on a GPU).
    ``statistic``: "median" or "mean" of the timed passes. ``heads``: the block's attention heads
    (default hidden / 64; a Hugging Face config states its own). ``threads``: PyTorch's intra-op threads
    for the measurement (None: as PyTorch chose; a machine that trains with one thread per
    process is profiled with 1). ``progress`` receives
    one line per step (None: silent)."""
    torch = torch_block.require_torch()
    if threads is not None:
        check_int(threads, "threads", 1)
        torch.set_num_threads(threads)
    check_int(warmup, "warmup", 0)
    check_int(repeats, "repeats", 1)
    if statistic not in ("median", "mean"):
        raise InputError(f"statistic must be 'median' or 'mean', got {statistic!r}")
    reduce = statistics.median if statistic == "median" else statistics.mean
    if dtype not in DTYPES:
        raise InputError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    sizes = list(micro_batches)
    if not sizes:
        raise InputError("micro_batches: give at least one size")
    for b in sizes:
        check_int(b, "micro_batches", 1)
    if len(set(sizes)) != len(sizes):
        raise InputError(f"micro_batches must be distinct, got {sizes}")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"device {device!r}: CUDA is not available to PyTorch here")
    say = progress or (lambda line: None)
    name = device_name(dev)
    torch_dtype = getattr(torch, dtype)
    torch.manual_seed(seed)
    block = torch_block.make_block(spec, seed=seed, dtype=torch_dtype, device=dev, heads=heads)
    n_params = sum(p.numel() for p in block.parameters())
    say(f"profiling {spec.name}: one block of hidden {spec.hidden}, {block.heads} heads, seq {spec.seq_len} "
        f"({n_params:,} parameters) on {name}, {dtype}; {warmup} warm-up + {repeats} timed passes per size")
    inputs = {}
    for b in sorted(sizes):
        x = torch.randn(b, spec.seq_len, spec.hidden, device=dev, dtype=torch_dtype, requires_grad=True)
        grad = torch.randn(b, spec.seq_len, spec.hidden, device=dev, dtype=torch_dtype)
        inputs[b] = (x, grad, _saved_bytes(torch, block, x, grad))
        for _ in range(warmup):
            _time_pass(torch, device=dev, block=block, x=x, grad=grad)
    # The timed passes of the sizes are interleaved (b1, b2, ..., b1, b2, ...), so a slow change in
    # the machine's speed (other work on it, clock changes) touches every size alike.
    times = {b: [] for b in inputs}
    for _ in range(repeats):
        for b, (x, grad, _) in inputs.items():
            times[b].append(_time_pass(torch, dev, block, x, grad))
    entries = []
    for k, (b, (_, _, act)) in enumerate(inputs.items()):
        fwd = reduce([t[0] for t in times[b]])
        bwd = reduce([t[1] for t in times[b]])
        say(f"  micro-batch {b} ({k + 1}/{len(sizes)}): forward {fwd * 1e3:.3f} ms, backward {bwd * 1e3:.3f} ms, "
            f"activations {act / 1e6:.2f} MB per layer")
        entries.append({"micro_batch": b, "tensor_parallel": 1, "forward_s": [fwd] * spec.layers,
                        "backward_s": [bwd] * spec.layers, "activation_bytes": [act] * spec.layers})
    opt_s = _optimizer_seconds(torch, dev, block, warmup, repeats, reduce)
    say(f"  optimiser (Adam): {opt_s * 1e12 / n_params:.3f} ps per parameter")
    doc = {"version": PROFILE_SCHEMA_VERSION, "model": spec.name, "gpu": gpu or ("cpu" if dev.type == "cpu" else name),
           "device": name, "layers": spec.layers, "hidden": spec.hidden, "seq_len": spec.seq_len, "dtype": dtype,
           "optimizer_s_per_param": opt_s / n_params,
           "measurement": {"warmup": warmup, "repeats": repeats, "statistic": statistic,
                           "tool": f"hulk profile, torch {torch.__version__}"},
           "entries": entries}
    return from_doc(doc, "<measured>")


def _optimizer_seconds(torch, dev, block, warmup, repeats, reduce=statistics.median) -> float:
    """Seconds (``reduce`` of the timed steps) of one Adam step over the block's parameters (gradients set at random)."""
    for p in block.parameters():
        p.grad = torch.randn_like(p)
    opt = torch.optim.Adam(block.parameters(), lr=1e-4)
    for _ in range(warmup):
        opt.step()
    out = []
    for _ in range(repeats):
        _sync(torch, dev)
        t0 = time.perf_counter()
        opt.step()
        _sync(torch, dev)
        out.append(time.perf_counter() - t0)
    block.zero_grad(set_to_none=True)
    return reduce(out)
