"""Every code example of README.md and docs/ runs and says what it claims.

Python blocks run in a fresh namespace, in a folder holding the files the docs name (made from
the data of ``rankwise demo``), with the names each block assumes made by its entry in
PYTHON_EXAMPLES; a block that continues an earlier one of its page runs after it, in the same
namespace. The value of every expression statement is kept by its text, so that an entry can
check what the block's comments say of it. Shell blocks: every ``rankwise`` command line runs
with this interpreter in such a folder and must exit with status 0; a synopsis line
(``QRELS``, ``[--format table|json]``) runs once with every optional part and the first of each
set of alternatives, and once in this process per further alternative. A block without an entry
fails, and so does an entry without its block, so no example goes unchecked. The Spark examples
run in tests/spark/test_docs_examples_spark.py, on the session of tests/spark/conftest.py.
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from markdown_it import MarkdownIt
from threadpoolctl import threadpool_limits

import rankwise
from rankwise.demo import write_demo_data

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SHELL_LANGUAGES = {"sh", "bash", "console", "shell"}
#: The demo's systems behind the run files the docs name (its queries q001.. become 301..350).
RUN_FILES = {"bm25.run": "medium", "dense.run": "strong", "splade.run": "random",
             "run.txt": "strong"}


@dataclass(frozen=True)
class Block:
    """One fenced code block: its page (relative to the repository), language, text and the
    page's line number of its first line."""

    page: str
    language: str
    text: str
    line: int

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def doc_blocks() -> list[Block]:
    """Every fenced block of README.md and docs/**/*.md, in page order."""
    blocks = []
    for path in PAGES:
        for token in MarkdownIt().parse(path.read_text(encoding="utf-8")):
            if token.type == "fence":
                blocks.append(Block(path.relative_to(ROOT).as_posix(),
                                    token.info.split()[0] if token.info.strip() else "",
                                    token.content, token.map[0] + 2))
    return blocks


BLOCKS = doc_blocks()


def write_example_data(folder: Path) -> None:
    """``qrels.txt`` and the runs the docs name, from ``rankwise demo``'s collection: 50 queries
    numbered 301 to 350 (as TREC topics), each run tagged with its file's stem."""
    demo = folder / "demo-data"
    qrels, runs = write_demo_data(demo)
    topic = re.compile(r"^q(\d+)", re.M)

    def renumber(text: str) -> str:
        return topic.sub(lambda m: str(300 + int(m.group(1))), text)

    (folder / "qrels.txt").write_text(renumber(qrels.read_text()))
    for name, system in RUN_FILES.items():
        text = renumber(runs[system].read_text())
        tag = name.split(".")[0]
        (folder / name).write_text(re.sub(rf" {system}$", f" {tag}", text, flags=re.M))
    shutil.rmtree(demo)


def read_trec_dicts(folder: Path, run_file: str = "bm25.run") -> tuple[dict, dict]:
    """The judgments and one run as dict-of-dicts ``{qid: {docid: value}}``."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels.txt").read_text().splitlines():
        query, _, doc, grade = line.split()
        qrels.setdefault(query, {})[doc] = int(grade)
    run: dict[str, dict[str, float]] = {}
    for line in (folder / run_file).read_text().splitlines():
        query, _, doc, _, score, _ = line.split()
        run.setdefault(query, {})[doc] = float(score)
    return qrels, run


@pytest.fixture(scope="session")
def example_data(tmp_path_factory) -> Path:
    """The example files, written once."""
    folder = tmp_path_factory.mktemp("docs-data")
    write_example_data(folder)
    return folder


@pytest.fixture
def folder(example_data, tmp_path, monkeypatch) -> Path:
    """A fresh copy of the example files, made the working directory."""
    work = tmp_path / "work"
    shutil.copytree(example_data, work)
    monkeypatch.chdir(work)
    return work


# ---------------------------------------------------------------------------- Python blocks


@dataclass
class Ran:
    """What a Python block left: its namespace, the value of each expression statement by its
    text, and what it printed."""

    namespace: dict[str, Any]
    shown: dict[str, Any] = field(default_factory=dict)
    printed: str = ""

    def value_of(self, fragment: str) -> Any:
        """The value of the one expression statement whose text holds ``fragment``."""
        found = [value for text, value in self.shown.items() if fragment in text]
        assert len(found) == 1, f"{len(found)} expression statements hold {fragment!r}"
        return found[0]


@dataclass(frozen=True)
class PythonExample:
    """How one Python block runs: ``marker`` is a short text only that block of ``page``
    holds; ``context`` makes the names the block assumes (given the working folder);
    ``continues`` is the marker of the earlier block whose namespace it continues; each
    ``rewrites`` pair replaces a text the block holds that cannot run here; ``check`` asserts
    what the block's comments claim."""

    page: str
    marker: str
    context: Callable[[Path], dict[str, Any]] | None = None
    continues: str | None = None
    rewrites: tuple[tuple[str, str], ...] = ()
    check: Callable[[Ran], None] | None = None
    spark: bool = False
    slow: bool = False


