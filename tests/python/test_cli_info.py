"""``hulk info`` (hulk.cli.info)."""


import hulk
from hulk import cli
from hulk.cli.info import blas_line


def test_info(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert f"hulk {hulk.__version__}" in out
    assert f"CUDA backend compiled: {bool(hulk._core.engine.built_with_cuda)}" in out
    assert f"CUDA usable: {hulk.cuda_available()}" in out
    assert f"CPU threads: {hulk.get_num_threads()}" in out
    blas = [line for line in out.splitlines() if line.startswith("BLAS: ")]
    assert len(blas) == 1
    assert (blas[0] == "BLAS: OpenBLAS") == (hulk._core.engine.blas_info()["vendor"] == "openblas"), blas[0]
    assert blas[0] == f"BLAS: {blas_line()}"
    # OpenBLAS names the kernels it picked for this CPU (Haswell, SkylakeX, Prescott, ...)
    kernels = [line for line in out.splitlines() if line.startswith("BLAS kernels: ")]
    core = hulk._core.engine.blas_info()["core"]
    assert len(kernels) == (1 if blas[0] == "BLAS: OpenBLAS" else 0), out
    if kernels:
        assert core and kernels[0].startswith(f"BLAS kernels: {core}"), (kernels, core)
