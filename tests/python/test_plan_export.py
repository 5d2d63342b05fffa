"""Plan export: launch bundles (hulk.plan.export) and their reader (hulk.plan.bundle); no torch."""

from __future__ import annotations

import json
import shlex

import pytest

from helpers import one_line_error
from hulk.errors import FileFormatError, InputError
from hulk.plan import bundle, cluster_spec, export
from hulk.plan.models import ModelSpec
from hulk.plan.planners import plan


def small_cluster(n=4, addresses=True, latency_ms=0.5):
    machines = [dict(name=f"m{i}", region="A", gpu="GeForce RTX 3090", memory_gb=24) for i in range(n)]
    if addresses:
        for i, m in enumerate(machines):
            m["address"] = f"10.0.0.{i + 1}"
    links = [dict(a=a, b=b, latency_ms=latency_ms, bandwidth_gbps=10.0) for a in range(n) for b in range(a + 1, n)]
    return cluster_spec.from_json(dict(version="hulk-cluster/1", machines=machines, links=links))


def two_by_two_model():
    """A model whose state needs two 24 GB machines and whose batch is large enough that the
    planner replicates the 2-stage pipeline on 4 fast-linked machines."""
    return ModelSpec(name="tiny lm", layers=8, hidden=256, seq_len=128, params=2e9, global_batch=1024, micro_batches=4)


def test_bundle_matches_the_plan_two_replicas_two_stages(tmp_path):
    p = plan(small_cluster(), [two_by_two_model()], "search", max_iterations=300)
    job = p.jobs[0]
    assert len(job["replicas"]) == 2 and len(job["replicas"][0][0]) == 2, job["replicas"]  # the layout under test
    index = p.export(tmp_path / "out")
    assert index == [dict(job="tiny lm", bundle="tiny_lm/job.json", reason=None)]
    doc = bundle.read_bundle(tmp_path / "out" / "tiny_lm" / "job.json")
    S, D = 2, 2
    assert doc["nnodes"] == 4 and doc["micro_batches"] == 4 and doc["micro_batch_size"] == 1024 // (D * 4)
    for d, (machines, bounds) in enumerate(job["replicas"]):
        for s, machine in enumerate(machines):
            r = doc["ranks"][d * S + s]
            assert (r["machine"], r["replica"], r["stage"]) == (machine, d, s)
            assert r["name"] == f"m{machine}" and r["address"] == f"10.0.0.{machine + 1}"
            assert doc["stages"][s]["layers"] == [bounds[s], bounds[s + 1]]
    assert [st["ranks"] for st in doc["stages"]] == [[0, 2], [1, 3]]  # replica groups
    assert doc["pipelines"] == [[0, 1], [2, 3]]
    assert doc["model"] == dict(name="tiny lm", layers=8, hidden=256, seq_len=128, heads=4, params=2e9,
                                global_batch=1024, recompute=True)
    assert doc["predicted"]["iteration_s"] == pytest.approx(job["iteration_s"])
    first = doc["ranks"][0]["address"]
    assert doc["rendezvous"] == dict(address=first, port=29500, rank=0)
    for r, c in enumerate(doc["commands"]):
        argv = shlex.split(c["command"])
        assert argv[0] == "torchrun" and argv[-3:] == ["-m", "hulk.launch", "job.json"]
        assert {"--nnodes=4", f"--node-rank={r}", "--nproc-per-node=1", f"--master-addr={first}",
                "--master-port=29500"} <= set(argv)
    readme = (tmp_path / "out" / "tiny_lm" / "README.md").read_text()
    assert "2 replica(s) x 2 pipeline stage(s)" in readme and doc["commands"][3]["command"] in readme
    top = json.loads((tmp_path / "out" / "plan.json").read_text())
    assert top["jobs"] == index and top["planner"] == "search"


