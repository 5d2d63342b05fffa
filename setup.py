"""setup.py for hulk: the C++ extension is built by CMake through scikit-build-core's
setuptools plugin (no hand-written build glue here).

Metadata and dependencies live in pyproject.toml ([project]); CMake options in
pyproject.toml ([tool.scikit-build]) and CMakeLists.txt. ``pip install .`` builds a wheel,
``pip install -e .`` builds the extension into ``hulk/`` in the checkout (editable, in place),
so that ``import hulk`` works from the checkout root too. Rebuild after C++ changes by
running the same command again (the CMake build folder under build/ is reused).
"""

from setuptools import setup

setup(
    cmake_source_dir=".",  # activates the scikit-build-core plugin: CMakeLists.txt is at the top
    # The data folders are listed as packages so that setuptools ships them as data, not as
    # "namespace packages it would ignore".
    packages=["hulk", "hulk.plan", "hulk.cli", "hulk.data", "hulk.data.hulk47", "hulk.data.planner"],
    package_data={"hulk.data": ["*.json"], "hulk.data.hulk47": ["*"], "hulk.data.planner": ["*"]},
)
