"""The profiled block sized from a Hugging Face model config (``hulk profile --hf-config``).

``transformers.AutoConfig.from_pretrained`` reads the config: a ``config.json`` file, a model
directory, or a hub name (which needs the network, or the name in the local cache). Its standard
attributes give the block's size (transformers maps each architecture's own names onto them, e.g.
GPT-2's ``n_embd``, ``n_layer``, ``n_head``, ``n_positions``):

* ``num_hidden_layers`` -> layers, ``hidden_size`` -> hidden, ``num_attention_heads`` -> heads;
* ``max_position_embeddings`` -> seq_len, unless a sequence length is given (models with
  relative positions, T5 for one, have no such field and need one).

The block measured is still :mod:`hulk.plan.torch_block`'s GPT block (MLP 4 h): a config whose MLP
is another width (``intermediate_size``, ``n_inner``, ``ffn_dim``, ``d_ff``) gets a note saying the
measured MLP differs. ``params`` is the blocks' parameters (12 h^2 + 13 h each), embeddings excluded.
``transformers`` is optional: without it :func:`spec_from_hf_config` raises InputError saying how to
install it. Errors name the config and the field.
"""

from __future__ import annotations

import os

from ..errors import InputError
from .models import ModelSpec
from .torch_block import block_params, heads_of

__all__ = ["require_transformers", "spec_from_hf_config"]

_FIELDS = (("layers", "num_hidden_layers"), ("hidden", "hidden_size"), ("heads", "num_attention_heads"))
_MLP_FIELDS = ("intermediate_size", "n_inner", "ffn_dim", "d_ff")


def require_transformers():
    try:
        import transformers
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise InputError("--hf-config needs Hugging Face transformers: `pip install transformers`") from e
    return transformers


def _positive_int(source, fld, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"hf config {source!r}: field {fld!r} must be a positive integer, got {value!r}")
    return value


def _default_name(source: str, cfg) -> str:
    """A model directory's name, a config file's name (its directory's for ``config.json``), else the hub name."""
    if os.path.exists(source):
        path = os.path.abspath(source)
        if os.path.isdir(path):
            return os.path.basename(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        return os.path.basename(os.path.dirname(path)) if stem == "config" else stem
    return getattr(cfg, "_name_or_path", "") or source


def spec_from_hf_config(name_or_path, *, seq_len: int | None = None, name: str | None = None) -> tuple:
    """``(ModelSpec, heads, notes)`` of the model a Hugging Face config describes (module docstring).
    ``name``: the spec's name (default: the model directory's or config file's name, else the hub name)."""
    transformers = require_transformers()
    source = os.fsdecode(name_or_path)
    try:
        cfg = transformers.AutoConfig.from_pretrained(source)
    except (OSError, ValueError, KeyError) as e:
        raise InputError(f"hf config {source!r}: transformers could not read it: {e}") from None
    size = {}
    for key, fld in _FIELDS:
        value = getattr(cfg, fld, None)
        if value is None:
            raise InputError(f"hf config {source!r}: field {fld!r} is missing (model_type "
                             f"{getattr(cfg, 'model_type', None)!r})")
        size[key] = _positive_int(source, fld, value)
    if seq_len is None:
        seq_len = getattr(cfg, "max_position_embeddings", None)
        if seq_len is None:
            raise InputError(f"hf config {source!r}: field 'max_position_embeddings' is missing (relative "
                             f"positions?); give the sequence length (--seq-len)")
        seq_len = _positive_int(source, "max_position_embeddings", seq_len)
    else:
        seq_len = _positive_int(source, "seq_len", seq_len)
    try:
        heads = heads_of(size["hidden"], size["heads"])
    except InputError as e:
        raise InputError(f"hf config {source!r}: fields 'hidden_size' and 'num_attention_heads': {e}") from None
    notes = []
    for fld in _MLP_FIELDS:
        width = getattr(cfg, fld, None)
        if isinstance(width, int) and not isinstance(width, bool) and width != 4 * size["hidden"]:
            notes.append(f"the config's {fld} is {width}; the measured block's MLP is 4 x hidden = "
                         f"{4 * size['hidden']}")
            break
    if name is None:
        name = _default_name(source, cfg)
    spec = ModelSpec(name=name, layers=size["layers"], hidden=size["hidden"], seq_len=seq_len,
                     params=float(size["layers"] * block_params(size["hidden"])), global_batch=1, micro_batches=1,
                     recompute=False, source=f"Hugging Face config {source}")
    return spec, heads, notes