#: Modules whose deprecation warnings fail a block: the libraries the pages show calls of.
PEERS_SHOWN = r"(lightgbm|xgboost|sklearn|torch|torchmetrics|ranx|ir_measures|pytrec_eval)\b"


def run_python(block: Block, rewrites: tuple[tuple[str, str], ...], ran: Ran) -> None:
    """Run the block statement by statement in ``ran.namespace`` (tracebacks name the page and
    its line), keeping each expression statement's value and what is printed. A deprecation
    warned by a library the pages show (``PEERS_SHOWN``) fails the block. Thread pools
    loaded by then are held to one thread: on a busy 2-core machine, OpenMP threads waiting
    for each other made a LightGBM round 40 times slower."""
    text = block.text
    for old, new in rewrites:
        assert old in text, f"{block}: the rewritten text {old!r} is no longer in the block"
        text = text.replace(old, new)
    tree = ast.parse(text)
    sources = [ast.get_source_segment(text, statement) for statement in tree.body]
    ast.increment_lineno(tree, block.line - 1)
    filename = str(ROOT / block.page)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), threadpool_limits(limits=1), \
            warnings.catch_warnings():
        for category in (DeprecationWarning, FutureWarning):  # a page shows the current API
            warnings.filterwarnings("error", category=category, module=PEERS_SHOWN)
        for source, statement in zip(sources, tree.body):
            if isinstance(statement, ast.Expr):
                code = compile(ast.Expression(statement.value), filename, "eval")
                ran.shown[source] = eval(code, ran.namespace)
            else:
                exec(compile(ast.Module([statement], []), filename, "exec"), ran.namespace)
    ran.printed += printed.getvalue()
    sys.stdout.write(printed.getvalue())


def find_block(page: str, marker: str) -> Block:
    """The one block of ``page`` that holds ``marker``."""
    found = [b for b in BLOCKS if b.page == page and marker in b.text]
    assert len(found) == 1, f"{len(found)} blocks of {page} hold {marker!r}: need exactly one"
    return found[0]


def find_entry(block: Block, entries: list) -> Any:
    """The table entry of a block (``None`` when there is none)."""
    found = [e for e in entries if e.page == block.page and e.marker in block.text]
    assert len(found) <= 1, f"{block}: several entries match it: {found}"
    return found[0] if found else None


def run_example(example: PythonExample, folder: Path) -> Ran:
    """Run the block of ``example`` after the blocks it continues, with its context."""
    if example.continues:
        earlier = next(e for e in PYTHON_EXAMPLES
                       if e.page == example.page and e.marker == example.continues)
        ran = run_example(earlier, folder)
        ran.shown.clear()
    else:
        ran = Ran({"__name__": "__main__"})
    if example.context:
        ran.namespace.update(example.context(folder))
    run_python(find_block(example.page, example.marker), example.rewrites, ran)
    return ran


def python_cases(spark: bool) -> list:
    """One case per Python block, the Spark ones or the others; a block without an entry is a
    case too, which fails."""
    cases = []
    for block in BLOCKS:
        if block.language != "python":
            continue
        example = find_entry(block, PYTHON_EXAMPLES)
        if (example is not None and example.spark) != spark:
            continue
        marks = [pytest.mark.slow] if example is not None and example.slow else []
        cases.append(pytest.param(block, example, id=str(block), marks=marks))
    return cases


#: The libraries of the ``test`` extra that ``make test-minimum`` does not install.
NOT_IN_TEST_CORE = {"torch", "torchmetrics", "lightgbm", "xgboost", "pyspark", "ranx",
                    "playwright"}


def check_python_example(block: Block, example: PythonExample | None, folder: Path) -> None:
    """Run the block with its entry's context and check what its comments claim."""
    assert example is not None, (
        f"{block}: no entry in PYTHON_EXAMPLES for this block: add one with the names it "
        f"assumes and the claims of its comments")
    try:
        ran = run_example(example, folder)
    except ModuleNotFoundError as exc:
        if exc.name in NOT_IN_TEST_CORE:
            pytest.skip(f"{exc.name} is not installed")
        raise
    if example.check:
        example.check(ran)


# ------------------------------------------------------------------- contexts and claims


def qrels_and_run_files(folder: Path) -> dict[str, Any]:
    """``rankwise``, and ``qrels`` and ``run`` as files (README, conventions page)."""
    return {"rankwise": rankwise, "qrels": "qrels.txt", "run": "dense.run"}


