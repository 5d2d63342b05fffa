"""hulk.plan.models: the catalogue, derived quantities, lookup, user models and errors."""

from __future__ import annotations

import json

import pytest

from hulk.plan import cluster_spec, models


def test_catalogue_holds_the_paper_jobs_and_llama2_with_sources():
    c = models.catalogue()
    assert models.PAPER_JOBS_4 == ["OPT-175B", "T5-11B", "GPT-2 1.5B", "BERT-large"]
    assert models.PAPER_JOBS_6 == models.PAPER_JOBS_4 + ["RoBERTa-large", "XLNet-large"]
    assert set(models.PAPER_JOBS_6) | {"Llama-2-7B", "Llama-2-13B", "Llama-2-70B"} == set(c)
    for name in c:
        m = c[name]
        assert m.name == name
        assert "20" in m.source and len(m.source) > 40  # cites a paper with its year
        assert m.iterations == 1000 and m.bytes_per_param == 16 and m.recompute is True
        assert m.global_batch % m.micro_batches == 0


@pytest.mark.parametrize("name,layers,hidden,seq,params,batch", [
    ("OPT-175B", 96, 12288, 2048, 175e9, 256),  # the paper's 1024 reduced: see models.json
    ("T5-11B", 48, 1024, 512, 11e9, 2048),
    ("GPT-2 1.5B", 48, 1600, 1024, 1.542e9, 512),
    ("BERT-large", 24, 1024, 512, 340e6, 256),
    ("RoBERTa-large", 24, 1024, 512, 355e6, 8192),
    ("XLNet-large", 24, 1024, 512, 340e6, 8192),
    ("Llama-2-7B", 32, 4096, 4096, 6.7e9, 1024),  # Llama 2's 4M-token batch of 4096-token sequences
    ("Llama-2-13B", 40, 5120, 4096, 13.0e9, 1024),
    ("Llama-2-70B", 80, 8192, 4096, 70e9, 1024),
])
def test_catalogue_values(name, layers, hidden, seq, params, batch):
    m = models.get(name)
    assert (m.layers, m.hidden, m.seq_len, m.params, m.global_batch) == (layers, hidden, seq, params, batch)
    assert m.flops_per_token == 6 * params + 12 * layers * hidden * seq
    if not name.startswith("Llama"):
        assert m.activation_bytes_per_token == 34 * hidden


# The released configurations' MLP width, heads and key-value heads (sources in models.json).
@pytest.mark.parametrize("name,ffn,heads,kv_heads", [
    ("Llama-2-7B", 11008, 32, 32), ("Llama-2-13B", 13824, 40, 40), ("Llama-2-70B", 28672, 64, 8)])
def test_llama2_activations_are_counted_for_swiglu_and_grouped_query_attention(name, ffn, heads, kv_heads):
    m = models.get(name)
    assert m.activation_bytes_per_token == models.gated_mlp_activation_bytes_per_token(m.hidden, ffn, heads, kv_heads)
    assert str(ffn) in m.source and "num_key_value_heads" in m.source
    assert 37 * m.hidden < m.activation_bytes_per_token < 41 * m.hidden  # a little over GPT's 34 h


