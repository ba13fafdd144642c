"""Static figures for papers, with matplotlib: the report's charts as PNG, SVG or PDF.

Every function takes the collected :class:`~rankwise.report.data.ReportData` (from
:func:`rankwise.report.data.collect`, or :func:`figures` does both) and returns a matplotlib
``Figure`` (drawn on ``ax`` when one is given). Figures are made without pyplot (no global
state, no display needed) under a local style: light grid, no top/right spines, the report's
colours, sizes readable at one column width.

matplotlib is imported when a function runs (``pip install rankwise[plot]``).

* :func:`metric_at_k`: mean nDCG@K, P@K or R@K for K = 1 … 100, one line per system;
* :func:`precision_recall`: trec_eval's interpolated precision-recall curve; for one system
  its per-query curves are drawn faintly behind the mean (Jarvelin's "noise across users" plot
  of the first founding article);
* :func:`distribution`: per-query values of a measure per system (box plot, violin or
  histogram);
* :func:`scatter`: per-query values of two systems against each other, with the diagonal;
* :func:`summary`: means with confidence intervals and significance markers;
* :func:`save_figures` / :func:`figures`: all of them, into a folder, in several formats.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np

#: The report's colours (Tableau 10), one per system in order.
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#7f7f7f")
LINESTYLES = ("-", "--", ":", "-.")
STYLE = {
    "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
    "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.spines.top": False,
    "axes.spines.right": False, "axes.grid": True, "grid.color": "#e6e8ec", "grid.linewidth": 0.6,
    "axes.edgecolor": "#5b6475", "lines.linewidth": 1.6, "figure.dpi": 100,
    "savefig.bbox": "tight", "svg.fonttype": "none", "pdf.fonttype": 42,
    "text.parse_math": False,  # run names and measures are text: "a$b$" is no formula
}
FORMATS = ("png", "svg", "pdf")
#: The figures :func:`save_figures` writes, by kind.
KINDS = ("summary", "at-k", "pr", "distribution", "histogram", "scatter")
#: Characters an XML 1.0 document cannot hold.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
#: Most bytes of a file name before its hash and format (file systems allow 255 in all).
MAX_STEM_BYTES = 120
#: Characters of a run name on one line of a figure: a longer name (a path, say) is drawn on
#: several lines, cut after one of ``NAME_BREAKS`` where one comes, so that it leaves the plot
#: its room (a 40-character name squeezed the summary's bars to nothing).
NAME_LINE_CHARS = 28
NAME_BREAKS = frozenset("/\\.-_ ,:;=+|")
#: A legend whose labels are longer (or on several lines) goes below the plot, not on it.
LEGEND_INSIDE_CHARS = 24
#: About the width of a character and the height of a line of 8-point text, in inches.
CHAR_INCHES, LINE_INCHES = 0.065, 0.15


def _style():
    import matplotlib

    return matplotlib.rc_context(STYLE)


def _figure(ax, size: tuple[float, float]):
    from matplotlib.figure import Figure

    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.add_subplot()


def _color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _linestyle(i: int) -> str:
    return LINESTYLES[(i // len(PALETTE)) % len(LINESTYLES)]


def _systems(data, systems: Sequence[str] | None) -> list[tuple[int, str]]:
    names = list(data.systems)
    chosen = names if systems is None else list(systems)
    unknown = [s for s in chosen if s not in names]
    if unknown:
        from .errors import InputError

        raise InputError(f"not a system of the report ({', '.join(names)})", source="plot",
                         value=", ".join(unknown))
    return [(names.index(s), s) for s in chosen]


def metric_at_k(data, family: str = "nDCG", systems: Sequence[str] | None = None, ax=None):
    """Mean ``family``@K for K = 1 … max_k, one line per system.

    Parameters
    ----------
    data : ReportData
    family : str
        ``"nDCG"``, ``"P"`` or ``"R"``.
    systems : sequence of str, optional
        Which systems (default all).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    with _style():
        own = ax is None
        fig, ax = _figure(ax, (3.4, 2.5))
        ks = data.cutoffs
        lines = [ax.plot(ks, data.systems[name].curves[family], color=_color(i),
                         linestyle=_linestyle(i), label=_shown(name))[0]
                 for i, name in _systems(data, systems)]
        lowest = np.nanmin(np.concatenate([[0.0]] + [line.get_ydata() for line in lines]))
        ax.set(xlabel="K (cutoff)", ylabel=f"mean {family}@K", xlim=(1, ks[-1]),
               ylim=(1.05 * lowest, None))  # from 0, or below it where a mean is negative
        ax.set_title(f"{family}@K")
        _legend(ax, lines, own)
    return fig