def trec_dicts(folder: Path) -> dict[str, Any]:
    """``qrels`` and ``run`` as dict-of-dicts, as pytrec_eval and ranx take them."""
    qrels, run = read_trec_dicts(folder)
    return {"qrels": qrels, "run": run}


def check_readme_python(ran: Ran) -> None:
    result = ran.namespace["result"]
    assert ran.value_of("result.mean(") == pytest.approx(0.7895, abs=5e-5)
    frame = ran.value_of("result.to_frame()")
    assert list(frame.columns) == ["system", "query", "nDCG@10", "P@10", "AP", "RR"]
    assert len(frame) == 2 * 50  # one row per system and query
    assert result.to_frame(backend="polars").shape == frame.shape
    conventions, diagnostics = ran.value_of("result.conventions")
    assert conventions == rankwise.TREC_EVAL and set(diagnostics) == {"bm25", "dense"}
    again = ran.value_of("Result.from_json(")
    assert again.to_json() == result.to_json()


def check_readme_compare(ran: Ran) -> None:
    table = ran.printed
    assert re.search(r"b dense +0\.7895\^a +0\.6813\^a", table), table  # 0.6813^a, as said
    assert "p (holm)" in table  # and the tests
    p_value, corrected = ran.value_of(".p_value,")
    assert 0 < p_value <= corrected <= 1


def recsys_context(folder: Path) -> dict[str, Any]:
    """The simulated log and recommenders of the recommender walk-through (``make demo``)."""
    from rankwise.recsys.simulate import recommenders, simulate

    log = simulate(users=200)
    return {"recs": recommenders(log), "test": log.test, "train": log.train,
            "features": (log.item_ids, log.features)}


def check_recsys(ran: Ran) -> None:
    from rankwise.compare import compare_result

    result = ran.namespace["result"]
    per_user = ran.value_of("result.per_user(")
    assert len(per_user) == 200 and set(per_user["u0000"]) == set(result.measures)
    assert len(ran.value_of("result.to_frame()")) == 200 * 3  # one row per user and system
    assert all(counts["recommendation_rows"] > 0 for counts in result.inputs.values())
    accuracy = ran.value_of("result.accuracy_result()")
    assert type(accuracy) is rankwise.Result
    assert compare_result(accuracy, baseline="popularity").tests
    tests = ran.value_of("result.compare_beyond(")
    assert {t["system"] for t in tests} == {"item_knn", "genre_profile"}
    assert all(t["p_value"] <= t["p_value_corrected"] for t in tests)  # Holm


def check_figures(ran: Ran) -> None:
    from matplotlib.figure import Figure

    assert all(isinstance(value, Figure) for key, value in ran.shown.items()
               if key.startswith("plot.") and "save" not in key)
    assert Path("ndcg-at-k.pdf").stat().st_size > 0
    written = ran.value_of("plot.save_figures(")
    assert written and all(Path(p).suffix == ".pdf" and Path(p).exists() for p in written)


def spark_conventions_context(folder: Path) -> dict[str, Any]:
    """The names the conventions of the ``spark`` profile are written with."""
    return {"Conventions": rankwise.Conventions, "math": math}


def check_spark_profile(ran: Ran) -> None:
    from rankwise.conventions import profile

    assert ran.value_of("Conventions(") == profile("spark").conventions  # "it stands for"


def ir_measures_context(folder: Path) -> dict[str, Any]:
    import ir_measures

    return {"qrels": list(ir_measures.read_trec_qrels("qrels.txt")),
            "run": list(ir_measures.read_trec_run("bm25.run"))}


def check_ir_measures_provider(ran: Ran) -> None:
    import ir_measures

    names = ran.namespace
    aggregate = ran.value_of("provider.calc_aggregate(")
    default = ir_measures.calc_aggregate(list(aggregate), names["qrels"], names["run"])
    assert aggregate == pytest.approx(default, abs=1e-12)  # as the default pipeline
    first = next(iter(ran.value_of("provider.iter_calc(")))
    assert first._fields == ("query_id", "measure", "value")
    assert names["evaluator"].calc_aggregate(names["run"]) == pytest.approx(
        {m: v for m, v in aggregate.items() if str(m) != "RR@10"}, abs=1e-12)


class PyTerrier:
    """Stands in for ``pyterrier`` (not among the test extras): ``Experiment`` hands each
    system's results and the judgments, as DataFrames with PyTerrier's column names renamed to
    ir_measures' ones, to ``ir_measures.calc_aggregate``, as PyTerrier does."""

    @staticmethod
    def Experiment(systems, topics, qrels, eval_metrics):
        import ir_measures
        import pandas as pd

        judgments = qrels.rename(columns={"qid": "query_id", "docno": "doc_id",
                                          "label": "relevance"})
        rows = []
        for number, results in enumerate(systems):
            run = results.rename(columns={"qid": "query_id", "docno": "doc_id"})
            values = ir_measures.calc_aggregate(eval_metrics, judgments, run)
            rows.append({"name": f"system {number}", **{str(m): v for m, v in values.items()}})
        return pd.DataFrame(rows)


