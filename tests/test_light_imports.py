"""A fresh process evaluating TREC text, Parquet files or dicts, or streaming a TREC run,
imports only what it needs:
not pandas (about 0.3 s where it is installed, pulled in by ``pa.array`` on a list and by
pyarrow's dataset layer), not ``pyarrow.compute`` (27 ms of generated wrappers), not
``numpy.ma`` (8 ms, imported by ``np.unique``), not ``ctypes.util`` (a library search). Each
of these was once imported on the way and cost a small evaluation a third of its time; the
checks are on ``sys.modules``, not on timings."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest



def _loaded_by_numpy() -> set[str]:
    """The modules ``import numpy`` loads by itself (numpy before 2.0 imports ``numpy.ma``):
    rankwise cannot avoid them."""
    done = subprocess.run([sys.executable, "-c", "import json, sys, numpy; "
                           "print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout))


HEAVY = [m for m in ["pandas", "pyarrow.compute", "pyarrow.dataset", "numpy.ma", "ctypes.util"]
         if m not in _loaded_by_numpy()]

SCRIPT = """
import json, sys
import rankwise
after_import = sorted(m for m in {heavy!r} + ["pyarrow"] if m in sys.modules)
if {stream!r}:
    from rankwise.stream import evaluate_stream
    result = evaluate_stream({qrels!r}, {run!r}, ["P@2", "AP", "nDCG", "RR", "Bpref"],
                             chunk_bytes=64)
else:
    result = rankwise.evaluate({qrels!r}, {run!r}, ["P@2", "AP", "nDCG", "RR", "Bpref"],
                               per_query=True)
print(json.dumps({{"after_import": after_import, "mean": result.mean("AP"),
                  "loaded": sorted(m for m in {heavy!r} if m in sys.modules)}}))
"""


def _fresh(qrels, run, stream: bool = False) -> dict:
    code = SCRIPT.format(heavy=HEAVY, qrels=qrels, run=run, stream=stream)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def _files(tmp_path):
    qrels = {"query": ["q1", "q1", "q2", "q3"], "doc": ["a", "b", "c", "é"],
             "relevance": [1, 0, 2, 1]}
    run = {"query": ["q1", "q1", "q1", "q2", "q2", "q4"], "doc": ["b", "a", "x", "c", "d", "a"],
           "score": [3.0, 2.0, 2.0, 1.0, 1.0, 1.0]}
    (tmp_path / "qrels.txt").write_text("".join(
        f"{q} 0 {d} {g}\n" for q, d, g in zip(*qrels.values())), encoding="utf-8")
    (tmp_path / "run.txt").write_text("".join(
        f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(zip(*run.values()))))
    pq.write_table(pa.table(qrels), tmp_path / "qrels.parquet")
    pq.write_table(pa.table(run), tmp_path / "run.parquet", row_group_size=2)
    nested_qrels, nested_run = {}, {}
    for q, d, g in zip(*qrels.values()):
        nested_qrels.setdefault(q, {})[d] = g
    for q, d, s in zip(*run.values()):
        nested_run.setdefault(q, {})[d] = s
    nested_run["q5"] = {}  # a query given with no document
    return {"text": (str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")),
            "parquet": (str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet")),
            "dict": (nested_qrels, nested_run)}


@pytest.mark.parametrize("form", ["text", "parquet", "dict", "stream"])
def test_an_evaluation_imports_nothing_heavy(tmp_path, form):
    import pandas  # noqa: F401  (installed: otherwise the check below proves nothing)

    files = _files(tmp_path)
    seen = _fresh(*files["text" if form == "stream" else form], stream=form == "stream")
    assert seen["after_import"] == []  # import rankwise loads neither pyarrow nor the rest
    assert seen["loaded"] == []
    reference = _fresh(*files["text"])["mean"]
    assert seen["mean"] == pytest.approx(reference) and reference > 0


RECSYS_SCRIPT = """
import json, sys
import numpy as np
import rankwise.recsys as rr
recs = {recs}
test = {test}
result = rr.evaluate(recs, test, ["HR@2", "P@2", "nDCG@3", "AP@3", "RR@3"], threshold=4)
print(json.dumps({{"mean": result.mean("nDCG@3"),
                  "loaded": sorted(m for m in {heavy!r} if m in sys.modules)}}))
"""


def test_learning_to_rank_arrays_import_nothing_heavy():
    """y_true / y_score arrays (``from_arrays``), as scikit-learn and torchmetrics take them."""
    import pandas  # noqa: F401

    code = ("import json, sys\nimport numpy as np\nimport rankwise\n"
            "from rankwise.io.arrays import from_arrays\n"
            "qrels, run = from_arrays(np.array([[2, 0, 1], [0, 1, 0]]), "
            "np.array([[0.3, 0.2, 0.1], [0.5, 0.9, 0.1]]))\n"
            "mean = rankwise.evaluate(qrels, run, ['nDCG@2', 'RR']).mean('RR')\n"
            f"print(json.dumps({{'mean': mean, 'loaded': sorted(m for m in {HEAVY!r} "
            "if m in sys.modules)}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    seen = json.loads(done.stdout)
    assert seen == {"mean": 1.0, "loaded": []}  # both top-scored documents are relevant


@pytest.mark.parametrize("recs, test", [
    ("np.array([[1, 2, 3], [4, 5, 6], [7, 1, 2]])", "{0: [2, 9], 1: [6], 2: [7, 2]}"),
    ("{'u1': ['a', 'b'], 'u2': ['c', 'a'], 'u3': ['b']}",
     "{'u1': {'a': 5, 'c': 3}, 'u2': {'c': 4}, 'u4': {'a': 5}}"),
    ("{'u1': {'a': 0.9, 'b': 0.9}, 'u2': {'c': 0.5, 'a': 0.7}}", "{'u1': ['b'], 'u2': ['c']}"),
])
def test_a_recommender_evaluation_imports_nothing_heavy(recs, test):
    """Recommendation lists as a 2-D array or dicts, test data as dicts: no pandas (there is
    no frame in sight), no pyarrow.compute, no numpy.ma."""
    import pandas  # noqa: F401  (installed: otherwise the check below proves nothing)

    code = RECSYS_SCRIPT.format(recs=recs, test=test, heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    seen = json.loads(done.stdout)
    assert seen["loaded"] == []
    assert 0 < seen["mean"] <= 1
