"""Summaries of GraphNet benchmark records (results.jsonl): Markdown tables
and PNG plots. `python -m disc.bench report RESULTS.jsonl [--out DIR]`.

Figures (docs/graphnet.md defines them):
- correct: outputs within `outputs_match`'s tolerance of eager's.
- fully compiled: correct with no graph break (and, for DISC, no ATen node
  left to eager).
- speedup: eager median / contender median, at one shape; geometric means
  over the samples (or sample-shape pairs) where both ran correctly. When
  the contender was timed in alternation with eager (eager_paired_ms), that
  eager median is the one used.
- compile s: first call minus the steady-state median at the example shape.
- recompiles: graphs compiled at the second and later shapes.
- S(t): geometric mean over samples of a per-sample score at tolerance t:
  the speedup when the output is within t (tol_needed <= t), else the
  penalty p (a failure of any kind scores p at every t).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from collections import defaultdict

TOLERANCES = [10.0 ** e for e in range(-8, 0)]


def _load_one(path: str):
    meta, records = {}, []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if "meta" in r:
                meta = r["meta"]
            else:
                records.append(r)
    return meta, records


def load_records(*paths: str):
    """Records of one run, or of several runs merged: the first run's
    records and meta, plus each later run's records of (sample, contender)
    pairs the runs before it lack -- a contender timed in a run of its own,
    or a run resumed on the samples an interrupted one did not reach. A
    later run's eager records are dropped where an earlier run has that
    sample's eager: speedups over eager come from each contender's own
    paired eager median, so contenders timed in separate runs still compare
    fairly. The merged meta names every run's command and adds up their
    wall times."""
    meta, records = _load_one(paths[0])
    for position, path in enumerate(paths[1:], start=1):
        more_meta, more = _load_one(path)
        have_pairs = {(r["sample"], r["contender"]) for r in records}
        have = {r["contender"] for r in records}
        added = [r for r in more if (r["sample"], r["contender"]) not in have_pairs]
        if not any(r["contender"] != "eager" for r in added):
            raise SystemExit(f"{path}: no (sample, contender) that "
                             f"{', '.join(paths[:position])} lacks")
        records += added
        cfg = meta.setdefault("config", {})
        new = sorted({r["contender"] for r in added} - {"*"})
        cfg["compilers"] = list(cfg.get("compilers", [])) + [c for c in new if c not in have]
        if "runs" not in meta:
            meta["runs"] = [{"command": meta.get("command", paths[0]),
                             "contenders": sorted(have - {"*"})}]
        meta["runs"].append({"command": more_meta.get("command", path), "contenders": new})
        if meta.get("wall_s") and more_meta.get("wall_s"):
            meta["wall_s"] += more_meta["wall_s"]
    return meta, records


def geomean(values):
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


class Table:
    """Records indexed by (sample, contender, shape)."""

    def __init__(self, records):
        self.by_key = {}
        self.samples = sorted({r["sample"] for r in records})
        self.contenders = []
        for r in records:
            if r["contender"] == "*":  # the sample itself failed: every contender
                continue
            self.by_key[(r["sample"], r["contender"], r["shape_index"])] = r
            if r["contender"] not in self.contenders:
                self.contenders.append(r["contender"])
        self.sample_failures = {r["sample"]: r for r in records if r["contender"] == "*"}
        order = {"eager": 0, "inductor": 1, "disc": 2}
        self.contenders.sort(key=lambda c: order.get(c, 9))
        self.shapes = defaultdict(set)
        for (s, _c, i) in self.by_key:
            self.shapes[s].add(i)

    def get(self, sample, contender, shape=0):
        return self.by_key.get((sample, contender, shape))

    def ok(self, sample, contender, shape=0):
        r = self.get(sample, contender, shape)
        return r is not None and r["outcome"] == "correct"

    def speedup(self, sample, contender, over="eager", shape=0):
        """`over`'s time / `contender`'s. A compiled contender timed in
        alternation with eager (eager_paired_ms in its record) is compared
        with that eager time from the same stretch; two compiled contenders
        then compare through their speedups over their paired eager."""
        if not (self.ok(sample, contender, shape) and self.ok(sample, over, shape)):
            return None
        if over != "eager" and contender != "eager":
            mine, theirs = (self.speedup(sample, contender, shape=shape),
                            self.speedup(sample, over, shape=shape))
            return mine / theirs if mine and theirs else None
        r = self.get(sample, contender, shape)
        if over == "eager":
            return self.eager_ms(sample, r, shape) / r["median_ms"]
        return self.get(sample, over, shape)["median_ms"] / r["median_ms"]

    def eager_ms(self, sample, record, shape=0):
        """The eager median `record` is compared with: its paired one when it
        was timed in alternation with eager, else the eager contender's."""
        return record.get("eager_paired_ms") or self.get(sample, "eager", shape)["median_ms"]

    def compiled(self):
        return [c for c in self.contenders if c != "eager"]

    def fully_compiled(self, sample, contender):
        r = self.get(sample, contender)
        return (r is not None and r["outcome"] == "correct" and r.get("graph_breaks", 0) == 0
                and r.get("fallback_nodes", 0) == 0)

    def outcome_counts(self, contender):
        counts = defaultdict(int)
        for s in self.samples:
            r = self.get(s, contender)
            counts[r["outcome"] if r else (self.sample_failures.get(s, {}).get("outcome")
                                           or "missing")] += 1
        return counts

    def score(self, sample, contender, tol, penalty):
        r = self.get(sample, contender)
        e = self.get(sample, "eager")
        if (r is None or e is None or r["outcome"] not in ("correct", "wrong")
                or e["outcome"] != "correct"):
            return penalty
        if r.get("tol_needed", math.inf) > tol:
            return penalty
        return self.eager_ms(sample, r) / r["median_ms"]