def pyterrier_context(folder: Path) -> dict[str, Any]:
    import pandas as pd

    def results(path: str) -> pd.DataFrame:
        return pd.read_csv(path, sep=" ", header=None, dtype={0: str},
                           names=["qid", "Q0", "docno", "rank", "score", "name"])

    qrels = pd.read_csv("qrels.txt", sep=" ", header=None, dtype={0: str},
                        names=["qid", "iteration", "docno", "label"])
    return {"pt": PyTerrier, "bm25": results("bm25.run"), "dense": results("dense.run"),
            "topics": pd.DataFrame({"qid": qrels["qid"].unique()}), "qrels": qrels}


def check_pyterrier(ran: Ran) -> None:
    from ir_measures import AP, RR, nDCG

    names = ran.namespace
    table = ran.value_of("pt.Experiment(")
    measures = ["nDCG@10", "AP", "RR@10"]
    assert sorted(table.columns) == sorted(["name", *measures])  # the same names
    plain = PyTerrier.Experiment([names["bm25"], names["dense"]], names["topics"],
                                 names["qrels"], [nDCG @ 10, AP, RR @ 10])
    assert np.allclose(table[measures].to_numpy(float), plain[measures].to_numpy(float),
                       atol=1e-12)


def ranking_arrays(queries: int, seed: int, per_query: int = 20):
    """Learning-to-rank arrays: two features (one follows the grade), grades 0-3, groups."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, queries * per_query)
    X = np.c_[y + rng.normal(0, 1.5, len(y)), rng.normal(size=len(y))]
    return X, y, np.full(queries, per_query)


def lightgbm_context(folder: Path) -> dict[str, Any]:
    import lightgbm as lgb

    X, y, sizes = ranking_arrays(80, seed=1)
    Xv, yv, gv = ranking_arrays(30, seed=2)
    return {"lgb": lgb, "train": lgb.Dataset(X, y, group=sizes),
            "valid": lgb.Dataset(Xv, yv, group=gv),
            "ranker": lgb.LGBMRanker(n_estimators=30, n_jobs=1, verbose=-1),
            "X": X, "y": y, "sizes": sizes, "Xv": Xv, "yv": yv, "gv": gv}


def check_lightgbm(ran: Ran) -> None:
    booster, ranker = ran.namespace["booster"], ran.namespace["ranker"]
    assert set(booster.best_score["valid_0"]) == {"nDCG@10", "AP@100"}
    assert {"nDCG@10", "AP@100"} <= set(ranker.evals_result_["valid_0"])


def xgboost_context(folder: Path) -> dict[str, Any]:
    import xgboost as xgb

    X, y, sizes = ranking_arrays(80, seed=1)
    Xv, yv, gv = ranking_arrays(30, seed=2)
    return {"xgb": xgb, "train": xgb.DMatrix(X, label=y, qid=np.repeat(np.arange(80), sizes)),
            "valid": xgb.DMatrix(Xv, label=yv, qid=np.repeat(np.arange(30), gv))}


def check_xgboost(ran: Ran) -> None:
    booster = ran.namespace["booster"]
    assert 0 < booster.best_score <= 1 and booster.best_iteration >= 0


def check_pytrec_eval(ran: Ran) -> None:
    import pytrec_eval

    names = ran.namespace
    scores = names["scores"]
    assert all(set(values) == {"map", "ndcg_cut_10", "P_5", "P_10"}
               for values in scores.values())
    peer = pytrec_eval.RelevanceEvaluator(names["qrels"], {"map", "ndcg_cut.10", "P.5,10"})
    expected = peer.evaluate(names["run"])  # "was: import pytrec_eval"
    assert list(scores) == list(expected)
    assert all(scores[q] == pytest.approx(expected[q], abs=1e-12) for q in expected)


def check_ranx(ran: Ran) -> None:
    assert set(ran.value_of('result.aggregates["run"]')) == {"nDCG@10", "AP@100", "RR"}


def sklearn_context(folder: Path) -> dict[str, Any]:
    import pandas as pd
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score

    features, y, sizes = ranking_arrays(60, seed=3)
    X = pd.DataFrame({"qid": np.repeat(np.arange(60), sizes), "f1": features[:, 0],
                      "f2": features[:, 1]})
    return {"cross_val_score": cross_val_score, "GroupKFold": GroupKFold,
            "GridSearchCV": GridSearchCV, "model": Ridge(), "X": X, "y": y,
            "grid": {"alpha": [0.1, 10.0]}}


def check_sklearn(ran: Ran) -> None:
    folds = ran.value_of("cross_val_score(")
    assert len(folds) == 5 and all(0 < value <= 1 for value in folds)
    assert 0 < ran.value_of("GridSearchCV(").best_score_ <= 1


def torch_context(folder: Path) -> dict[str, Any]:
    """30 queries of 12 candidates, binary targets, the first query without a relevant one,
    scores also <= 0 (which the torchmetrics profile never counts as relevant)."""
    import torch

    generator = torch.Generator().manual_seed(0)
    indexes = torch.arange(30).repeat_interleave(12)
    target = torch.randint(0, 2, (360,), generator=generator)
    target[indexes == 0] = 0
    return {"preds": torch.rand(360, generator=generator) - 0.2, "target": target,
            "indexes": indexes}


def check_torch(ran: Ran) -> None:
    """Each call equals what its ``# was:`` comment says it replaces."""
    from torchmetrics.retrieval import RetrievalMAP, RetrievalNormalizedDCG

    preds, target, indexes = (ran.namespace[name] for name in ("preds", "target", "indexes"))
    assert all(hasattr(ran.namespace["metric"], name) for name in ("update", "compute", "reset"))

    def peer(metric) -> float:
        return float(metric(preds, target, indexes=indexes))

    ndcg, ignoring, skipping = (ran.value_of(text) for text in (
        "rt.ndcg(", "ignore_index=-1", 'no_relevant="skip"'))
    assert float(ndcg) == pytest.approx(peer(RetrievalNormalizedDCG(top_k=10)), abs=1e-6)
    assert float(ignoring["AP"]) == pytest.approx(peer(RetrievalMAP(ignore_index=-1)), abs=1e-6)
    assert float(skipping["AP"]) == pytest.approx(
        peer(RetrievalMAP(empty_target_action="skip")), abs=1e-6)
    assert float(skipping["nDCG"]) == pytest.approx(
        peer(RetrievalNormalizedDCG(empty_target_action="skip")), abs=1e-6)


