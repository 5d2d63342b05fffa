"""What the planners accept (hulk.plan.inputs): clusters of every form, jobs by name or spec."""

from __future__ import annotations

import pytest

from hulk.plan import as_cluster, as_cluster_spec, as_model_specs, generate, hulk47_spec, models


def test_a_cluster_passes_through_and_the_old_name_is_an_alias():
    spec, regional = hulk47_spec(), generate.generate_cluster(20, seed=1)
    assert as_cluster(spec) is spec and as_cluster(regional) is regional
    assert as_cluster_spec is as_cluster


def test_json_files_of_both_kinds_and_a_graph(tmp_path):
    spec, regional = hulk47_spec(), generate.generate_cluster(20, seed=1)
    spec.to_json(tmp_path / "c.json")
    regional.to_json(tmp_path / "r.json")
    assert as_cluster(tmp_path / "c.json") == spec
    assert as_cluster(str(tmp_path / "r.json")) == regional
    assert len(as_cluster(spec.to_networkx())) == 47
    with pytest.raises(TypeError, match="cluster must be"):
        as_cluster(42)


def test_jobs_by_name_or_spec():
    bert = models.get("BERT-large")
    assert [j.name for j in as_model_specs(["gpt-2 xl", bert])] == ["GPT-2 1.5B", "BERT-large"]
    with pytest.raises(ValueError, match="at least one job"):
        as_model_specs([])
    with pytest.raises(TypeError, match="expected model names"):
        as_model_specs([3])
