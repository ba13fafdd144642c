"""The recommender walk-through and the recommender section of ``make demo`` run, write their
reports and tell the expected story (deterministic data: the same numbers everywhere)."""

from __future__ import annotations

import importlib.util
import json
import os

import rankwise.recsys as rs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_demo_section(tmp_path):
    text = rs.demo_section(str(tmp_path))
    assert "genre_profile" in text and "Holm" in text
    report = (tmp_path / "recsys-report.md").read_text()
    assert "## Significance against the popularity baseline" in report
    result = rs.RecsysResult.from_json((tmp_path / "recsys-result.json").read_text())
    # the content-based recommender beats popularity on accuracy and on long-tail share
    assert result.mean("nDCG@10", "genre_profile") > result.mean("nDCG@10", "popularity")
    assert result.mean("APLT@10", "genre_profile") > result.mean("APLT@10", "popularity")
    assert result.mean("Gini@10", "popularity") > 0.9  # the same list for everyone
    again = rs.demo_section(str(tmp_path))
    assert again == text  # deterministic


def test_walkthrough(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location(
        "walkthrough", os.path.join(ROOT, "examples", "recommender_walkthrough.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(str(tmp_path))
    out = capsys.readouterr().out
    assert "5. conventions" in out and "significant" in out
    data = json.loads((tmp_path / "result.json").read_text())
    assert set(data["systems"]) == {"popularity", "item_knn", "genre_profile"}
