"""Importing the package (hulk/__init__.py): what a checkout without its compiled extension says."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

import hulk


def test_importing_a_checkout_without_its_extension_says_what_to_run(tmp_path):
    """A copy of the source package without the compiled extension, imported from its folder
    (what `python -c "import hulk"` in a checkout did after `pip install .`)."""
    src = os.path.dirname(hulk.__file__)
    shutil.copytree(src, tmp_path / "hulk", ignore=shutil.ignore_patterns("_core*", "__pycache__"))
    # -S: no site-packages, so no installed or editable hulk can supply the extension.
    proc = subprocess.run([sys.executable, "-S", "-c", "import hulk"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert "partially initialized" not in proc.stderr
    assert "compiled extension hulk._core is not in" in last and "pip install -e ." in last, proc.stderr


def test_import_from_the_checkout_root_after_the_readme_install():
    """The README's install (scripts/setup.sh: pip install -e .) builds the extension in place,
    so `import hulk` works in the checkout root."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.dirname(os.path.abspath(hulk.__file__)) != os.path.join(root, "hulk"):
        pytest.skip("hulk is not installed editable from this checkout (pip install -e .)")
    proc = subprocess.run([sys.executable, "-c", "import hulk, sys; print(hulk._core.__file__)"], cwd=root,
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=""))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith(os.path.join(root, "hulk", "_core"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the ELF dynamic section (Linux)")
def test_the_extension_links_the_shared_cxx_runtime():
    """A module holding its own static copy of libstdc++ crashes in a Python process that also
    loads the shared one, the first time it formats a number into a stream (seen on a lent
    H200's CUDA image, which has libstdc++.a but no libstdc++.so link, 2026-11-26).
    CMakeLists.txt links libstdc++.so.6 by name on such a toolchain."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not on this machine")
    out = subprocess.run([readelf, "-d", "-W", hulk._core.__file__], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    assert needed, out
    assert any(n.startswith(("libstdc++.so", "libc++.so")) for n in needed), \
        f"{hulk._core.__file__} needs {needed}: no shared C++ runtime, so it carries a static one"
