"""Benchmark results as a markdown table, speedup ratios and a JSON file under benchmarks/results/."""

import datetime
import json
import pathlib
import re

RESULTS_DIR = pathlib.Path(__file__).parent / "results"
COLUMNS = ("model", "batch", "dtype", "backend", "median ms", "p90 ms", "vs eager", "vs best inductor", "compile s",
           "peak MiB", "serving MiB", "max abs err", "note")


def header():
    """The markdown table's header and separator lines."""
    return f"| {' | '.join(COLUMNS)} |\n|{'---|' * len(COLUMNS)}"


def markdown_row(row):
    """One result as a markdown table line."""
    cells = (row["label"], row["batch"], row["dtype"], row["backend"], _number(row["median_ms"], ".2f"),
             _number(row["p90_ms"], ".2f"), _number(row["vs_eager"], ".2f", "x"),
             _number(row["vs_best_inductor"], ".2f", "x"), _number(row["compile_s"], ".1f"),
             _number(row["peak_mib"], ".0f"), _number(row["serving_mib"], ".0f"), _number(row["max_abs_error"], ".1e"),
             row["note"].replace("|", "/"))
    return f"| {' | '.join(str(cell) for cell in cells)} |"


def add_ratios(row, group, inductor_backends):
    """Set the row's speedups: eager's median / its median, and the best inductor mode's median / its median.

    `group` holds the rows of the row's (model, batch, dtype) measured so far; the best inductor mode
    is known only once every backend in `inductor_backends` has a row there (a failed one counts).
    """
    timed = {r["backend"]: r["median_ms"] for r in group if r["median_ms"] is not None}
    median = row["median_ms"]
    row["vs_eager"] = timed["eager"] / median if median and "eager" in timed else None
    finished = {r["backend"] for r in group}
    inductors = [timed[b] for b in inductor_backends if b in timed]
    complete = inductors and set(inductor_backends) <= finished
    row["vs_best_inductor"] = min(inductors) / median if median and complete else None


def results_path(kind, device_name, when, directory=RESULTS_DIR):
    """benchmarks/results/<kind>-<device slug>-<date and time>.json; the time keeps two runs of a day apart."""
    slug = re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")
    return pathlib.Path(directory) / f"{kind}-{slug}-{when:%Y-%m-%d-%H%M%S}.json"


def write_json(path, meta, rows):
    """Write the run's description and its rows to `path`, creating the folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**meta, "rows": rows}, indent=1) + "\n")


def now():
    """The local date and time, to the second, for file names and the JSON."""
    return datetime.datetime.now().replace(microsecond=0)


def _number(value, spec, suffix=""):
    """A formatted number, or "-" when there is none."""
    return "-" if value is None else f"{value:{spec}}{suffix}"