def write_parquet(path: Path, data: dict, columns: tuple[str, str, str], parts: int = 1) -> None:
    """``{query: {doc: value}}`` as a Parquet file (a ``path`` ending in ``.parquet``) or as a
    folder of ``parts`` Parquet files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [(q, d, v) for q, docs in data.items() for d, v in docs.items()]
    table = pa.table(dict(zip(columns, map(list, zip(*rows)))))
    if path.suffix == ".parquet":
        pq.write_table(table, path)
        return
    path.mkdir()
    for part in range(parts):
        pq.write_table(table.take(list(range(part, len(rows), parts))),
                       path / f"part-{part}.parquet")


def cluster_parquet(folder: Path) -> None:
    """The judgments and the dense run as Parquet with the default column names, for the
    command that reads them from a cluster's file system."""
    qrels, run = read_trec_dicts(folder, "dense.run")
    write_parquet(folder / "qrels.parquet", qrels, ("query", "doc", "relevance"))
    write_parquet(folder / "run.parquet", run, ("query", "doc", "score"))


def ten_users(folder: Path) -> tuple[dict, dict]:
    """The judgments and the dense run of queries 301 to 310, as dict-of-dicts."""
    qrels, run = read_trec_dicts(folder, "dense.run")
    return ({q: qrels[q] for q in list(qrels)[:10]}, {q: run[q] for q in list(run)[:10]})


def recommender_parquet(folder: Path) -> dict[str, Any]:
    """``recs/`` (user, item, score) and ``heldout/`` (user, item, rating), folders of two
    Parquet files each, from :func:`ten_users`."""
    qrels, run = ten_users(folder)
    write_parquet(folder / "recs", run, ("user", "item", "score"), parts=2)
    write_parquet(folder / "heldout", qrels, ("user", "item", "rating"), parts=2)
    return {}


def check_spark_evaluate(ran: Ran) -> None:
    """The numbers are the in-memory engine's; the per-query table is in Spark and on disk."""
    result = ran.namespace["result"]
    qrels, run = ten_users(Path.cwd())
    in_memory = rankwise.evaluate(qrels, run, result.measures)
    assert result.aggregates == {"run": pytest.approx(in_memory.aggregates["run"], abs=1e-12)}
    assert "nDCG@10" in ran.printed
    assert result.diagnostics["run"]["run_rows"] == sum(map(len, run.values()))
    assert result.per_query_frame.columns == ["system", "query", *result.measures]
    assert Path("eval/per_query").is_dir()


