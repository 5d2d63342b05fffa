"""``hulk profile --hf-config`` (hulk/plan/hf_config.py): the block sized from a Hugging Face config
file, offline. Skipped without transformers (or PyTorch for the measurement); the message saying
how to install transformers is checked without it."""

import json
import sys

import pytest

from hulk.errors import InputError
from hulk.plan import hf_config, profile as profiles


def write(tmp_path, name, **cfg):
    d = tmp_path / name
    d.mkdir()
    (d / "config.json").write_text(json.dumps(cfg))
    return d / "config.json"


def test_missing_transformers_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "transformers", None)  # `import transformers` now raises ImportError
    with pytest.raises(InputError, match=r"pip install transformers"):
        hf_config.spec_from_hf_config(tmp_path / "config.json")


def test_sizes_from_a_config_file(tmp_path):
    pytest.importorskip("transformers", reason="Hugging Face transformers is not installed (optional)")
    # GPT-2's own field names; transformers maps them onto hidden_size, num_hidden_layers, ...
    path = write(tmp_path, "tiny-gpt2", model_type="gpt2", n_embd=96, n_layer=3, n_head=3, n_positions=24)
    spec, heads, notes = hf_config.spec_from_hf_config(path)
    assert (spec.name, spec.layers, spec.hidden, spec.seq_len, heads) == ("tiny-gpt2", 3, 96, 24, 3)
    assert spec.params == 3 * (12 * 96 * 96 + 13 * 96)
    assert notes == []
    spec, _, _ = hf_config.spec_from_hf_config(path.parent, seq_len=8, name="mine")  # a directory works too
    assert (spec.name, spec.seq_len) == ("mine", 8)
    # OPT's MLP width is its own field: a note says the measured block's differs.
    opt = write(tmp_path, "tiny-opt", model_type="opt", hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                ffn_dim=100, max_position_embeddings=32, word_embed_proj_dim=64)
    spec, heads, notes = hf_config.spec_from_hf_config(opt)
    assert (spec.hidden, spec.layers, heads, spec.seq_len) == (64, 2, 4, 32)
    assert notes and "ffn_dim is 100" in notes[0] and "4 x hidden = 256" in notes[0]


def test_bad_configs_name_the_field(tmp_path):
    pytest.importorskip("transformers", reason="Hugging Face transformers is not installed (optional)")
    t5 = write(tmp_path, "t5", model_type="t5", d_model=64, num_layers=2, num_heads=4, d_kv=16, d_ff=256)
    with pytest.raises(InputError, match="field 'max_position_embeddings' is missing"):
        hf_config.spec_from_hf_config(t5)
    spec, heads, _ = hf_config.spec_from_hf_config(t5, seq_len=16)  # relative positions: give the length
    assert (spec.hidden, spec.layers, heads) == (64, 2, 4)
    odd = write(tmp_path, "odd", model_type="gpt2", n_embd=100, n_layer=2, n_head=3, n_positions=8)
    with pytest.raises(InputError, match="'hidden_size' and 'num_attention_heads'"):
        hf_config.spec_from_hf_config(odd)
    zero = write(tmp_path, "zero", model_type="gpt2", n_embd=64, n_layer=0, n_head=1, n_positions=8)
    with pytest.raises(InputError, match="field 'num_hidden_layers' must be a positive integer"):
        hf_config.spec_from_hf_config(zero)
    with pytest.raises(InputError, match="could not read it"):
        hf_config.spec_from_hf_config(tmp_path / "nowhere" / "config.json")


def test_cli_profile_from_a_config_file(tmp_path, capsys):
    pytest.importorskip("transformers", reason="Hugging Face transformers is not installed (optional)")
    pytest.importorskip("torch", reason="PyTorch is not installed (optional extra hulk[torch])")
    from hulk.cli import main
    path = write(tmp_path, "tiny-gpt2", model_type="gpt2", n_embd=96, n_layer=3, n_head=2, n_positions=12)
    out = tmp_path / "p.json"
    assert main(["profile", "--hf-config", str(path), "--out", str(out), "--micro-batch", "1", "--warmup", "0",
                 "--repeats", "1"]) == 0
    text = capsys.readouterr().out
    assert "hidden 96, 2 heads, seq 12" in text
    p = profiles.load_profile(out)
    assert (p.model, p.layers, p.hidden, p.seq_len) == ("tiny-gpt2", 3, 96, 12)
    assert main(["profile", "--model", "gpt2-xl", "--seq-len", "8", "--out", str(tmp_path / "q.json")]) != 0
    assert "--seq-len applies only with --hf-config" in capsys.readouterr().err
    assert main(["profile", "--out", str(tmp_path / "q.json")]) != 0
    assert "give --model (a catalogue or --models name) or --hf-config" in capsys.readouterr().err
    assert not (tmp_path / "q.json").exists()
