"""The transformer block that ``hulk profile`` measures and ``hulk.launch`` trains: one definition.

A pre-LayerNorm GPT block (Radford et al. 2019, GPT-2), sized from a catalogue
:class:`hulk.plan.ModelSpec` (``hidden``, ``heads``, ``seq_len``)::

    x = x + proj(attention(ln_1(x)))        # causal multi-head self-attention, `heads` heads
    x = x + fc_2(gelu(fc_1(ln_2(x))))       # MLP, hidden -> 4 hidden -> hidden

Input and output: ``[batch, seq_len, hidden]``. Its parameters are ``12 h^2 + 13 h``, its forward
FLOPs per token ``24 h^2 + 4 s h`` (the ``6P + 12 L h s`` training FLOPs of
:mod:`hulk.plan.models`, divided by 3 for the forward pass and by the layers), so a measured
block and the FLOP model count the same work.

PyTorch is an optional dependency (``pip install hulk[torch]``): this module imports it only
when a block is built, and :func:`require_torch` raises :class:`hulk.errors.InputError` saying
how to install it when it is missing.
"""

from __future__ import annotations

from .._checks import check_int
from ..errors import InputError

__all__ = ["DEFAULT_HEAD_DIM", "TransformerBlock", "block_forward_flops_per_token", "block_params", "heads_of",
           "make_block", "make_blocks", "require_torch"]

DEFAULT_HEAD_DIM = 64  # GPT-2, BERT, OPT and T5 all use 64-wide heads; used when a spec names no heads


def require_torch():
    """The ``torch`` module, or InputError saying how to get it."""
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise InputError("PyTorch is needed for this (hulk profile, hulk.launch): "
                         "install it with `pip install hulk[torch]`") from e
    return torch


def heads_of(hidden: int, heads: int | None = None) -> int:
    """Attention heads of a block: ``heads`` when given, else hidden / 64 (at least 1)."""
    check_int(hidden, "hidden", 1)
    if heads is None:
        heads = max(1, hidden // DEFAULT_HEAD_DIM)
    check_int(heads, "heads", 1)
    if hidden % heads:
        raise InputError(f"hidden ({hidden}) must be divisible by heads ({heads})")
    return heads


def _block_class():
    torch = require_torch()
    nn, F = torch.nn, torch.nn.functional

    class _TransformerBlock(nn.Module):
        """Pre-LN GPT block; ``forward(x)``: x [batch, seq, hidden] -> [batch, seq, hidden]."""

        def __init__(self, hidden: int, heads: int):
            super().__init__()
            self.hidden, self.heads = hidden, heads
            self.ln_1 = nn.LayerNorm(hidden)
            self.qkv = nn.Linear(hidden, 3 * hidden)
            self.proj = nn.Linear(hidden, hidden)
            self.ln_2 = nn.LayerNorm(hidden)
            self.fc_1 = nn.Linear(hidden, 4 * hidden)
            self.fc_2 = nn.Linear(4 * hidden, hidden)

        def forward(self, x):  # x: [batch, seq, hidden]
            b, s, h = x.shape
            q, k, v = self.qkv(self.ln_1(x)).split(h, dim=-1)
            # [batch, heads, seq, head_dim]
            q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, s, h))
            return x + self.fc_2(F.gelu(self.fc_1(self.ln_2(x))))

    return _TransformerBlock


_CLASS = None


def TransformerBlock(hidden: int, heads: int | None = None):  # noqa: N802 - reads as the class it builds
    """One block (a ``torch.nn.Module``) of width ``hidden`` with ``heads`` heads (default hidden / 64)."""
    global _CLASS
    heads = heads_of(hidden, heads)
    if _CLASS is None:
        _CLASS = _block_class()
    return _CLASS(int(hidden), heads)


def make_block(spec, *, seed: int = 0, dtype=None, device=None, heads: int | None = None):
    """One block sized from a :class:`hulk.plan.ModelSpec` (its ``hidden``; ``heads`` when given,
    else the spec's if it has them, else hidden / 64), initialised from ``seed``."""
    return make_blocks(spec, 1, seed=seed, dtype=dtype, device=device, heads=heads)[0]


def make_blocks(spec, count: int, *, first: int = 0, seed: int = 0, dtype=None, device=None,
                heads: int | None = None) -> list:
    """Blocks ``first .. first + count - 1`` of ``spec``: block ``i`` is initialised from
    ``(seed * 1_000_003 + i) mod 2^63``, so a pipeline stage that builds layers [a, b) gets the same weights
    as a single process building all layers."""
    torch = require_torch()
    check_int(count, "count", 1)
    check_int(first, "first", 0)
    out = []
    for i in range(first, first + count):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed((seed * 1_000_003 + i) % 2**63)
            block = TransformerBlock(spec.hidden, heads if heads is not None else getattr(spec, "heads", None))
        out.append(block.to(device=device, dtype=dtype))
    return out


def block_forward_flops_per_token(hidden: int, seq_len: int) -> float:
    """Forward FLOPs per token of one block: 24 h^2 (the four h x h and two h x 4h matmuls) plus
    4 s h (QK^T and attention x V); backward is twice that."""
    return 24.0 * hidden * hidden + 4.0 * seq_len * hidden


def block_params(hidden: int) -> int:
    """Parameters of one block: 12 h^2 + 13 h (weights and biases, two LayerNorms)."""
    return 12 * hidden * hidden + 13 * hidden

