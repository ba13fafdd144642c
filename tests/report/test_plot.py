"""Static figures (matplotlib, without pyplot): each draws the report's numbers, and every
format is written."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.cli import main
from rankwise.errors import InputError
from rankwise.report.data import collect
from tests.helpers import write
from tests.report.collection import make_collection

pytest.importorskip("matplotlib")

from rankwise import plot  # noqa: E402


@pytest.fixture(scope="module")
def data():
    qrels, runs = make_collection(queries=30, systems=3, depth=20)
    return collect(qrels, runs, ["nDCG@10", "AP"], test="t", max_k=20)


def test_metric_at_k_draws_the_curves(data):
    fig = plot.metric_at_k(data, "P")
    lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in lines] == list(data.systems)
    for line, s in zip(lines, data.systems.values()):
        assert np.array_equal(line.get_xdata(), np.arange(1, 21))
        assert np.array_equal(line.get_ydata(), s.curves["P"])
    assert fig.axes[0].get_xlabel() == "K (cutoff)" and fig.axes[0].get_ylabel() == "mean P@K"


def test_precision_recall_mean_and_faint_queries(data):
    all_systems = plot.precision_recall(data).axes[0].get_lines()
    assert np.array_equal(all_systems[1].get_ydata(), data.systems["sys1"].pr_mean)
    ax = plot.precision_recall(data, "sys0").axes[0]
    sample = data.systems["sys0"].pr_sample
    faint = ax.collections[0]
    assert len(faint.get_segments()) == len(sample) and faint.get_alpha() == 0.15
    assert np.array_equal(faint.get_segments()[3][:, 1], sample[3])
    (mean,) = ax.get_lines()
    assert np.array_equal(mean.get_ydata(), data.systems["sys0"].pr_mean)


@pytest.mark.parametrize("kind", ["box", "violin", "hist"])
def test_distribution(data, kind):
    fig = plot.distribution(data, "AP", kind=kind)
    assert fig.axes[0].get_title() == "AP per query"
    if kind == "box":
        labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        assert labels == list(data.systems)
        med = fig.axes[0].lines  # whiskers, caps, medians, means
        values = data.values("AP", "sys0")[1]
        assert any(np.allclose(line.get_xdata(), np.median(values)) for line in med)
    with pytest.raises(InputError, match="kind must be"):
        plot.distribution(data, "AP", kind="pie")


def test_scatter_and_summary(data):
    fig = plot.scatter(data, "AP", "sys1", "sys0")
    points = fig.axes[0].collections[0].get_offsets()
    _, a, b = data.paired("AP", "sys1", "sys0")
    assert np.array_equal(points[:, 0], a) and np.array_equal(points[:, 1], b)
    assert "higher for sys1" in fig.axes[0].get_title()
    bars = plot.summary(data, "nDCG@10").axes[0].patches
    assert [bar.get_height() for bar in bars] == pytest.approx(
        [data.summary["nDCG@10"][s]["compared_mean"] for s in data.systems])
    with pytest.raises(InputError, match="not a system"):
        plot.scatter(data, "AP", "nope", "sys0")


def test_save_every_figure(data, tmp_path):
    paths = plot.save_figures(data, tmp_path, ["svg"])
    assert {p.stem for p in paths} == {
        "at-k-nDCG", "at-k-P", "at-k-R", "pr-all", "pr-sys0", "pr-sys1", "pr-sys2",
        "summary-AP", "summary-nDCG@10", "scatter-AP", "scatter-nDCG@10", "histogram-AP",
        "histogram-nDCG@10", "distribution-AP", "distribution-nDCG@10"}
    assert all(p.read_text().startswith("<?xml") for p in paths)


def test_every_format(tmp_path):
    qrels, runs = make_collection(queries=8, systems=1, depth=5)
    small = collect(qrels, runs, ["AP"], max_k=3)
    paths = plot.save_figures(small, tmp_path, ["png", "svg", "pdf"], dpi=40,
                              kinds=["summary", "histogram"])
    assert sorted(p.name for p in paths) == sorted(
        f"{stem}.{fmt}" for stem in ("summary-AP", "histogram-AP") for fmt in ("png", "svg", "pdf"))
    heads = {".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF"}
    for p in paths:
        assert p.read_bytes()[:4] == heads[p.suffix][:4], p
    with pytest.raises(InputError, match="formats must be"):
        plot.save_figures(data, tmp_path, ["gif"])
    with pytest.raises(InputError, match="kinds among"):
        plot.save_figures(data, tmp_path, ["svg"], kinds=["pie"])
    assert plot._file_name("P(rel=2)@5/x") == "P_rel=2_@5_x"


def test_plot_command(tmp_path, capsys):
    qrels = write(tmp_path, "qrels.txt", "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq2 0 d 0\n")
    a = write(tmp_path, "a.run", "q1 Q0 a 1 2 A\nq1 Q0 b 2 1 A\nq2 Q0 c 1 2 A\nq2 Q0 d 2 1 A\n")
    b = write(tmp_path, "b.run", "q1 Q0 b 1 2 B\nq1 Q0 a 2 1 B\nq2 Q0 d 1 2 B\nq2 Q0 c 2 1 B\n")
    out = tmp_path / "figs"
    assert main(["plot", qrels, a, b, "-o", str(out), "--format", "svg", "-m", "AP",
                 "--test", "t", "--max-k", "5", "--dpi", "50", "--figures", "scatter", "at-k"]) == 0
    printed = capsys.readouterr().out.split()
    assert sorted(printed) == sorted(str(out / f"{stem}.svg") for stem in (
        "scatter-AP", "at-k-nDCG", "at-k-P", "at-k-R"))


def test_names_that_sanitise_alike_write_one_file_each(tmp_path, capsys):
    qrels = write(tmp_path, "qrels.txt", "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq2 0 d 0\n")
    runs = [write(tmp_path, name, f"q1 Q0 a 1 {i} R\nq1 Q0 b 2 0 R\nq2 Q0 d 1 {i} R\n")
            for i, name in enumerate(["a|b.run", "a,b.run", "A|B.run", "all"])]
    out = tmp_path / "figs"
    assert main(["plot", qrels, *runs, "-o", str(out), "--format", "svg", "-m", "AP",
                 "--test", "t", "--max-k", "3", "--dpi", "50", "--figures", "pr"]) == 0
    printed = capsys.readouterr().out.split()
    assert len(printed) == len(set(printed)) == 5  # pr-all and one per system
    assert sorted(p.name for p in out.iterdir()) == sorted(p.rsplit("/", 1)[1] for p in printed)
    names = plot._file_names([("pr-all", ""), ("pr-", "a|b.run"), ("pr-", "a,b.run"),
                              ("pr-", "A|B.run"), ("pr-", "all"), ("pr-", "c.run")])
    assert len({n.casefold() for n in names}) == 6
    assert names[-1] == "pr-c.run"  # a name that collides with none stays as it was
    assert all(n.startswith(("pr-a_b.run-", "pr-A_B.run-", "pr-all-")) for n in names[:-1])
    assert names == plot._file_names([("pr-all", ""), ("pr-", "a|b.run"), ("pr-", "a,b.run"),
                                      ("pr-", "A|B.run"), ("pr-", "all"), ("pr-", "c.run")])


def _svg_texts(fig) -> list[str]:
    import io
    import xml.etree.ElementTree as ET

    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text as text, not as paths
        fig.savefig(buffer, format="svg")
    root = ET.fromstring(buffer.getvalue())
    return ["".join(e.itertext()) for e in root.iter("{http://www.w3.org/2000/svg}text")]


def test_dollar_signs_in_names_are_text_not_mathematics(tmp_path):
    names = ["a$b$c", r"$\frac$", "$x^$"]
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 1}}
    runs = {name: {"q1": {"a": float(i), "b": 1.0}, "q2": {"a": 1.0}}
            for i, name in enumerate(names)}
    data = collect(qrels, runs, ["AP"], test="t", max_k=3)
    assert [t for t in _svg_texts(plot.distribution(data, "AP")) if t in names] == names
    assert names[1] in _svg_texts(plot.scatter(data, "AP", names[1], names[0]))
    texts = _svg_texts(plot.summary(data, "AP"))
    assert [t for t in texts if t[2:] in names] == [f"{x} {n}" for x, n in zip("abc", names)]
    assert len(plot.save_figures(data, tmp_path, ["svg"])) == 11


def test_long_names_are_cut_to_a_file_name_the_system_accepts(tmp_path):
    names = ["x" * 300, "\U0001d54f" * 100, "x" * 299 + "y"]
    stems = plot._file_names([("pr-", n) for n in names] + [("pr-", "short")])
    assert all(len(s.encode()) <= 140 for s in stems) and len(set(stems)) == 4
    assert stems[-1] == "pr-short"
    qrels = {"q1": {"a": 1, "b": 0}}
    runs = {name: {"q1": {"a": float(i), "b": 1.0}} for i, name in enumerate(names)}
    data = collect(qrels, runs, ["AP"], test="t", max_k=2)
    paths = plot.save_figures(data, tmp_path, ["svg"], dpi=30, kinds=["pr"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)
    assert len(paths) == 4


def test_a_run_whose_name_starts_with_an_underscore_is_in_every_legend():
    names = ["_bm25", "dense", "__x"]
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 1}}
    runs = {name: {"q1": {"a": float(i), "b": 1.0}, "q2": {"a": 1.0}}
            for i, name in enumerate(names)}
    data = collect(qrels, runs, ["AP"], test="t", max_k=3)
    for fig in (plot.metric_at_k(data), plot.precision_recall(data),
                plot.distribution(data, "AP", kind="hist")):
        assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == names


def test_control_characters_in_names_leave_every_svg_well_formed(tmp_path):
    import xml.etree.ElementTree as ET

    names = ["a\x00b", "c\x01d", "e\x1bf"]
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 1}}
    runs = {name: {"q1": {"a": float(i), "b": 1.0}, "q2": {"a": 1.0}}
            for i, name in enumerate(names)}
    data = collect(qrels, runs, ["AP"], test="t", max_k=3)
    paths = plot.save_figures(data, tmp_path, ["svg"], dpi=30)
    shown = set()
    for path in paths:
        root = ET.parse(path).getroot()  # a NUL or an escape character would not parse
        shown |= {"".join(e.itertext()) for e in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {"a\ufffdb", "c\ufffdd", "e\ufffdf"} <= shown


LONG_NAMES = ["runs/bm25.rm3.k1_0.9.b_0.4.fb10.trec.txt",  # 40 characters squeezed the bars
              "runs/monot5-large.rerank.top100.experiment-two.txt",
              "runs/" + "dense-retrieval-contriever-msmarco-" * 8 + ".run", "x" * 300]


def test_long_names_leave_every_figure_its_room_and_are_drawn_whole(tmp_path):
    """Run names as paths (40 characters and more) are drawn on several lines, legends of
    them below the plot and the figure grown to them: matplotlib's layout gave up on them
    ('axes sizes collapsed to zero'), the summary's bars squeezed to a sliver."""
    import warnings

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 1}}
    runs = {name: {"q1": {"a": float(i), "b": 1.0}, "q2": {"a": 1.0}}
            for i, name in enumerate(LONG_NAMES)}
    data = collect(qrels, runs, ["AP"], test="t", max_k=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # summary, at-k x 3, pr-all, pr x 4, distribution, histogram, scatter
        assert len(plot.save_figures(data, tmp_path, ["svg"], dpi=30)) == 12
        figures = [plot.summary(data), plot.metric_at_k(data), plot.precision_recall(data),
                   plot.distribution(data), plot.distribution(data, kind="hist")]
        drawn = ["".join(_svg_texts(fig)) for fig in figures]
    for text in drawn:
        assert all(name in text for name in LONG_NAMES)
    summary = figures[0]
    assert summary.get_size_inches()[0] > 0.9 + 0.55 * len(LONG_NAMES)
    assert summary.axes[0].get_position().height > 0.3  # of the figure, not a sliver
    assert all(fig.axes[0].get_legend() is None and fig.legends for fig in figures[1:3])


def test_a_long_name_is_cut_after_a_separator_into_lines_that_join_to_it():
    lines = plot._name_lines("runs/bm25.rm3.k1_0.9.b_0.4.fb10.trec.txt")
    assert lines == ["runs/bm25.rm3.k1_0.9.b_0.4.", "fb10.trec.txt"]
    for name in LONG_NAMES + ["short", "", "a\nb" + "c" * 40]:
        lines = plot._name_lines(name)
        assert "".join(lines) == name.replace("\n", "")
        assert all(len(line) <= plot.NAME_LINE_CHARS for line in lines)
    assert plot._name_lines("x" * 60) == ["x" * 28, "x" * 28, "x" * 4]
    for name in ("e\u0301" * 20, "\U0001f469\u200d\U0001f467" * 15):  # accents, emoji
        lines = plot._name_lines(name)
        assert len(lines) > 1 and "".join(lines) == name
        assert all(line[0] not in "\u0301\u200d" and line[-1] != "\u200d" for line in lines)
    assert plot._shown("bm25") == "bm25"  # short names are drawn as they are


def test_bidi_characters_in_names_leave_the_figures_own_words_in_order(tmp_path, browser):
    """A right-to-left override (U+202E) in a run name reversed the rest of an SVG title
    (": mean and 6 queries") in a browser, and a Hebrew name took the count after it into its
    right-to-left run ("3 ,לש"): such a name is drawn isolated, as the HTML report isolates
    it; a name without such characters is drawn as it is."""
    from rankwise.messages import isolated
    from tests.report.pages import backwards

    names = ["x\u202e", "y\u05e9\u05dc", "z"]
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(6)}
    runs = {n: {f"q{j}": {"a": float((i + j) % 2), "b": 0.5} for j in range(6)}
            for i, n in enumerate(names[:2])}
    runs["z"] = runs["x\u202e"]
    data = collect(qrels, runs, ["AP"], test="t", max_k=2)
    paths = plot.save_figures(data, tmp_path, ["svg"], dpi=30, kinds=["pr", "scatter"])
    texts = [t for fig in (plot.scatter(data), plot.precision_recall(data))
             for t in _svg_texts(fig)]
    assert {isolated(names[0]), isolated(names[1]), "z"} <= set(texts)
    page = browser.new_page()
    page.set_content("<!DOCTYPE html><body>" + "".join(
        p.read_text()[p.read_text().index("<svg"):] for p in paths) + "</body>")
    assert page.locator("svg").count() == 5  # pr-all, pr of each system, scatter
    assert backwards(page, [": mean and ", ", 3 for ", " higher for "]) == []
    page.close()


def test_values_outside_a_measures_bounds_stay_in_the_figures():
    # nDCG's axis was its bounds [0, 1]: under a negative gain the scatter's points lay off
    # the axes, the histogram's bins left out every negative value, and the curves went
    # below the chart
    from tests.report.test_data import NEGATIVE_GAINS, NEGATIVE_QRELS, NEGATIVE_RUNS

    data = collect(NEGATIVE_QRELS, NEGATIVE_RUNS, ["nDCG@3"], test="t", max_k=3,
                   gain=NEGATIVE_GAINS)
    lowest = data.result.systems["x"].values["nDCG@3"].min()
    assert lowest < -2
    ax = plot.scatter(data).axes[0]
    assert ax.get_xlim()[0] <= lowest and ax.get_ylim()[0] <= lowest
    hist = plot.distribution(data, kind="hist").axes[0]
    assert hist.patches[0].get_path().vertices[:, 0].min() <= lowest
    assert plot.distribution(data).axes[0].get_xlim()[0] <= lowest
    curves = plot.metric_at_k(data).axes[0]
    assert curves.get_ylim()[0] <= data.systems["x"].curves["nDCG"].min() < 0