def _timing_words(cfg) -> str:
    """How the medians were taken, from the run's config."""
    if cfg.get("min_time"):
        words = (f"medians of at least {cfg.get('trials')} calls (more for fast ones, up to "
                 f"{cfg['min_time']:g} s), each compiled contender timed in alternation with "
                 "eager")
    else:
        words = f"medians of up to {cfg.get('trials')} calls"
    if cfg.get("timing_lock"):
        words += (" (processes run side by side, but timed one at a time under "
                  "`--timing-lock`)")
    return words


def _fmt(x, digits=2, suffix=""):
    if x is None:
        return "-"
    return f"{x:.{digits}f}{suffix}"


def _pct(num, den):
    return f"{num}/{den} ({100.0 * num / den:.0f}%)" if den else "-"


def overall_table(t: Table) -> str:
    rows = ["| contender | correct (example shape) | fully compiled | correct (all shapes) | "
            "geomean speedup vs eager | geomean vs eager, all shapes | geomean vs inductor | "
            "median compile s | recompiles | compile once |",
            "|---|---|---|---|---:|---:|---:|---:|---:|---|"]
    n = len(t.samples)
    for c in t.compiled():
        correct = sum(t.ok(s, c) for s in t.samples)
        full = sum(t.fully_compiled(s, c) for s in t.samples)
        pairs = [(s, i) for s in t.samples for i in sorted(t.shapes[s])
                 if t.ok(s, "eager", i)]
        pairs_ok = sum(t.ok(s, c, i) for s, i in pairs)
        g0 = geomean([t.speedup(s, c) for s in t.samples])
        gall = geomean([t.speedup(s, c, shape=i) for s, i in pairs])
        gind = (geomean([t.speedup(s, c, over="inductor") for s in t.samples])
                if c != "inductor" and "inductor" in t.contenders else None)
        compile_s = [t.get(s, c)["compile_s"] for s in t.samples if t.ok(s, c)]
        recompiles, once, multi = 0, 0, 0
        for s in t.samples:
            shapes = sorted(i for i in t.shapes[s] if i > 0 and t.ok(s, c, i))
            extra = sum(t.get(s, c, i).get("graphs_compiled", 0) for i in shapes)
            recompiles += extra
            if shapes and t.ok(s, c):
                multi += 1
                once += extra == 0
        rows.append(f"| {c} | {_pct(correct, n)} | {_pct(full, n)} | {_pct(pairs_ok, len(pairs))} | "
                    f"{_fmt(g0, suffix='x')} | {_fmt(gall, suffix='x')} | {_fmt(gind, suffix='x')} | "
                    f"{_fmt(statistics.median(compile_s) if compile_s else None, 1)} | "
                    f"{recompiles} | {_pct(once, multi) if multi else '-'} |")
    return "\n".join(rows)