def precision_recall(data, system: str | None = None, sample: bool = True, ax=None):
    """Interpolated precision at recall 0, 0.1, …, 1 (trec_eval's ``IPrec``).

    With ``system`` None: the mean curve of every system. With one system: its per-query curves
    (the report's sample of queries) faintly, the mean on top in red.

    Returns
    -------
    matplotlib.figure.Figure
    """
    with _style():
        own = ax is None
        fig, ax = _figure(ax, (3.4, 2.7))
        levels = data.recall_levels
        if system is None:
            lines = [ax.plot(levels, data.systems[name].pr_mean, color=_color(i),
                             linestyle=_linestyle(i), marker="o", markersize=2.5,
                             label=_shown(name))[0]
                     for i, name in _systems(data, None)]
            ax.set_title("Mean interpolated precision-recall")
            _legend(ax, lines, own)
        else:
            ((i, name),) = _systems(data, [system])
            s = data.systems[name]
            if sample and len(s.pr_sample):
                from matplotlib.collections import LineCollection

                curves = [np.column_stack([levels, curve]) for curve in s.pr_sample]
                ax.add_collection(LineCollection(curves, colors=_color(i), alpha=0.15,
                                                 linewidths=0.7, label="_queries"))
            ax.plot(levels, s.pr_mean, color="#c0392b", linewidth=2.2,
                    label=f"mean over {len(s.query_ids)} queries")
            ax.set_title(f"{_shown(name)}: mean and {len(s.pr_sample)} queries")
            ax.legend(frameon=False, loc="upper right")
        ax.set(xlabel="recall", ylabel="interpolated precision", xlim=(0, 1), ylim=(0, 1.02))
    return fig


