"""The transformer block shared by `hulk profile` and `hulk.launch` (hulk/plan/torch_block.py)."""

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional extra hulk[torch])")

from hulk.errors import InputError
from hulk.plan import torch_block


def test_block_params_and_shape():
    block = torch_block.TransformerBlock(48, 3)
    assert sum(p.numel() for p in block.parameters()) == torch_block.block_params(48) == 12 * 48 * 48 + 13 * 48
    x = torch.randn(2, 5, 48)
    assert block(x).shape == (2, 5, 48)


def test_block_is_causal():
    """Changing a later token leaves earlier outputs unchanged (the attention is causal)."""
    torch.manual_seed(3)
    block = torch_block.TransformerBlock(32, 4).double()
    x = torch.randn(1, 6, 32, dtype=torch.float64)
    y = x.clone()
    y[0, 4:] = torch.randn(2, 32, dtype=torch.float64)
    a, b = block(x), block(y)
    assert torch.allclose(a[0, :4], b[0, :4])
    assert not torch.allclose(a[0, 4:], b[0, 4:])


def test_make_blocks_same_weights_per_layer():
    """Blocks [2, 4) built alone equal blocks 2 and 3 of a build of all layers."""
    class Spec:
        hidden = 32
    all_blocks = torch_block.make_blocks(Spec, 4, seed=7)
    part = torch_block.make_blocks(Spec, 2, first=2, seed=7)
    for a, b in zip(all_blocks[2:], part):
        for pa, pb in zip(a.parameters(), b.parameters()):
            assert torch.equal(pa, pb)
    assert not torch.equal(all_blocks[0].qkv.weight, all_blocks[1].qkv.weight)


def test_heads_must_divide_hidden():
    with pytest.raises(InputError, match="divisible"):
        torch_block.TransformerBlock(30, 4)
    assert torch_block.heads_of(1600) == 25
