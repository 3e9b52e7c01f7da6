"""Speedup over eager as grouped bars: one group per (model, batch, dtype), one bar per backend.

latency.py draws its own run's chart. Runs split over several commands are merged into one chart with

    python benchmarks/chart.py benchmarks/results/latency-*.json --output benchmarks/results/latency.png

The title comes from the first file (GPU, torch version). Needs matplotlib.
"""

import argparse
import json
import pathlib

from backends import BACKENDS


def draw(rows, order, title, path):
    """Write a PNG of every row's speedup over eager to `path`, bars in `order`; False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    groups = list(dict.fromkeys((r["label"], r["batch"], r["dtype"]) for r in rows))
    backends = [name for name in order if name != "eager" and any(r["backend"] == name for r in rows)]
    speedup = {(r["label"], r["batch"], r["dtype"], r["backend"]): r["vs_eager"] for r in rows}
    width = 0.8 / max(1, len(backends))
    figure, axes = plt.subplots(figsize=(max(6.0, 1.3 * len(groups) * max(1, len(backends)) / 2), 4.8))
    for index, backend in enumerate(backends):
        positions = [g + (index - (len(backends) - 1) / 2) * width for g in range(len(groups))]
        heights = [speedup.get((*group, backend)) or 0 for group in groups]  # failed or missing: no bar
        bars = axes.bar(positions, heights, width, label=backend)
        axes.bar_label(bars, labels=[f"{h:.2f}" if h else "" for h in heights], fontsize=6, rotation=90, padding=2)
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_yscale("log")
    axes.set_ylim(top=max([1.0, *(h for h in speedup.values() if h)]) * 3)  # room for the bar labels
    axes.set_xticks(range(len(groups)), [f"{label}\nbatch {batch}, {dtype}" for label, batch, dtype in groups],
                    fontsize=7)
    axes.set_ylabel("speedup over eager (median latency, log scale)")
    axes.set_title(title, fontsize=9)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=150)
    plt.close(figure)
    return True


def title_of(run):
    """The chart title for a run's JSON: GPU and torch version."""
    return f"{run['device_name']}, torch {run['torch']}: speedup over eager"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", type=pathlib.Path, help="latency JSON files written by latency.py")
    parser.add_argument("--output", type=pathlib.Path, required=True, help="the PNG to write")
    args = parser.parse_args()
    runs = [json.loads(path.read_text()) for path in args.results]
    if not draw([row for run in runs for row in run["rows"]], list(BACKENDS), title_of(runs[0]), args.output):
        raise SystemExit("matplotlib is not installed: pip install matplotlib")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