def test_gated_mlp_activation_count_by_hand():
    # Llama-2-7B, tensor by tensor in 16-bit (bytes per token): attention 2h input + 2h Q + 2h K
    # + 2h V + 2h output; MLP 2h input + 4 * 2f (gate, up, SiLU, product); RMSNorms 2 * 2h.
    h, f = 4096, 11008
    by_hand = (2 * h + 2 * h + 2 * h + 2 * h + 2 * h) + (2 * h + 4 * 2 * f) + 2 * 2 * h
    assert models.gated_mlp_activation_bytes_per_token(h, f, 32, 32) == by_hand == 153600
    # grouped-query attention: K and V shrink with the key-value heads, nothing else does
    assert models.gated_mlp_activation_bytes_per_token(h, f, 32, 8) == by_hand - 2 * (2 * h - 2 * h // 4)


@pytest.mark.parametrize("args,field", [
    ((0, 11008, 32, 32), "hidden"), ((4096, 1.5, 32, 32), "ffn_hidden"), ((4096, 11008, -1, 1), "heads"),
    ((4096, 11008, 32, True), "kv_heads"), ((4096, 11008, 32, 5), "kv_heads=5"),
    ((4100, 11008, 32, 8), "heads=32 must divide hidden=4100")])
def test_gated_mlp_activation_count_names_a_bad_argument(args, field):
    with pytest.raises(models.InputError, match=field):
        models.gated_mlp_activation_bytes_per_token(*args)


def test_opt_memory_and_helpers():
    m = models.get("OPT-175B")
    assert m.state_bytes() == pytest.approx(2.8e12)            # 175e9 * 16 bytes
    assert m.state_bytes(48) == pytest.approx(1.4e12)
    assert m.params_per_layer() == pytest.approx(175e9 / 96)
    assert m.tokens_per_iteration == 256 * 2048                  # 0.5M tokens (assumed; OPT paper: 2M)
    seqs = 3.0
    assert m.memory_bytes_whole(seqs) == pytest.approx(2.8e12 + seqs * 2048 * 96 * 34 * 12288)
    assert m.memory_bytes_whole(0) == pytest.approx(2.8e12)
    assert m.boundary_bytes(2) == 2 * 2048 * 12288 * 2
    assert m.flops_per_token == pytest.approx(1.0789e12, rel=1e-4)
    core = m.core_dict()
    assert list(core) == ["name", "layers", "hidden", "seq_len", "params", "flops_per_token", "bytes_per_param",
                          "activation_bytes_per_token", "global_batch", "micro_batches", "iterations", "recompute"]
    with pytest.raises(ValueError, match="sequences must be finite and >= 0"):
        m.memory_bytes_whole(-1)


def test_hulk47_memory_vs_paper_jobs(capsys):
    spec = cluster_spec.hulk47_spec()
    total = spec.total_memory_gb
    assert total == pytest.approx(10124.0)
    lines = [f"hulk47: {len(spec.machines)} machines, {total:g} GB GPU memory, "
             f"{spec.total_tflops:.0f} TFLOP/s sustained (rule b)"]
    need_state = 0.0
    for name in models.PAPER_JOBS_4:
        m = models.get(name)
        state = m.state_bytes() / 1e9
        per_seq = m.activation_bytes(1) / 1e9
        mb = m.memory_bytes_whole(m.micro_batch_sequences) / 1e9
        full = m.memory_bytes_whole(m.global_batch) / 1e9
        need_state += state
        lines.append(f"{name:>11}: state {state:9.2f} GB, activations {per_seq:7.3f} GB/sequence, "
                     f"state + 1 micro-batch ({m.micro_batch_sequences:g} seq) {mb:9.1f} GB, "
                     f"state + global batch ({m.global_batch} seq) {full:9.1f} GB")
    lines.append(f"4 jobs' optimiser state: {need_state:.1f} GB = {need_state / total:.1%} of hulk47")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert need_state < total                 # the states fit together ...
    assert models.get("OPT-175B").state_bytes() / 1e9 > 0.25 * total  # ... but OPT-175B takes a big share


def test_get_is_forgiving_and_helpful():
    assert models.get("gpt-2 xl").name == "GPT-2 1.5B"
    assert models.get("GPT2 1.5b").name == "GPT-2 1.5B"
    assert models.get("opt175b").name == "OPT-175B"
    assert models.get("roberta_large").name == "RoBERTa-large"
    with pytest.raises(ValueError, match=r"unknown model 'GPT-5'; known models: .*BERT-large.*OPT-175B"):
        models.get("GPT-5")


def test_from_dict_derives_and_defaults():
    m = models.from_dict({"name": "tiny", "layers": 4, "hidden": 256, "seq_len": 128, "params": 5e6,
                          "global_batch": 64.0})
    assert m.global_batch == 64 and isinstance(m.global_batch, int)
    assert m.flops_per_token == 6 * 5e6 + 12 * 4 * 256 * 128
    assert m.activation_bytes_per_token == 34 * 256
    assert (m.micro_batches, m.iterations, m.bytes_per_param) == (8, 1000, 16)
    m2 = models.from_dict({"name": "tiny2", "layers": 4, "hidden": 256, "seq_len": 128, "params": 5e6,
                           "global_batch": 64, "flops_per_token": 1e8, "activation_bytes_per_token": 10.0,
                           "micro_batches": 1, "iterations": 5})
    assert (m2.flops_per_token, m2.activation_bytes_per_token, m2.micro_batches, m2.iterations) == (1e8, 10.0, 1, 5)


@pytest.mark.parametrize("change,msg", [
    ({"layers": 0}, "model 'x': layers must be a positive integer, got 0"),
    ({"layers": 2.5}, "layers must be a positive integer, got 2.5"),
    ({"hidden": True}, "hidden must be a positive integer, got True"),
    ({"seq_len": -1}, "seq_len must be a positive integer"),
    ({"params": float("nan")}, "params must be finite and > 0, got nan"),
    ({"params": -1.0}, "params must be finite and > 0"),
    ({"flops_per_token": 0.0}, "flops_per_token must be finite and > 0, got 0.0"),
    ({"bytes_per_param": float("inf")}, "bytes_per_param must be finite and > 0, got inf"),
    ({"activation_bytes_per_token": -1.0}, "activation_bytes_per_token must be finite and > 0, got -1.0"),
    ({"activation_bytes_per_token": 0.0}, "activation_bytes_per_token must be finite and > 0"),  # as model_spec.cpp
    ({"micro_batches": 100}, r"micro_batches \(100\) must not exceed global_batch \(64 sequences\)"),
    ({"iterations": 0}, "iterations must be a positive integer"),
    ({"name": ""}, "model name must be a non-empty string"),
    ({"typo": 1}, r"unknown keys \['typo'\]"),
    ({"global_batch": None}, r"missing required keys \['global_batch'\]"),
])
def test_from_dict_errors(change, msg):
    d = {"name": "x", "layers": 4, "hidden": 256, "seq_len": 128, "params": 5e6, "global_batch": 64}
    d.update(change)
    with pytest.raises(ValueError, match=msg):
        models.from_dict(d)


def test_load_models_and_lookup(tmp_path):
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"version": "hulk-models/1", "models": [
        {"name": "Llama-7B", "aliases": ["llama7b"], "layers": 32, "hidden": 4096, "seq_len": 2048,
         "params": 6.7e9, "global_batch": 2048, "source": "assumed for the test"}]}))
    user = models.load_models(p)
    assert list(user) == ["Llama-7B"]
    assert models.get("LLAMA 7B", user).params == 6.7e9
    assert models.get("BERT-large", user).name == "BERT-large"  # the catalogue is still searched
    p.write_text(json.dumps([{"name": "a", "layers": 1, "hidden": 8, "seq_len": 8, "params": 1e3,
                              "global_batch": 8}]))
    assert list(models.load_models(p)) == ["a"]
    for doc, msg in [
        ({"version": "x", "models": []}, "version must be 'hulk-models/1'"),
        ({"version": "hulk-models/1", "models": []}, "non-empty list"),
        ([{"name": "a", "layers": 1, "hidden": 8, "seq_len": 8, "params": 1e3, "global_batch": 8}] * 2,
         "duplicate model name 'a'"),
        ([{"name": "a", "layers": 1, "hidden": 8, "seq_len": 8, "params": 1e3, "global_batch": 8},
          {"name": "A", "layers": 1, "hidden": 8, "seq_len": 8, "params": 1e3, "global_batch": 8}],
         "name 'A' of model 'A' clashes with model 'a'"),
        ([{"name": "b", "layers": -1, "hidden": 8, "seq_len": 8, "params": 1e3, "global_batch": 8}],
         "model 0: model 'b': layers must be a positive integer"),
    ]:
        p.write_text(json.dumps(doc))
        with pytest.raises(ValueError, match=msg):
            models.load_models(p)


def test_catalogue_returns_fresh_objects():
    a = models.catalogue()
    a["OPT-175B"].iterations = 1
    assert models.catalogue()["OPT-175B"].iterations == 1000


def test_errors_in_a_models_file_name_the_file_and_the_model(tmp_path):
    from hulk.errors import FileFormatError
    path = tmp_path / "mine.json"
    path.write_text('{"version": "hulk-models/1", "models": [{"name": "tiny", "layers": -2}]}')
    with pytest.raises(FileFormatError, match=f"^{path}: models: model 0: "):
        models.load_models(path)
    path.write_text('{"version": "hulk-models/1", "models": [], "models": []}')  # strict JSON: no repeated key
    with pytest.raises(ValueError, match="mine.json"):
        models.load_models(path)
