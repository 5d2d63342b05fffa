"""benchmarks/bench_layout.py: the layout speed benchmark runs, compares two builds on the same
groups (the same build against itself gives the same layouts) and names a bad --against."""

from __future__ import annotations

import pytest
from helpers import hulk_home, load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_layout")


def test_measure_is_deterministic_in_its_layouts(bench):
    a, b = bench.measure([12], 3), bench.measure([12], 3)
    assert set(a[12]) == {*bench.MODELS, *(m + bench.NEARBY for m in bench.MODELS), *(m + bench.WHOLE for m in bench.MODELS),
                          bench.BUILD}
    assert all(a[12][m][1] == b[12][m][1] and a[12][m][0] > 0 for m in a[12])


def test_against_the_same_build_reports_the_same_layouts(bench, capsys, tmp_path):
    out = tmp_path / "RESULTS.md"
    here = hulk_home()
    assert bench.main(["--sizes", "12", "--groups", "2", "--repeats", "1", "--against", str(here),
                       "--write", str(out)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 12 |")]
    assert len(rows) == 3 * len(bench.MODELS) + 1 and all(row.endswith("| yes |") for row in rows)
    assert bench.BEGIN in out.read_text() and "--against" in out.read_text()


def test_bad_arguments_are_named(bench, tmp_path):
    with pytest.raises(SystemExit):
        bench.main(["--against", str(tmp_path)])
    with pytest.raises(SystemExit):
        bench.main(["--sizes", "1"])
    with pytest.raises(SystemExit):
        bench.main(["--groups", "0"])


def test_nearby_groups_are_whole_regions_nearest_first(bench):
    import random
    from hulk.plan import generate
    spec = generate.generate_cluster(60, seed=3900, mode="measured", n_regions=12)
    rng = random.Random(1)
    for _ in range(20):
        group = bench.nearby_group(spec, rng)
        assert 2 <= len(group) <= 48 and len(set(group)) == len(group)
        regions = [int(spec.region[i]) for i in group]
        home = regions[0]
        # regions appear in order of latency from the first, each but the last one whole
        order = list(dict.fromkeys(regions))
        lat = [spec.base_latency_ms[home][r] for r in order]
        assert lat == sorted(lat)
        for r in order[:-1]:
            assert regions.count(r) == int((spec.region == r).sum())


def test_search_moves_times_whole_plans_and_keeps_the_sections_notes(bench, capsys, tmp_path):
    out = tmp_path / "RESULTS.md"
    here = hulk_home()
    argv = ["--search-moves", "20", "--sizes", "12", "--instances", "1", "--first-instance", "3", "--repeats", "1",
            "--against", str(here), "--write", str(out)]
    assert bench.main(argv) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and " #" in line]
    # the bundled cluster and one cluster per mode, each with both default job sets
    assert len(rows) == 2 * 3 and all(row.endswith("| yes |") for row in rows)
    text = out.read_text()
    assert bench.SEARCH_BEGIN in text and "geometric mean" in text
    out.write_text(text.replace("| cluster and job set |", "Note: kept.\n\n| cluster and job set |"))
    assert bench.main(argv) == 0
    assert out.read_text().count("Note: kept.") == 1


def test_bad_search_arguments_are_named(bench, capsys):
    for argv in (["--search-moves", "-1"], ["--search-moves", "5", "--instances", "0"]):
        with pytest.raises(SystemExit):
            bench.main(argv)
        assert "--search-moves" in capsys.readouterr().err