def check_spark_submit_script(ran: Ran) -> None:
    result = ran.namespace["result"]
    again = rankwise.Result.from_json(Path("result.json").read_text())  # "reads it back"
    assert again.aggregates == result.aggregates and set(again.systems) == {"als"}
    assert Path("eval/per_query").is_dir()


PYTHON_EXAMPLES = [
    PythonExample("README.md", "result.to_frame()", check=check_readme_python),
    PythonExample("README.md", "comparison = rankwise.compare(", continues="result.to_frame()",
                  check=check_readme_compare),
    PythonExample("README.md", 'conventions="torchmetrics", ties="expected"',
                  context=qrels_and_run_files),
    PythonExample("docs/conventions.md", 'conventions="ranx")', context=qrels_and_run_files),
    PythonExample("docs/recsys.md", "rs.evaluate(recs, test", context=recsys_context,
                  check=check_recsys),
    PythonExample("docs/report.md", "from rankwise.report.data import collect",
                  check=check_figures, slow=True),
    PythonExample("docs/spark.md", "SparkSession.builder.getOrCreate()", spark=True,
                  context=recommender_parquet, check=check_spark_evaluate),
    PythonExample("docs/spark.md", "s3://bucket/recs/", spark=True,
                  context=recommender_parquet, check=check_spark_submit_script, rewrites=(
                      ("s3://bucket/recs/2026-11-22/", "recs/"),
                      ("s3://bucket/heldout/2026-11-22/", "heldout/"),
                      ("s3://bucket/eval/2026-11-22/per_query", "eval/per_query"))),
    PythonExample("docs/spark.md", "Conventions(gain=\"exponential\"",
                  context=spark_conventions_context, check=check_spark_profile),
    PythonExample("docs/switching/ir_measures.md", "provider.calc_aggregate",
                  context=ir_measures_context, check=check_ir_measures_provider),
    PythonExample("docs/switching/ir_measures.md", "pt.Experiment", context=pyterrier_context,
                  continues="provider.calc_aggregate", check=check_pyterrier),
    PythonExample("docs/switching/lightgbm-xgboost.md", "import rankwise.lightgbm",
                  context=lightgbm_context, check=check_lightgbm),
    PythonExample("docs/switching/lightgbm-xgboost.md", "import rankwise.xgboost",
                  context=xgboost_context, check=check_xgboost),
    PythonExample("docs/switching/pytrec_eval.md", "RelevanceEvaluator", context=trec_dicts,
                  check=check_pytrec_eval),
    PythonExample("docs/switching/ranx.md", 'conventions="ranx"', context=trec_dicts,
                  check=check_ranx),
    PythonExample("docs/switching/scikit-learn.md", "make_scorer", context=sklearn_context,
                  check=check_sklearn),
    PythonExample("docs/switching/torchmetrics.md", "import rankwise.torch",
                  context=torch_context, check=check_torch),
]


# ----------------------------------------------------------------------------- shell blocks


@dataclass(frozen=True)
class ShellExample:
    """How the ``rankwise`` command lines of one shell block run: ``values`` gives each
    placeholder of a synopsis (``QRELS``, ``--test ...``) by command (``"*"``: every command),
    a tuple giving one item after the other; ``writes`` names the files a command must leave
    besides those its OUTPUT_OPTIONS name; ``context`` writes further input files;
    ``not_run`` says why a block holds no ``rankwise`` command to run."""

    page: str
    marker: str
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    rewrites: tuple[tuple[str, str], ...] = ()
    writes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    context: Callable[[Path], None] | None = None
    not_run: str = ""
    spark: bool = False


#: The options naming a file or folder the command writes.
OUTPUT_OPTIONS = ("-o", "--output", "--spark-per-query-output")


def command_lines(text: str) -> list[str]:
    """The ``rankwise`` command lines of a shell block, continued lines joined, prompts off."""
    joined = re.sub(r"\\\n\s*", " ", text)
    lines = [line.strip().removeprefix("$ ") for line in joined.splitlines()]
    return [line for line in lines if line.split(" ", 1)[0] == "rankwise"]


def unbracket(word: str) -> str:
    """A word without the brackets of an optional part (``[--per-query]``, ``[RUN``, ``...]``),
    keeping those of a value (``local[2]``)."""
    word = word.removeprefix("[")
    return word if "[" in word else word.removesuffix("]")