def test_pipeline_of_system_b_and_replicas_of_system_a(tmp_path):
    m = ModelSpec(name="small", layers=8, hidden=256, seq_len=128, params=5e7, global_batch=64, micro_batches=4)
    b = plan(small_cluster(), [m], "b")
    b.export(tmp_path / "b")
    doc = bundle.read_bundle(tmp_path / "b" / "small" / "job.json")
    assert [st["layers"] for st in doc["stages"]] == [[0, 2], [2, 4], [4, 6], [6, 8]]
    assert doc["pipelines"] == [[0, 1, 2, 3]] and doc["micro_batch_size"] == 16
    a = plan(small_cluster(), [m], "a")
    a.export(tmp_path / "a")
    doc = bundle.read_bundle(tmp_path / "a" / "small" / "job.json")
    assert doc["stages"] == [dict(stage=0, layers=[0, 8], ranks=[0, 1, 2, 3])]
    assert doc["micro_batch_size"] == 4  # 64 sequences / (4 replicas x 4 micro-batches)


def test_placeholder_and_hosts_file(tmp_path):
    m = ModelSpec(name="small", layers=8, hidden=256, seq_len=128, params=5e7, global_batch=62, micro_batches=4)
    p = plan(small_cluster(addresses=False), [m], "b")
    p.export(tmp_path / "plain")
    doc = bundle.read_bundle(tmp_path / "plain" / "small" / "job.json")
    assert doc["rendezvous"]["address"] is None
    assert all(f"--master-addr={bundle.ADDRESS_PLACEHOLDER}" in c["command"] for c in doc["commands"])
    assert any(bundle.ADDRESS_PLACEHOLDER in n for n in doc["notes"])
    assert any("does not divide" in n for n in doc["notes"]) and doc["micro_batch_size"] == 15
    p.export(tmp_path / "named", hosts={"m0": "node0.example.org", "m3": "fe80::1"}, port=2345)
    doc = bundle.read_bundle(tmp_path / "named" / "small" / "job.json")
    assert [r["address"] for r in doc["ranks"]] == ["node0.example.org", None, None, "fe80::1"]
    assert "--master-addr=node0.example.org" in doc["commands"][2]["command"]
    assert "--master-port=2345" in doc["commands"][2]["command"]


def test_bad_input_names_the_path_and_the_field(tmp_path):
    m = ModelSpec(name="small", layers=8, hidden=256, seq_len=128, params=5e7, global_batch=64, micro_batches=4)
    p = plan(small_cluster(), [m], "b")
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("x")
    with pytest.raises(InputError, match="full.*exists and is not empty"):
        p.export(full)
    assert sorted(x.name for x in full.iterdir()) == ["keep.txt"]
    hosts = tmp_path / "hosts.json"
    hosts.write_text(json.dumps({"m9": "10.1.1.1"}))
    with pytest.raises(FileFormatError, match="hosts.json: m9: is not a machine") as e:
        export.export_plan(p, tmp_path / "x", hosts=export.load_hosts(hosts), hosts_path=hosts)
    assert e.value.field == "m9"
    hosts.write_text(json.dumps({"m1": "rm -rf /"}))
    with pytest.raises(FileFormatError, match="m1: .*host name or IP"):
        export.export_plan(p, tmp_path / "x", hosts=export.load_hosts(hosts), hosts_path=hosts)
    with pytest.raises(InputError, match="port"):
        p.export(tmp_path / "x", port=0)
    assert not (tmp_path / "x").exists()  # nothing written on refusal
    spec = small_cluster()
    assert [m["address"] for m in cluster_spec.from_json(spec.to_json()).machines] == [m["address"] for m in spec.machines]
    assert "address" not in small_cluster(addresses=False).machines[0]  # optional: absent unless given
    with pytest.raises(InputError, match="machine 0 .*address"):
        cluster_spec.from_json(dict(version="hulk-cluster/1", machines=[
            dict(name="m0", region="A", gpu="T4", memory_gb=16, address="a b")]))


