"""``hulk classify`` (hulk.cli.classify): the paper's classifier on its cluster and Table 2 labels."""

import json

import numpy as np
import pytest

import hulk
from hulk import cli


def test_hulk47_fits_table2_labels(hulk47_graph):
    _, g, labels, classes = hulk47_graph
    # The settings of a plain `hulk classify`, read from the CLI itself, capped at 200 epochs.
    d = cli.build_parser().parse_args(["classify"])
    assert (d.hidden, d.lr, d.seed, d.pooling, d.dropout) == ([64, 64], 0.01, 0, "sum", 0.0)
    epochs = min(d.epochs, 200)
    model = hulk.GNN(num_classes=len(classes), hidden=d.hidden, pooling=d.pooling, dropout=d.dropout, seed=d.seed)
    history = model.fit(g, labels, epochs=epochs, lr=d.lr, weight_decay=d.weight_decay)
    acc = np.array([s["train_acc"] for s in history])
    labelled = labels >= 0
    final = float((model.predict(g)[labelled] == labels[labelled]).mean())

    def first(threshold):
        hit = np.flatnonzero(acc >= threshold)
        return int(hit[0]) + 1 if len(hit) else None

    print(f"\nhulk47 ({int(labelled.sum())} labelled machines): first epoch with train accuracy >= 0.95: "
          f"{first(0.95)}, >= 0.99 (= 1.0 here): {first(0.99)}; accuracy after 100 epochs {acc[99]:.3f}, "
          f"after {epochs} epochs {final:.3f}")
    assert final == pytest.approx(acc[-1])
    assert first(0.95) is not None and first(0.95) <= 200
    # Accuracy still swings by a machine or two near epoch 200. With the independent random
    # streams of issue 20, seed 0 reached 39 of 39 at epoch 198 and ended at 37 of 39; over
    # seeds 0-11 both the old and the new streams end between 34 and 39 of 39 (old: 7 of 12
    # seeds at >= 38, new: 8 of 12), so the old 38-of-39 floor was seed 0's luck. Reaching 39
    # of 39 was luck too: with the SpMM's AVX2/AVX-512 clones (FMA rounding) seed 0 peaks at
    # 38 of 39. The test asks for 38 of 39 at some epoch.
    assert first(38 / 39) is not None
    assert final >= 0.94


def _strict_json(text):
    """json.loads that refuses NaN / Infinity, which RFC 8259 JSON (jq, JavaScript, ...) rejects."""
    def refuse(token):
        raise ValueError(f"not valid JSON: {token}")
    return json.loads(text, parse_constant=refuse)


def test_classify_table(capsys):
    assert cli.main(["classify", "--epochs", "5"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("hulk47: 47 machines, 613 links")
    assert "39 machines labelled" in lines[0]
    # per-epoch table: header + 5 rows
    assert lines[1].split()[0] == "epoch"
    assert [ln.split()[0] for ln in lines[2:7]] == ["1", "2", "3", "4", "5"]
    # machine table: header, then one row per machine until the blank line
    start = next(i for i, ln in enumerate(lines) if ln.split()[:2] == ["machine", "region"])
    end = lines.index("", start)
    rows = [ln.split() for ln in lines[start + 1:end]]
    assert len(rows) == 47
    assert [int(r[0]) for r in rows] == list(range(47))
    assert rows[0][1] == "Beijing" and rows[46][1] == "Brasilia"
    names = set(hulk.datasets.HULK47_CLASSES)
    assert all(any(name in " ".join(r) for name in names) for r in rows)
    assert "accuracy on the 39 labelled machines" in out and "after 5 epochs" in out


def test_classify_json(capsys):
    assert cli.main(["classify", "--epochs", "5", "--json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert data["classes"] == list(hulk.datasets.HULK47_CLASSES)
    assert len(data["history"]) == 5
    assert [h["epoch"] for h in data["history"]] == [1, 2, 3, 4, 5]
    assert len(data["machines"]) == 47
    m0 = data["machines"][0]
    assert set(m0) == {"machine", "region", "capability", "memory_gb", "label", "predicted", "probability"}
    assert m0["machine"] == 0 and m0["label"] == "OPT-175B"
    assert data["machines"][46]["label"] is None
    assert all(m["predicted"] in data["classes"] for m in data["machines"])
    assert all(0.0 < m["probability"] <= 1.0 for m in data["machines"])
    assert 0.0 <= data["train_accuracy"] <= 1.0


def test_classify_json_is_strict_json(capsys):
    # Without a validation set the history holds NaN val_loss/val_acc; json.dump writes them as
    # the bare token NaN, which is not JSON (jq, JavaScript's JSON.parse and most other parsers
    # reject it). Missing values should be null.
    assert cli.main(["classify", "--epochs", "2", "--json"]) == 0
    data = _strict_json(capsys.readouterr().out)
    assert len(data["history"]) == 2


def test_classify_save_writes_loadable_model(tmp_path, capsys, hulk47_graph):
    path = tmp_path / "hulk47.model"
    assert cli.main(["classify", "--epochs", "3", "--hidden", "16,8", "--seed", "4", "--save", str(path),
                     "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    model = hulk.GNN.load(path)
    assert model.config["hidden"] == [16, 8] and model.config["seed"] == 4
    _, g, _, classes = hulk47_graph
    pred = model.predict(g)
    assert [classes[p] for p in pred] == [m["predicted"] for m in data["machines"]]
    np.testing.assert_allclose(model.predict_proba(g).max(axis=1), [m["probability"] for m in data["machines"]],
                               rtol=1e-6)
    # table mode reports where the weights went
    assert cli.main(["classify", "--epochs", "1", "--save", str(tmp_path / "b.model")]) == 0
    assert "weights saved to" in capsys.readouterr().out
    assert (tmp_path / "b.model").is_file()


def test_classify_options_change_the_model(capsys):
    cli.main(["classify", "--epochs", "3", "--json", "--pooling", "mean", "--lr", "0.05", "--dropout", "0.2",
              "--weight-decay", "0"])
    a = json.loads(capsys.readouterr().out)
    cli.main(["classify", "--epochs", "3", "--json"])
    b = json.loads(capsys.readouterr().out)
    assert a["history"][0]["train_loss"] != b["history"][0]["train_loss"]
    # same options, same result (deterministic)
    cli.main(["classify", "--epochs", "3", "--json"])
    c = json.loads(capsys.readouterr().out)
    assert [h["train_loss"] for h in b["history"]] == [h["train_loss"] for h in c["history"]]


def test_classify_defaults_fit_the_labelled_machines(capsys):
    assert cli.main(["classify", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["history"]) == cli.build_parser().parse_args(["classify"]).epochs
    assert data["train_accuracy"] >= 0.94  # 37 of 39; see test_hulk47_fits_table2_labels


def test_classify_save_to_unwritable_path(tmp_path, capsys):
    assert cli.main(["classify", "--epochs", "1", "--save", str(tmp_path / "no" / "such" / "dir" / "m")]) == 2
    assert "hulk classify: error:" in capsys.readouterr().err