def distribution(data, measure: str | None = None, kind: str = "box",
                 systems: Sequence[str] | None = None, ax=None):
    """Per-query values of ``measure`` per system: ``kind`` = ``"box"`` (box 25th-75th
    percentile, whiskers 10th-90th, median line, mean dot), ``"violin"`` or ``"hist"``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .errors import InputError

    measure = measure or data.measures[0]
    if kind not in ("box", "violin", "hist"):
        raise InputError("kind must be box, violin or hist", source="plot", value=kind)
    chosen = _systems(data, systems)
    columns = [_defined(data.values(measure, name)[1]) for _, name in chosen]
    with _style():
        own = ax is None
        labels = [_shown(name) for _, name in chosen]
        fig, ax = _figure(ax, (3.4, 2.5) if kind == "hist" else (  # labels on the left
            3.4 + max(0.0, _text_extent(labels)[0] * CHAR_INCHES - 1.2),
            0.6 + sum(max(0.45, 0.1 + LINE_INCHES * (label.count("\n") + 1))
                      for label in labels)))
        if kind == "hist":
            low, high = _range(data, measure, columns)
            bins = np.linspace(low, high, 21)
            outlines = []
            for (i, _), v, label in zip(chosen, columns, labels):
                weights = np.full(len(v), 1.0 / len(v)) if len(v) else None
                outlines += ax.hist(v, bins=bins, weights=weights, histtype="step",
                                    color=_color(i), linestyle=_linestyle(i), linewidth=1.4,
                                    label=label)[2]
            ax.set(xlabel=measure, ylabel="share of queries")
            _legend(ax, outlines, own)
        else:
            positions = np.arange(len(chosen))[::-1]
            if kind == "violin":
                parts = ax.violinplot([v if len(v) else [np.nan] for v in columns],
                                      positions=positions, showmedians=True, **_horizontal())
                for body, (i, _) in zip(parts["bodies"], chosen):
                    body.set_facecolor(_color(i))
                    body.set_alpha(0.35)
            else:
                stats = [_box_stats(v, label) for v, label in zip(columns, labels)]
                boxes = ax.bxp(stats, positions=positions, showmeans=True, **_horizontal(),
                               showfliers=False, patch_artist=True, widths=0.55,
                               meanprops={"marker": "o", "markerfacecolor": "white",
                                          "markeredgecolor": "#1d2330", "markersize": 4},
                               medianprops={"color": "#1d2330"})
                for patch, (i, _) in zip(boxes["boxes"], chosen):
                    patch.set_facecolor(_color(i))
                    patch.set_alpha(0.45)
            ax.set_yticks(positions, labels)
            ax.set(xlabel=measure)
            ax.grid(axis="y", visible=False)
        ax.set_title(f"{measure} per query")
    return fig


def scatter(data, measure: str | None = None, x: str | None = None, y: str | None = None,
            ax=None):
    """Per-query values of two systems against each other (queries both evaluated), with the
    diagonal; points above it are queries where ``y`` scores higher. Defaults: ``x`` the first
    system that is not the baseline, ``y`` the baseline.

    Returns
    -------
    matplotlib.figure.Figure
    """
    measure = measure or data.measures[0]
    names = list(data.systems)
    y = y or data.baseline or names[0]
    x = x or next((n for n in names if n != y), y)
    _systems(data, [x, y])
    _, a, b = data.paired(measure, x, y)
    title = f"{measure}: {int((a > b).sum())} higher for {_shown(x)}, " \
            f"{int((a < b).sum())} for {_shown(y)}"
    with _style():
        # taller and wider by the lines of the title, the x label and the (upright) y label
        fig, ax = _figure(ax, (3.0 + LINE_INCHES * _shown(y).count("\n"), 3.0 + LINE_INCHES * (
            title.count("\n") + _shown(x).count("\n"))))
        low, high = _range(data, measure, [a, b])
        ax.plot([low, high], [low, high], color="#9aa1ad", linestyle="--", linewidth=0.8)
        colors = np.where(a > b, _color(names.index(x)),
                          np.where(a < b, _color(names.index(y)), "#7f7f7f"))
        ax.scatter(a, b, s=9, c=colors, alpha=0.6 if len(a) < 2000 else 0.3, linewidths=0)
        ax.set(xlabel=_shown(x), ylabel=_shown(y), xlim=(low, high), ylim=(low, high),
               aspect="equal")
        ax.set_title(title, fontsize=9)
    return fig


def summary(data, measure: str | None = None, ax=None):
    """Means with their confidence intervals (the comparison's, over the queries compared) and
    the significance markers, one bar per system.

    Returns
    -------
    matplotlib.figure.Figure
    """
    measure = measure or data.measures[0]
    chosen = _systems(data, None)
    entries = [data.summary[measure][name] for _, name in chosen]
    labels = [f"{data.systems[n].label} {_shown(n)}" for _, n in chosen]
    with _style():
        fig, ax = _figure(ax, _summary_size(len(chosen), labels))
        means = np.array([e["compared_mean"] for e in entries], dtype=float)
        low = np.array([e["ci_low"] for e in entries], dtype=float)
        high = np.array([e["ci_high"] for e in entries], dtype=float)
        err = np.vstack([np.nan_to_num(means - low), np.nan_to_num(high - means)])
        x = np.arange(len(chosen))
        ax.bar(x, means, color=[_color(i) for i, _ in chosen], alpha=0.8, width=0.65)
        ax.errorbar(x, means, yerr=err, fmt="none", ecolor="#1d2330", capsize=3, linewidth=1)
        for xi, e, top in zip(x, entries, np.nan_to_num(high, nan=0.0)):
            if e["markers"]:
                ax.annotate(e["markers"], (xi, top), textcoords="offset points", xytext=(0, 2),
                            ha="center", fontsize=8, color="#a01e1e")
        ax.set_xticks(x, labels, rotation=30, ha="right")
        ax.set(ylabel=f"mean {measure}")
        ax.grid(axis="x", visible=False)
        ax.set_title(measure)
    return fig


def save_figures(data, folder: str | Path, formats: Sequence[str] = FORMATS,
                 dpi: int = 200, kinds: Sequence[str] = KINDS) -> list[Path]:
    """The report's figures into ``folder`` in each format; returns the paths.

    Files (``kinds`` chooses among them): ``summary-<measure>``, ``at-k-<family>``,
    ``pr-all`` and ``pr-<system>``, ``distribution-<measure>``, ``histogram-<measure>`` and,
    with two or more systems, ``scatter-<measure>`` (against the baseline). Characters other
    than letters, digits and ``-_.@=`` become ``_`` and a name is cut after 120 bytes; a name
    cut, and names that would then be the same file (ignoring case), each get ``-`` and 8 hex
    digits of a hash of the unchanged name.
    """
    from .errors import InputError

    bad = [f for f in formats if f not in FORMATS] + [k for k in kinds if k not in KINDS]
    if bad:
        raise InputError(f"formats must be among {', '.join(FORMATS)} and kinds among "
                         f"{', '.join(KINDS)}", source="plot", value=", ".join(bad))
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    made = []  # (kind, name, figure): the file is <kind><name>
    if "summary" in kinds:
        made += [("summary-", m, summary(data, m)) for m in data.measures]
    if "at-k" in kinds:
        made += [("at-k-", family, metric_at_k(data, family))
                 for family in next(iter(data.systems.values())).curves]
    if "pr" in kinds:
        made.append(("pr-all", "", precision_recall(data)))
        made += [("pr-", name, precision_recall(data, name)) for name in data.systems]
    if "distribution" in kinds:
        made += [("distribution-", m, distribution(data, m)) for m in data.measures]
    if "histogram" in kinds:
        made += [("histogram-", m, distribution(data, m, kind="hist")) for m in data.measures]
    if "scatter" in kinds and len(data.systems) > 1:
        made += [("scatter-", m, scatter(data, m)) for m in data.measures]
    paths = []
    stems = _file_names([(kind, name) for kind, name, _ in made])
    for stem, (_, _, fig) in zip(stems, made):
        for fmt in formats:
            path = folder / f"{stem}.{fmt}"
            metadata = {"Software": None} if fmt == "png" else \
                {"Date": None} if fmt == "svg" else {"CreationDate": None}
            with _style():
                fig.savefig(path, dpi=dpi, metadata=metadata)
            paths.append(path)
    return paths


def figures(qrels: Any, runs: Any, folder: str | Path, measures: Sequence[str] | None = None,
            baseline: str | None = None, conventions: Any = None,
            formats: Sequence[str] = FORMATS, dpi: int = 200, kinds: Sequence[str] = KINDS,
            **options: Any) -> list[Path]:
    """Evaluate ``runs`` (as :func:`rankwise.report.data.collect`) and write the figures into
    ``folder``; returns the paths."""
    from .report.data import collect

    data = collect(qrels, runs, measures, baseline, conventions, **options)
    return save_figures(data, folder, formats, dpi, kinds)


def _shown(name: str) -> str:
    """A run name as the figures draw it: the characters XML 1.0 cannot hold (NUL and the other
    control characters but tab, line feed and carriage return) become U+FFFD, as one of them
    makes an SVG file that does not open; a name longer than :data:`NAME_LINE_CHARS` is
    drawn on several lines (no character is left out: the lines joined are the name); a line
    that holds a character that can reorder the text around it (:func:`_reorders`) stands
    between U+2068 and U+2069 (:func:`rankwise.messages.isolated`), so that the figure's own
    words stay in their order.

    >>> print(ascii(_shown("bm25")), ascii(_shown("x\\u202e")))
    'bm25' '\\u2068x\\u202e\\u2069'
    """
    from .messages import isolated

    lines = _name_lines(_NOT_XML.sub("\ufffd", name))
    return "\n".join(isolated(line) if _reorders(line) else line for line in lines)


#: Bidi classes of the characters that reorder the text around them: right-to-left letters,
#: Arabic digits, embeddings, overrides, isolates and their ends, paragraph separators.
_REORDERING = frozenset({"R", "AL", "AN", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI",
                         "FSI", "PDI", "B"})


def _reorders(text: str) -> bool:
    """Whether ``text`` holds a character of :data:`_REORDERING`: text drawn next to it (SVG
    in a browser, and matplotlib's own layout from 3.11) would be laid out in another order,
    e.g. after a right-to-left override (U+202E) the rest of a title reads backwards."""
    import unicodedata

    return any(unicodedata.bidirectional(c) in _REORDERING for c in text)


def _name_lines(name: str) -> list[str]:
    """``name`` cut into lines of at most :data:`NAME_LINE_CHARS` characters, each cut after
    the last of :data:`NAME_BREAKS` that leaves a line that long, else after that many, moved
    back to keep an accent with its letter and an emoji sequence (joined by U+200D) whole."""
    import unicodedata

    lines = []
    for part in name.split("\n"):
        while len(part) > NAME_LINE_CHARS:
            cut = next((i + 1 for i in range(NAME_LINE_CHARS - 1, 0, -1)
                        if part[i] in NAME_BREAKS), NAME_LINE_CHARS)
            while cut > 1 and (unicodedata.combining(part[cut])
                               or "\u200d" in part[cut - 1:cut + 1]):
                cut -= 1
            lines.append(part[:cut])
            part = part[cut:]
        lines.append(part)
    return lines


def _text_extent(labels: list[str]) -> tuple[int, int]:
    """(characters of the longest line, lines in all) of figure texts."""
    lines = [line for label in labels for line in label.split("\n")]
    return max(map(len, lines), default=0), len(lines)


def _summary_size(bars: int, labels: list[str]) -> tuple[float, float]:
    """The summary's size in inches: 0.55 a bar, and room for its tick labels, drawn at 30
    degrees (a block of w x h inches reaches w cos 30 + h sin 30 across and w sin 30 +
    h cos 30 down; blocks a apart lie a sin 30 apart, so a label of h inches needs 2h a bar);
    labels of the usual length fit the base size (0.9 + 0.55 a bar x 2.5)."""
    chars = _text_extent(labels)[0]
    lines = max((label.count("\n") + 1 for label in labels), default=1)
    per_bar = max(0.55, 2 * lines * LINE_INCHES)
    across = chars * CHAR_INCHES * 0.866 + lines * LINE_INCHES * 0.5
    down = chars * CHAR_INCHES * 0.5 + lines * LINE_INCHES * 0.866
    return (max(0.9, across) + per_bar * bars, 2.5 + max(0.0, down - 0.5))


def _legend(ax, artists: list, own: bool) -> None:
    """A legend of every system, its artists given explicitly: matplotlib's own choice leaves
    out labels that start with '_', so a run named '_bm25' would be missing. In a figure of
    its own (``own``) a legend of labels longer than :data:`LEGEND_INSIDE_CHARS` goes below
    the plot, the figure made taller by its lines."""
    labels = [artist.get_label() for artist in artists]
    widest, lines = _text_extent(labels)
    if not own or (widest <= LEGEND_INSIDE_CHARS and lines == len(labels)):
        ax.legend(artists, labels, frameon=False)
        return
    fig = ax.figure
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + 0.15 + lines * LINE_INCHES)
    fig.legend(artists, labels, frameon=False, loc="outside lower center")


def _horizontal() -> dict[str, Any]:
    """Horizontal boxes and violins: ``orientation`` from matplotlib 3.10, ``vert`` before."""
    import matplotlib

    major, minor = (int(x) for x in matplotlib.__version__.split(".")[:2])
    return {"orientation": "horizontal"} if (major, minor) >= (3, 10) else {"vert": False}


def _defined(values: np.ndarray) -> np.ndarray:
    return values[~np.isnan(values)]


def _range(data, measure: str, columns) -> tuple[float, float]:
    """The axis of ``measure``: the report's (its bounds, widened to the values outside
    them)."""
    from .measures import parse_measure
    from .report.html import value_range

    values = np.concatenate([np.asarray(c, dtype=float) for c in columns] or [np.zeros(0)])
    return value_range(values, parse_measure(measure).spec.bounds)


def _box_stats(values: np.ndarray, label: str) -> dict[str, Any]:
    if len(values) == 0:
        values = np.array([np.nan])
    p10, q1, med, q3, p90 = np.nanquantile(values, [0.1, 0.25, 0.5, 0.75, 0.9])
    return {"label": label, "whislo": p10, "q1": q1, "med": med, "q3": q3, "whishi": p90,
            "mean": float(np.nanmean(values)), "fliers": []}


def _file_names(names: list[tuple[str, str]]) -> list[str]:
    """File names of the (kind, name) figures: :func:`_file_name` of ``kind + name``, cut to
    :data:`MAX_STEM_BYTES` bytes of UTF-8 (a longer name is refused by the file system); where
    one was cut, or two are the same file (ignoring case, as some file systems do), each is
    followed by ``-`` and 8 hex digits of the SHA-1 of its kind and unchanged name.

    >>> _file_names([("pr-", "a|b"), ("pr-", "a,b"), ("pr-", "c")])
    ['pr-a_b-9b4c2916', 'pr-a_b-a70b07fd', 'pr-c']
    """
    import hashlib
    from collections import Counter

    stems = [_file_name(kind + name) for kind, name in names]
    cut = [stem.encode()[:MAX_STEM_BYTES].decode(errors="ignore") for stem in stems]
    taken = Counter(stem.casefold() for stem in cut)
    return [short if short == stem and taken[short.casefold()] == 1 else
            short + "-" + hashlib.sha1(f"{kind}\0{name}".encode()).hexdigest()[:8]
            for short, stem, (kind, name) in zip(cut, stems, names)]


def _file_name(stem: str) -> str:
    """A file name from a measure or system name: characters other than letters, digits, and
    ``-_.@=`` become ``_``."""
    return "".join(c if c.isalnum() or c in "-_.@=" else "_" for c in stem)