def variants(line: str, values: dict[str, dict[str, Any]]) -> list[list[str]]:
    """The arguments a command line stands for: every optional part ``[...]`` given and each
    placeholder replaced (``X ...`` after an option is a placeholder of its value, after
    anything else a repetition, dropped); one list per alternative of the longest set
    ``a|b|c``, the other sets' alternatives taken in turn."""
    words = [unbracket(word) for word in shlex.split(line, comments=True)[1:]]
    table = {**values.get("*", {}), **values.get(words[0], {})}
    items = {key: iter(value) for key, value in table.items() if isinstance(value, tuple)}
    arguments: list[list[str]] = []
    for word in words:
        if word == "...":
            if not arguments[-1][0].startswith("-"):
                continue
            word = f"{arguments[-1][0]} ..."
        if word in table:
            arguments.append([next(items[word]) if word in items else table[word]])
        else:
            arguments.append(word.split("|"))
    count = max(len(choices) for choices in arguments)
    return [[choices[i % len(choices)] for choices in arguments] for i in range(count)]


def rankwise_command(arguments: list[str], folder: Path) -> subprocess.CompletedProcess:
    """``python -m rankwise ARGUMENTS`` with this interpreter and this rankwise, in ``folder``."""
    here = str(Path(rankwise.__file__).parents[1])
    path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "rankwise", *arguments], cwd=folder,
                          env={**os.environ, "PYTHONPATH": path, "MPLBACKEND": "Agg"},
                          capture_output=True, text=True, timeout=300)


def rankwise_in_process(arguments: list[str]) -> tuple[int, str]:
    """The command line's ``main`` in this process: its exit status and what it wrote to
    stderr."""
    from rankwise.cli import main

    errors = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(errors):
        try:
            status = main(arguments)
        except SystemExit as stop:  # argparse refusing an option
            status = stop.code
    return status, errors.getvalue()


def shell_cases(spark: bool) -> list:
    """One case per ``rankwise`` command line of a shell block (the Spark ones or the others),
    one per block without such a line; command lines that draw figures are slow."""
    cases = []
    for block in BLOCKS:
        if block.language not in SHELL_LANGUAGES:
            continue
        example = find_entry(block, SHELL_EXAMPLES)
        if (example is not None and example.spark) != spark:
            continue
        text = block.text
        for old, new in example.rewrites if example else ():
            text = text.replace(old, new)
        lines = command_lines(text)
        cases += [pytest.param(block, example, line, id=f"{block}:{shlex.split(line)[1]}",
                               marks=[pytest.mark.slow] if " plot " in line else [])
                  for line in lines] or [pytest.param(block, example, None, id=str(block))]
    return cases


def check_shell_line(block: Block, example: ShellExample | None, line: str | None,
                     folder: Path, in_process: bool) -> None:
    """Run one command line (``in_process``: every variant through ``main``, else the first
    as a command of its own): status 0, and the files it must write are there."""
    assert example is not None, (
        f"{block}: no entry in SHELL_EXAMPLES for this block: add one with the values of its "
        f"placeholders")
    if line is None:
        assert example.not_run, f"{block}: it runs no rankwise command; say why in not_run"
        return
    assert not example.not_run, f"{block}: it runs {line!r}, yet its entry says it runs none"
    for old, _ in example.rewrites:
        assert old in block.text, f"{block}: the rewritten text {old!r} is no longer in the block"
    if example.context:
        example.context(folder)
    first, *others = variants(line, example.values)
    if in_process:
        status, errors = rankwise_in_process(first)
    else:
        done = rankwise_command(first, folder)
        status, errors = done.returncode, done.stderr
        assert done.stdout or set(first) & set(OUTPUT_OPTIONS), (
            f"{block}: {shlex.join(first)} printed nothing")
    assert status == 0, f"{block}: {shlex.join(first)} exited with {status}:\n{errors}"
    written = list(example.writes.get(first[0], ()))
    written += [first[i + 1] for i, word in enumerate(first) if word in OUTPUT_OPTIONS]
    for path in written:
        assert Path(folder, path).exists(), f"{block}: {shlex.join(first)} wrote no {path}"
    for arguments in others:
        status, errors = rankwise_in_process(arguments)
        assert status == 0, f"{block}: {shlex.join(arguments)} exited with {status}:\n{errors}"


FILES = {"QRELS": "qrels.txt", "RUN": ("bm25.run", "dense.run", "splade.run")}

