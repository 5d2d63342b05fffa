"""Text tables of plans (hulk.plan.report); the figure and the map are in the tests below too."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from hulk import cli
from hulk.errors import InputError
from hulk.plan import cluster_spec, generate, models, planners, report


PAPER4 = list(models.PAPER_JOBS_4)


TIME_LIMIT = 0.2


@pytest.fixture(scope="module")
def spec47():
    return cluster_spec.hulk47_spec()


@pytest.fixture(scope="module")
def plans4(spec47):
    """planner name -> Plan of the paper's 4 jobs on the bundled cluster."""
    return {name: planners.plan(spec47, PAPER4, name, time_limit_s=TIME_LIMIT, seed=0) for name in planners.PLANNERS}


def test_ranges():
    assert report.ranges([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert report.ranges([8, 7, 5, 2, 1, 0]) == "0-2,5,7-8"
    assert report.ranges([3]) == "3"
    assert report.ranges([]) == "-"


def test_plan_table_and_comparison_table(plans4):
    ordered = [plans4[x] for x in planners.PLANNERS]
    for p in ordered:
        t = report.plan_table(p)
        assert p.title in t
        for name in PAPER4:
            assert name in t
    c = report.comparison_table(ordered)
    for p in ordered:
        assert p.title in c


def test_machine_locations_of_the_bundled_and_a_generated_cluster():
    from hulk.plan import report
    names, lat, lon = report.machine_locations(cluster_spec.hulk47_spec())
    assert len(names) == 47 and np.isfinite(lat).all() and np.isfinite(lon).all()
    city = {c["name"]: (c["lat"], c["lon"]) for c in generate.cities()}
    assert (lat[0], lon[0]) == city[names[0]]
    c = generate.generate_cluster(40, seed=3)
    names, lat, lon = report.machine_locations(c)
    assert names == [c.region_names[r] for r in c.region.tolist()]
    np.testing.assert_array_equal(lat, c.region_lat[c.region])


def test_png_map_with_hulk_and_search_side_by_side(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "plan.png"
    assert cli.main(["plan", "--jobs", "BERT-large,GPT-2 1.5B", "--time-limit", "0.05", "--max-iterations", "20",
                     "--png", str(path)]) == 0
    raw = path.read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", raw[16:24])
    assert width > 1.5 * height  # two maps side by side above the bars
    # A machine without coordinates is drawn too (below the map), not dropped.
    doc = json.loads(cluster_spec.hulk47_spec().to_json())
    doc["machines"][0]["region"] = "Atlantis"
    (tmp_path / "c.json").write_text(json.dumps(doc))
    assert cli.main(["plan", "--cluster", str(tmp_path / "c.json"), "--jobs", "BERT-large", "--time-limit", "0.05",
                     "--max-iterations", "20", "--png", str(tmp_path / "c.png")]) == 0
    assert (tmp_path / "c.png").stat().st_size > 10_000


@pytest.mark.parametrize("name, magic", [("f.pdf", b"%PDF"), ("f.SVG", b"<?xml"), ("f.png", b"\x89PNG")])
def test_figure_is_written_in_the_format_its_extension_names(tmp_path, name, magic):
    pytest.importorskip("matplotlib")
    path = tmp_path / name
    assert cli.main(["plan", "--planner", "b", "--figure", str(path)]) == 0
    assert path.read_bytes().startswith(magic)


@pytest.mark.parametrize("name, why", [("f.xyz", "the extension '.xyz' is not a figure format"),
                                       ("figure", "it has no extension")])
def test_figure_extension_that_cannot_be_honoured_is_refused_before_planning(tmp_path, capsys, name, why):
    path = tmp_path / name
    with pytest.raises(SystemExit) as exc:
        cli.main(["plan", "--planner", "b", "--png", str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --figure/--png" in err and why in err and ".pdf" in err
    assert not path.exists()
    plans = [planners.plan(cluster_spec.hulk47_spec(), planner="b")]
    with pytest.raises(InputError, match=f"figure path .*{name}.*: {why}"):
        report.save_figure(plans, str(path))
    assert not path.exists()