def test_tensor_parallel_and_infeasible_jobs_get_no_bundle(tmp_path):
    m = ModelSpec(name="small", layers=8, hidden=256, seq_len=128, params=5e7, global_batch=64, micro_batches=4)
    p = plan(small_cluster(), [m], "c")
    with pytest.raises(InputError, match="no job of this plan can be launched: small: tensor parallel"):
        p.export(tmp_path / "c")
    huge = ModelSpec(name="huge", layers=8, hidden=256, seq_len=128, params=1e12, global_batch=64, micro_batches=4)
    index = plan(small_cluster(), [m, huge], "b").export(tmp_path / "b")
    assert index[0]["bundle"] == "small/job.json"
    assert index[1]["bundle"] is None and index[1]["reason"].startswith("infeasible")


def test_reader_refuses_a_changed_bundle(tmp_path):
    p = plan(small_cluster(), [two_by_two_model()], "search", max_iterations=300)
    p.export(tmp_path / "out")
    path = tmp_path / "out" / "tiny_lm" / "job.json"
    good = json.loads(path.read_text())

    def refused(change, field):
        doc = json.loads(json.dumps(good))
        change(doc)
        path.write_text(json.dumps(doc))
        with pytest.raises(FileFormatError) as e:
            bundle.read_bundle(path)
        assert e.value.field == field and str(path) in str(e.value), str(e.value)

    refused(lambda d: d.update(nnodes=6), "ranks")
    refused(lambda d: d["ranks"].pop() and d.update(nnodes=3), "nnodes")
    refused(lambda d: d["stages"][1].update(layers=[4, 7]), "stages")
    refused(lambda d: d["stages"][0].update(ranks=[0, 1]), "stages[0].ranks")
    refused(lambda d: d["model"].update(heads=3), "model.heads")
    refused(lambda d: d["model"].update(recompute=1), "model.recompute")
    refused(lambda d: d.update(version="hulk-launch/0"), "version")
    refused(lambda d: d.update(micro_batch_size=0), "micro_batch_size")
    refused(lambda d: d["predicted"].update(iteration_s=-1.0), "predicted")
    path.write_text(json.dumps(good))
    doc = bundle.read_bundle(path)
    with pytest.raises(FileFormatError, match="nnodes: the bundle is for 4 processes.*WORLD_SIZE = 3"):
        bundle.check_world_size(doc, path, 3)
    bundle.check_world_size(doc, path, 4)


def test_cli_export(tmp_path, capsys):
    cluster = tmp_path / "cluster.json"
    cluster.write_text(small_cluster(addresses=False).to_json())
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"version": "hulk-models/1", "models": [
        dict(name="small", layers=8, hidden=256, seq_len=128, params=5e7, global_batch=64, micro_batches=4)]}))
    hosts = tmp_path / "hosts.json"
    hosts.write_text(json.dumps({"m0": "192.168.1.10"}))
    base = ["plan", "--cluster", str(cluster), "--models", str(models), "--jobs", "small"]
    from hulk import cli
    assert cli.main(base + ["--planner", "b", "--export", str(tmp_path / "out"), "--hosts", str(hosts)]) == 0
    assert f"export: small: {tmp_path / 'out' / 'small' / 'job.json'}" in capsys.readouterr().out
    doc = bundle.read_bundle(tmp_path / "out" / "small" / "job.json")
    assert doc["rendezvous"]["address"] == "192.168.1.10"
    one_line_error(base + ["--export", str(tmp_path / "new")], capsys, "--export", "--planner")
    one_line_error(base + ["--planner", "b", "--export", str(tmp_path / "out")], capsys, "not empty")
    one_line_error(base + ["--planner", "b", "--hosts", str(hosts)], capsys, "--hosts and --port go with --export")
    one_line_error(base + ["--planner", "b", "--port", "29500"], capsys, "--hosts and --port go with --export")