SHELL_EXAMPLES = [
    ShellExample("README.md", "make demo", not_run="make targets: they create a virtual "
                 "environment and install packages; the 'rankwise demo' that 'make demo' ends "
                 "with runs from the command-line synopsis below"),
    ShellExample("README.md", "rankwise evaluate QRELS RUN", values={
        "*": FILES, "compare": {"NAME": "bm25.run", "--test ...": "t",
                                "--correction ...": "holm"},
        "explain": {"Q": "301"}, "profiles": {"NAME": "ranx"}},
        writes={"demo": ("rankwise-demo/report.html",)}),
    ShellExample("README.md", "-f trec -m all_trec qrels.txt run.txt"),
    ShellExample("README.md", "rankwise compare qrels.txt bm25.run dense.run splade.run"),
    ShellExample("README.md", "--profile sklearn --gain exponential"),
    ShellExample("docs/conventions.md", "--profile torchmetrics"),
    ShellExample("docs/report.md", "rankwise report qrels.txt",
                 values={"report": {"TEXT": "Example runs"}}),
    ShellExample("docs/report.md", "rankwise plot qrels.txt",
                 values={"plot": {"-m ...": "nDCG@10"}}),
    ShellExample("docs/report.md", "rankwise explain qrels.txt run.txt"),
    ShellExample("docs/spark.md", "pip install 'rankwise[spark]'      #",
                 not_run="installs the package"),
    ShellExample("docs/spark.md", "rankwise evaluate qrels.txt run.txt", spark=True,
                 context=cluster_parquet, rewrites=(
                     ("hdfs:///eval/qrels.parquet", "qrels.parquet"),
                     ("hdfs:///eval/run.parquet", "run.parquet"),
                     ("--spark-master yarn", "--spark-master local[2]"),
                     ("hdfs:///eval/per_query", "per_query"))),
    ShellExample("docs/spark.md", "spark-submit", not_run="builds a virtual environment and "
                 "submits a job to a YARN cluster (its script runs as a Python example)"),
]


# ---------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("block, example", python_cases(spark=False))
def test_python_block(block, example, folder):
    check_python_example(block, example, folder)


@pytest.mark.parametrize("block, example, line", shell_cases(spark=False))
def test_shell_line(block, example, line, folder):
    check_shell_line(block, example, line, folder, in_process=False)


def test_explain_output_shown_in_report_md(tmp_path):
    """The table report.md shows is what ``rankwise explain`` prints for its example: the
    second founding article's ranking B of documents graded 2, 3 and 1."""
    shown = find_block("docs/report.md", "of query 'q' in run 'B'")
    (tmp_path / "qrels.txt").write_text("q 0 a 3\nq 0 b 2\nq 0 c 1\n")
    (tmp_path / "B").write_text("q Q0 b 1 3 B\nq Q0 a 2 2 B\nq Q0 c 3 1 B\n")
    done = rankwise_command(["explain", "qrels.txt", "B", "--query", "q", "-m",
                             "nDCG(gain=exp)@3"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown.text


def test_every_block_has_a_known_language():
    """A block in another language (``py``, ``pycon``) would go unchecked; an untagged block
    holding a ``rankwise`` command line should be tagged ``sh`` so that it runs."""
    assert [str(b) for b in BLOCKS if b.language not in {"", "python", *SHELL_LANGUAGES}] == []
    assert [str(b) for b in BLOCKS if not b.language and command_lines(b.text)] == []


def test_every_entry_has_its_block():
    for entry in PYTHON_EXAMPLES + SHELL_EXAMPLES:
        find_block(entry.page, entry.marker)


def test_readme_counts_the_values_the_conformance_tests_compare():
    """The README's counts of trec_eval values reproduced are the sums of the lines the
    conformance tests pin (it said 110,468 on the random collections, without the 2,776 lines
    of negative gains)."""
    from tests.conformance import test_random_collections as random_collections
    from tests.conformance.test_trec_eval import CASES

    flags = sum(lines for _, _, lines in random_collections.FLAGS.values())
    parameters = sum(lines for lines, _ in random_collections.PARAMETER_FLAGS.values())
    gains = sum(random_collections.GAIN_LINES.values())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert (f"{sum(case.compared for case in CASES):,} values over {len(CASES)} cases"
            in readme)
    assert re.search(rf"And {flags + parameters + gains:,} values on\s+24 small random "
                     rf"collections", readme)
    assert re.search(rf"{flags:,} under seven flag sets, {parameters:,} with measure "
                     rf"parameters and {gains:,} with gain maps", readme)


def test_readme_names_every_profile():
    """The README's list of profiles is every profile rankwise has (it left out lightgbm,
    xgboost and spark)."""
    from rankwise.conventions import PROFILES

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    listed = readme.split("A **profile** bundles the conventions of a peer library: ")[1]
    listed = listed.split(" (`rankwise profiles`")[0]
    assert re.findall(r"`(\w+)`", listed) == list(PROFILES)


def test_readme_conventions_table_lists_every_choice():
    """Each row of the README's conventions table names every choice of its field (the rows
    of no_relevant and idcg_zero left out ``one``)."""
    from rankwise.conventions import CHOICES

    rows = dict(re.findall(r"^\| `(\w+)`(.*)$", (ROOT / "README.md").read_text(encoding="utf-8"),
                           re.M))
    missing = {name: [c for c in choices if f"`{c}`" not in rows.get(name, "")]
               for name, choices in CHOICES.items()}
    assert {name: left for name, left in missing.items() if left} == {}
