"""Importing the package (hulk/__init__.py): what a checkout without its compiled extension says."""

from __future__ import annotations

import os
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
