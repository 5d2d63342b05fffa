"""python -m hulk.launch: an exported plan runs on PyTorch (gloo, processes on localhost) and
trains exactly what one process training the whole model on the same data trains.

Needs PyTorch (optional extra hulk[torch]); without it every test here is skipped, saying so."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional extra hulk[torch]): "
                                             "the launch tests run the exported plan on it")
pytestmark = pytest.mark.torch

from helpers import same_hulk_env
from hulk.plan import bundle
from hulk.plan.planners import plan
from test_plan_export import small_cluster, two_by_two_model

# A CPU-sized model: 5 blocks split 2 + 3 (the plan's 4 + 4 of 8 scaled to 5 layers).
SMALL = ["--hidden", "32", "--heads", "4", "--layers", "5", "--seq-len", "8", "--micro-batch-size", "2",
         "--iterations", "3", "--warmup", "1", "--lr", "0.01", "--device", "cpu"]
TIMEOUT_S = 300


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(job, world, extra, tmp_path, ranks=None):
    """Runs ranks (default all) of ``job`` as processes with torchrun's environment variables."""
    port = _free_port()
    procs = []
    for rank in ranks if ranks is not None else range(world):
        env = same_hulk_env(RANK=str(rank), LOCAL_RANK="0", WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                            MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, "-m", "hulk.launch", str(job), *extra], env=env, cwd=tmp_path,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    out = []
    try:
        for p in procs:
            stdout, stderr = p.communicate(timeout=TIMEOUT_S)
            out.append((p.returncode, stdout, stderr))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return out


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """The bundle of a plan with 2 replicas of a 2-stage pipeline (4 processes)."""
    folder = tmp_path_factory.mktemp("export")
    p = plan(small_cluster(), [two_by_two_model()], "search", max_iterations=300)
    p.export(folder / "out")
    path = folder / "out" / "tiny_lm" / "job.json"
    doc = bundle.read_bundle(path)
    assert (len(doc["pipelines"]), len(doc["stages"])) == (2, 2) and doc["micro_batches"] == 4
    return path


def test_pipelined_replicated_run_trains_the_same_losses_as_one_process(job, tmp_path):
    runs = _launch(job, 4, SMALL + ["--out", str(tmp_path / "dist.json")], tmp_path)
    for rc, stdout, stderr in runs:
        assert rc == 0, stdout + stderr[-3000:]
    single = subprocess.run([sys.executable, "-m", "hulk.launch", str(job), *SMALL, "--single",
                             "--out", str(tmp_path / "single.json")], env=same_hulk_env(OMP_NUM_THREADS="1"),
                            cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert single.returncode == 0, single.stdout + single.stderr[-3000:]
    dist, one = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("dist", "single"))
    assert (dist["replicas"], dist["stages"], dist["stage_bounds"]) == (2, 2, [0, 2, 5])
    assert len(dist["losses"]) == len(one["losses"]) == 3 and len(dist["iteration_s"]) == 3
    assert one["losses"][0] > 0 and one["losses"][-1] < one["losses"][0]  # it trains: the check is not vacuous
    for a, b in zip(dist["losses"], one["losses"]):
        assert abs(a - b) <= 1e-4 * abs(b), (dist["losses"], one["losses"])
    assert "iteration 3/3" in runs[0][1]


def test_a_launch_with_another_process_count_is_refused(job, tmp_path):
    [(rc, stdout, stderr)] = _launch(job, 3, SMALL, tmp_path, ranks=[0])
    assert rc == 2, stdout + stderr
    assert "nnodes" in stderr and "4 processes" in stderr and "WORLD_SIZE = 3" in stderr and str(job) in stderr


def test_too_few_layers_for_the_stages_is_refused(job, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "hulk.launch", str(job), "--layers", "1", "--single"],
                          env=same_hulk_env(), cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 2 and "--layers 1: the plan has 2 stages" in proc.stderr, proc.stderr
