"""The package's layout: imports point one way (cli -> plan -> engine), there is no import
cycle, no module reaches into another's private names, and the old import paths still work."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import hulk


ROOT = Path(hulk.__file__).resolve().parent  # the hulk package under test

# The deprecated re-export shims (removed in 0.3). They are NOT excluded from the graph below:
# nothing in the package imports them and they import only hulk.plan, so they cannot close a
# cycle; they are listed to check that they stay thin and that no package module uses them.
SHIMS = ("planner", "learn", "greedy", "models", "cluster_spec", "generate", "report")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict:
    """{module name: (path, is package)} of every .py file of hulk."""
    return {_module_name(p): (p, p.name == "__init__.py") for p in sorted(ROOT.rglob("*.py"))}


MODULES = _modules()


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str) -> list:
    """(imported module, names imported from it, line) of every import in ``module``, function-level
    ones included; intra-package only. ``from pkg import sub`` counts as an import of ``pkg.sub``."""
    path, is_package = MODULES[module]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names if a.name.split(".")[0] == "hulk"]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, is_package, node)
            if source.split(".")[0] != "hulk":
                continue
            names = [a.name for a in node.names]
            subs = [n for n in names if f"{source}.{n}" in MODULES or f"{source}.{n}" == "hulk._core"]
            rest = [n for n in names if n not in subs]
            out += [(f"{source}.{n}", [], node.lineno) for n in subs]
            if rest:
                out.append((source, rest, node.lineno))
    return out


def _graph() -> dict:
    return {m: sorted({target for target, _, _ in _imports(m) if target in MODULES and target != m})
            for m in MODULES}


def test_the_import_graph_has_no_cycle():
    graph = _graph()
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in graph[m]:
            if state.get(t) == "open":
                cycle = stack[stack.index(t):] + [t]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in graph:
        if m not in state:
            visit(m)


def _layer(module: str) -> int:
    """0 the engine (and the package's shared helpers), 1 hulk.plan, 2 hulk.cli and hulk.launch
    (the entry point that runs an exported plan on PyTorch)."""
    if module in ("hulk.cli", "hulk.launch") or module.startswith(("hulk.cli.", "hulk.launch.")):
        return 2
    if module == "hulk.plan" or module.startswith("hulk.plan."):
        return 1
    return 0


def test_imports_point_one_way_cli_plan_engine():
    bad = []
    for m in MODULES:
        if m == "hulk.__main__" or m.split(".")[-1] in SHIMS and m.count(".") == 1:
            continue  # the entry point runs the CLI; the shims re-export hulk.plan (thin, deprecated)
        bad += [f"{m} imports {t}" for t in _graph()[m] if _layer(t) > _layer(m)]
    assert not bad, bad


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_helper_module(module: str) -> bool:
    """Package-private helper modules (_io, _checks, _progress, _device, _core, cli._args):
    their names are for the package's own use."""
    return _is_private(module.split(".")[-1])


def test_no_module_imports_a_private_name_of_another():
    bad = []
    for m in MODULES:
        for source, names, line in _imports(m):
            if _private_helper_module(source):
                continue
            bad += [f"{m}:{line} imports {n} from {source}" for n in names if _is_private(n)]
    assert not bad, bad


def test_no_module_uses_a_private_attribute_of_another_module():
    """``module._name`` where ``module`` is an imported hulk module (not a helper module)."""
    bad = []
    for m, (path, _) in MODULES.items():
        bound = {}
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _resolve(m, MODULES[m][1], node)
                for a in node.names:
                    if f"{source}.{a.name}" in MODULES:
                        bound[a.asname or a.name] = f"{source}.{a.name}"
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound
                    and _is_private(node.attr) and not _private_helper_module(bound[node.value.id])):
                bad.append(f"{m}:{node.lineno} uses {node.value.id}.{node.attr}")
    assert not bad, bad


def test_the_package_does_not_use_its_deprecated_shims():
    shims = {f"hulk.{s}" for s in SHIMS}
    users = [f"{m} imports {t}" for m in MODULES if m not in shims for t in _graph()[m] if t in shims]
    assert not users, users


def test_importing_hulk_does_not_import_the_planner():
    """``import hulk`` is the engine; hulk.plan loads when asked for."""
    code = "import sys, hulk; print('hulk.plan' in sys.modules, 'hulk.cli' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=str(ROOT.parent))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("old, names", [
    ("hulk.planner", ["plan", "compare", "Plan", "PLANNERS", "as_cluster_spec", "as_model_specs", "grow_bottleneck"]),
    ("hulk.learn", ["LearnedPlanner", "default_planner", "encode", "decode_groups", "make_dataset", "train",
                    "labels_from_plan", "draw_jobs", "DEFAULT_MODEL", "MAX_JOBS"]),
    ("hulk.greedy", ["greedy_classes"]),
    ("hulk.models", ["ModelSpec", "catalogue", "get", "load_models", "PAPER_JOBS_4"]),
    ("hulk.cluster_spec", ["ClusterSpec", "from_json", "from_networkx", "hulk47_spec", "gpu_info"]),
    ("hulk.generate", ["RegionalCluster", "generate_cluster", "cities", "SCHEMA_VERSION"]),
    ("hulk.report", ["plan_table", "comparison_table", "machine_locations", "save_figure"]),
])
def test_old_import_paths_re_export_with_a_deprecation_warning(old, names):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.reload(importlib.import_module(old))
    assert any(issubclass(w.category, DeprecationWarning) and "removed in 0.3" in str(w.message) for w in caught)
    new = importlib.import_module("hulk.plan")
    for name in names:
        assert hasattr(module, name), (old, name)
        if hasattr(new, name):
            assert getattr(module, name) is getattr(new, name), (old, name)


def test_old_paths_plan_as_before():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from hulk import learn
        from hulk.planner import plan
    assert learn.LearnedPlanner is hulk.plan.LearnedPlanner
    p = plan(hulk.plan.hulk47_spec(), ["BERT-large"], "a")
    assert p.feasible and p.job_specs[0].name == "BERT-large"


def test_the_cli_entry_points_resolve():
    from hulk.cli import build_parser, main
    assert callable(main)
    commands = build_parser()._subparsers._group_actions[0].choices
    assert list(commands) == ["classify", "plan", "profile", "train", "info"]