def graph_break_note(t: Table) -> str:
    """Which samples Dynamo splits (the same graph breaks under every
    compiler), how many DISC fallback nodes there are, and which samples
    had calls DISC's compiled code rejected."""
    breaks = sorted({s for s in t.samples for c in t.compiled()
                     if (t.get(s, c) or {}).get("graph_breaks")})
    fallback = sum((t.get(s, "disc") or {}).get("fallback_nodes") or 0 for s in t.samples)
    text = (f"{len(breaks)} samples have graph breaks ({', '.join(breaks)})." if breaks
            else "No sample has a graph break.")
    if "disc" in t.contenders:
        text += f" DISC fallback nodes over all samples: {fallback}."
        rejected = sorted({key[0] for key, r in t.by_key.items()
                           if key[1] == "disc" and (r.get("eager_calls") or 0) > 0})
        if rejected:
            text += (" Samples where DISC's compiled code rejected calls, which then ran "
                     f"in eager (timings partly eager's): {', '.join(rejected)}.")
    return text


def outcome_table(t: Table) -> str:
    from .harness import OUTCOMES

    rows = ["| contender | " + " | ".join(OUTCOMES) + " |",
            "|---|" + "---:|" * len(OUTCOMES)]
    for c in t.contenders:
        counts = t.outcome_counts(c)
        rows.append(f"| {c} | " + " | ".join(str(counts.get(o, 0)) for o in OUTCOMES) + " |")
    return "\n".join(rows)


def category_table(t: Table) -> str:
    comp = t.compiled()
    rows = ["| category | samples | " + " | ".join(
        f"{c} correct | {c} vs eager" for c in comp) + " |",
        "|---|---:|" + "---|---:|" * len(comp)]
    cats = defaultdict(list)
    for s in t.samples:
        cats[s.split("/")[0]].append(s)
    for cat in sorted(cats):
        ss = cats[cat]
        cells = []
        for c in comp:
            cells.append(f"{sum(t.ok(s, c) for s in ss)}/{len(ss)}")
            cells.append(_fmt(geomean([t.speedup(s, c) for s in ss]), suffix="x"))
        rows.append(f"| {cat} | {len(ss)} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _cell(t: Table, s, c, shape=0):
    r = t.get(s, c, shape)
    if r is None:
        f = t.sample_failures.get(s)
        return f"**{f['outcome']}**" if f else "-"
    if r["outcome"] != "correct":
        return f"**{r['outcome']}**"
    text = f"{r['median_ms']:.2f}"
    if c != "eager":
        sp = t.speedup(s, c, shape=shape)
        text += f" ({_fmt(sp)}x)"
    return text


def sample_table(t: Table) -> str:
    comp = t.compiled()
    head = ["sample", "eager ms"] + [f"{c} ms (vs eager)" for c in comp]
    if "disc" in comp and "inductor" in comp:
        head.append("disc vs inductor")
    head += [f"{c} compile s" for c in comp]
    if "disc" in comp:
        head += ["disc nodes compiled / fallback", "disc kernels (ATen ops per kernel)",
                 "disc peak MiB"]
    rows = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for s in t.samples:
        cells = [s, _cell(t, s, "eager")] + [_cell(t, s, c) for c in comp]
        if "disc" in comp and "inductor" in comp:
            cells.append(_fmt(t.speedup(s, "disc", over="inductor"), suffix="x"))
        for c in comp:
            r = t.get(s, c)
            cells.append(_fmt(r.get("compile_s") if r and r["outcome"] == "correct" else None, 1))
        if "disc" in comp:
            r = t.get(s, "disc")
            cells.append(f"{r.get('compiled_nodes', '-')} / {r.get('fallback_nodes', '-')}"
                         if r and "compiled_nodes" in r else "-")
            kernels = r.get("kernels") if r else None
            cells.append(f"{kernels} ({r['compiled_nodes'] / kernels:.1f})" if kernels else "-")
            cells.append(_fmt(r.get("peak_mib") if r else None, 1))
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def shapes_table(t: Table) -> str:
    comp = t.compiled()
    head = ["sample", "shape", "symbols", "eager ms"] + [f"{c} ms" for c in comp] + \
        [f"{c} graphs compiled" for c in comp]
    rows = ["| " + " | ".join(head) + " |", "|---|---:|---|" + "---:|" * (len(head) - 3)]
    for s in t.samples:
        if len(t.shapes[s]) < 2:
            continue
        for i in sorted(t.shapes[s]):
            any_r = next((t.get(s, c, i) for c in t.contenders if t.get(s, c, i)), {})
            symbols = ", ".join(f"{k}={v}" for k, v in (any_r.get("symbols") or {}).items())
            cells = [s, str(i), symbols, _cell(t, s, "eager", i)]
            cells += [_cell(t, s, c, i) for c in comp]
            for c in comp:
                r = t.get(s, c, i)
                cells.append(str(r.get("graphs_compiled", "-")) if r else "-")
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def score_table(t: Table, penalty: float) -> str:
    comp = t.compiled()
    rows = ["| t | " + " | ".join(f"S(t) {c}" for c in comp) + " |",
            "|---|" + "---:|" * len(comp)]
    for tol in TOLERANCES:
        cells = [_fmt(geomean([t.score(s, c, tol, penalty) for s in t.samples]), 3)
                 for c in comp]
        rows.append(f"| 1e{round(math.log10(tol))} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def failures_list(t: Table) -> str:
    lines = []
    for s in t.samples:
        if s in t.sample_failures:
            f = t.sample_failures[s]
            lines.append(f"- {s} (all contenders): {f['outcome']}: {f.get('detail', '')[:300]}")
        for c in t.contenders:
            for i in sorted(t.shapes[s]):
                r = t.get(s, c, i)
                if r and r["outcome"] != "correct":
                    detail = " ".join(str(r.get("detail", "")).split())[:300]
                    lines.append(f"- {s} / {c} / shape {i}: {r['outcome']}: {detail}")
    notes = set()
    for r in t.by_key.values():
        for n in r.get("notes") or []:
            notes.add((r["sample"], n))
    for s, n in sorted(notes):
        lines.append(f"- {s}: note: {n[:300]}")
    return "\n".join(lines) if lines else "(none)"


def plot(t: Table, out_dir: str, penalty: float, prefix: str = "") -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    def save(fig, ax, name):
        ax.legend()
        fig.tight_layout()
        path = os.path.join(out_dir, prefix + name)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path

    files = []
    comp = t.compiled()
    if comp:
        fig, ax = plt.subplots(figsize=(9, 0.32 * len(t.samples) + 1.5))
        height = 0.8 / len(comp)
        for k, c in enumerate(comp):
            ys = [j + k * height for j in range(len(t.samples))]
            xs = [t.speedup(s, c) or 0 for s in t.samples]
            ax.barh(ys, xs, height=height, label=c)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_yticks([j + 0.4 - height / 2 for j in range(len(t.samples))])
        ax.set_yticklabels(t.samples, fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("speedup over eager at the example shape (0 = not correct)")
        ax.invert_yaxis()
        files.append(save(fig, ax, "speedup.png"))

        fig, ax = plt.subplots(figsize=(6, 4))
        grid = [10.0 ** (e / 4) for e in range(-32, 1)]
        for c in comp:
            ax.plot(grid, [geomean([t.score(s, c, tol, penalty) for s in t.samples])
                           for tol in grid], label=c)
        ax.set_xscale("log")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xlabel("tolerance t")
        ax.set_ylabel(f"S(t) (failure penalty {penalty})")
        files.append(save(fig, ax, "score.png"))
    return files


def summary_markdown(meta: dict, records: list) -> str:
    t = Table(records)
    penalty = meta.get("penalty", 0.1)
    m = meta.get("machine", {})
    cfg = meta.get("config", {})
    lines = [f"# GraphNet benchmark, {m.get('date', '')}", ""]
    lines.append(f"Machine: {m.get('cpu', '?')} ({m.get('cpu_flags', '')}), {m.get('cores', '?')} "
                 f"cores; {cfg.get('threads', '?')} threads for every contender; device "
                 f"{m.get('device', 'cpu')}{' (' + m['gpu'] + ')' if m.get('gpu') else ''}; "
                 f"torch {m.get('torch', '?')}, Python {m.get('python', '?')}, DISC "
                 f"{m.get('disc', '?')}.")
    lines.append(f"Run: `{meta.get('command', '')}`; {len(t.samples)} samples, warm-up "
                 f"{cfg.get('warmup')}, {_timing_words(cfg)}, "
                 f"dynamic={cfg.get('dynamic')}"
                 f"{', size-oblivious' if cfg.get('size_oblivious') else ''}"
                 f"{', capture-scalars' if cfg.get('capture_scalars') else ''}, "
                 f"shapes per sample {cfg.get('shapes')}"
                 f"{', --generalize' if cfg.get('generalize') else ''}"
                 + (f"; wall time {meta['wall_s'] / 60:.0f} min" if meta.get("wall_s") else "")
                 + ".")
    if meta.get("runs"):
        lines.append("Merged from separate runs, each contender timed against its own "
                     "paired eager: " + "; ".join(
                         f"`{run['command']}` ({', '.join(run['contenders'])})"
                         for run in meta["runs"]) + ".")
    lines += ["", "## Overall", "", overall_table(t), "",
              "Fully compiled: correct, with no Dynamo graph break and (DISC) no ATen node left "
              "to eager. " + graph_break_note(t), "", "Outcomes at the example shape:", "",
              outcome_table(t), "", "## Per category", "", category_table(t), "",
              "## Per sample (example shape)", "", sample_table(t), ""]
    if any(len(v) > 1 for v in t.shapes.values()):
        lines += ["## Shape variants", "", shapes_table(t), ""]
    lines += [f"## S(t): speedup score over tolerance (failure penalty {penalty})", "",
              score_table(t, penalty), "", "## Failures and notes", "", failures_list(t), ""]
    return "\n".join(lines)


def write_report(results_path, out_dir: str, meta_override=None, name: str = "") -> str:
    """Writes out_dir/summary.md and the plots (NAME.md, NAME-speedup.png,
    NAME-score.png with `name`); returns the Markdown. `results_path`: one
    results.jsonl or a list of them (load_records merges them)."""
    paths = [results_path] if isinstance(results_path, str) else list(results_path)
    meta, records = load_records(*paths)
    meta.update(meta_override or {})
    os.makedirs(out_dir, exist_ok=True)
    text = summary_markdown(meta, records)
    files = plot(Table(records), out_dir, meta.get("penalty", 0.1), f"{name}-" if name else "")
    if files:
        text += "\nPlots: " + ", ".join(f"![{os.path.basename(f)}]({os.path.basename(f)})"
                                        for f in files) + "\n"
    with open(os.path.join(out_dir, f"{name}.md" if name else "summary.md"), "w") as f:
        f.write(text)
    return text


README_BEGIN = "<!-- graphnet-results:begin (python -m disc.bench report ... --readme README.md) -->"
README_END = "<!-- graphnet-results:end -->"


def readme_section(meta: dict, records: list, source: str) -> str:
    """The README's GraphNet results: the machine, the overall table and the
    outcome counts, with a pointer to the full report."""
    t = Table(records)
    m, cfg = meta.get("machine", {}), meta.get("config", {})
    return "\n".join([
        f"{len(t.samples)} samples of `../shared/graphnet/samples`, {m.get('cpu', '?')} "
        f"({m.get('cores', '?')} cores), {cfg.get('threads', '?')} threads for every contender, "
        f"torch {m.get('torch', '?')}, {m.get('date', '')}; `dynamic={cfg.get('dynamic')}`"
        f"{', `--size-oblivious`' if cfg.get('size_oblivious') else ''}"
        f"{', `--capture-scalars`' if cfg.get('capture_scalars') else ''}, "
        f"shapes per sample: {cfg.get('shapes')}; " + _timing_words(cfg) + ". "
        f"Full report: [{source}]({source}).",
        "", overall_table(t), "", outcome_table(t)])


def update_readme(readme: str, section: str) -> None:
    with open(readme) as f:
        text = f.read()
    if README_BEGIN not in text or README_END not in text:
        raise SystemExit(f"{readme}: no {README_BEGIN} ... {README_END} markers")
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    with open(readme, "w") as f:
        f.write(head + README_BEGIN + "\n" + section + "\n" + README_END + tail)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m disc.bench report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+",
                        help="a results.jsonl written by `disc.bench graphnet`; more than one "
                             "merges runs: the first one's records, plus the contenders a "
                             "later run adds (e.g. Inductor timed in a run of its own)")
    parser.add_argument("--out", help="folder for summary.md and plots (default: beside it)")
    parser.add_argument("--name", default="",
                        help="write NAME.md, NAME-speedup.png, NAME-score.png (default: summary.md, ...)")
    parser.add_argument("--readme", help="also rewrite this README's GraphNet results section")
    parser.add_argument("--link", help="the report's path as the README links it")
    args = parser.parse_args(argv)
    out = args.out or os.path.dirname(os.path.abspath(args.results[0]))
    print(write_report(args.results, out, name=args.name))
    if args.readme:
        meta, records = load_records(*args.results)
        report_file = os.path.join(out, f"{args.name}.md" if args.name else "summary.md")
        update_readme(args.readme, readme_section(meta, records, args.link or report_file))
    return 0


if __name__ == "__main__":
    sys.exit(main())
