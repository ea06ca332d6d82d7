"""Tables (Markdown), JSON and plots (matplotlib, PNG) from run results."""
import json
import math
import os

from .runner import aggregate


def fmt_size(x):
    """1024 -> 1K, 4194304 -> 4M; other values as they are."""
    if isinstance(x, int):
        for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
            if x >= (1 << shift) and x % (1 << shift) == 0:
                return "%d%s" % (x >> shift, unit)
        return str(x)
    return str(x)


def fmt_val(v):
    if v is None:
        return "—"
    if abs(v) >= 1e6:
        return "%.3g" % v
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def advantage(ref, peer, better):
    """How many times better `ref` is than `peer` (>1: ref better)."""
    if ref is None or peer is None or ref <= 0 or peer <= 0:
        return None
    return peer / ref if better == "lower" else ref / peer


def summarize(cases, results, labels, reference, stat="median"):
    """Per case: medians (or with stat "best" the best of the repeats) per
    config and x, the reference's advantage over each other config and over
    the best of them. Returns a list of dicts."""
    out = []
    for case in cases:
        slots = results.get(case.id, {})
        have = [l for l in labels if l in slots]
        med, extras, failures, notes = {}, {}, {}, {}
        for l in have:
            med[l], extras[l] = aggregate(slots[l], stat, case.better)
            failures[l] = slots[l]["failures"]
            if slots[l].get("notes"):
                notes[l] = slots[l]["notes"]
        xs = []
        for l in have:
            for x in med[l]:
                if x not in xs:
                    xs.append(x)
        if not case.categorical:
            xs.sort()
        peers = [l for l in have if l != reference]
        ref_ok = reference in have
        rows = []
        for x in xs:
            vals = {l: med[l].get(x) for l in have}
            row = {"x": x, "values": vals}
            cand = [(vals[p], p) for p in peers if vals[p] is not None]
            if cand:
                best = min(cand) if case.better == "lower" else max(cand)
                row["best_peer"], row["best_peer_value"] = best[1], best[0]
            if ref_ok:
                row["advantage"] = {p: advantage(vals[reference], vals[p], case.better)
                                    for p in peers}
                if cand:
                    row["advantage_best"] = advantage(vals[reference], row["best_peer_value"],
                                                      case.better)
            rows.append(row)
        out.append({"case": case.describe(), "labels": have, "reference": reference if ref_ok
                    else None, "rows": rows, "extras": extras, "failures": failures,
                    "notes": notes, "runs": {l: len(slots[l]["runs"]) for l in have}})
    return out


def markdown(summary, meta, ref_name="Locus"):
    """The report as Markdown text."""
    lines = ["# %s" % meta.get("title", "Locus benchmark comparison"), ""]
    for k in ("note", "date", "host", "cores", "suites", "repeats", "stat", "quick", "cluster",
              "placement", "exit_grace_s", "run_seconds", "command"):
        if k in meta:
            v = meta[k]
            if isinstance(v, dict):
                v = ", ".join("%s %s" % kv for kv in v.items())
            lines.append("- %s: %s" % (k, v))
    if meta.get("mpis"):
        lines += ["", "| MPI | version | launcher |", "|---|---|---|"]
        for m in meta["mpis"]:
            lines.append("| %s | %s | `%s` |" % (m["name"], m.get("version", ""), m["launcher"]))
    if meta.get("variants"):
        lines += ["", "| config | launcher options | environment |", "|---|---|---|"]
        for label, spec in meta["variants"].items():
            lines.append("| %s | `%s` | `%s` |" % (label, " ".join(spec.get("args", [])) or "—",
                                                   " ".join("%s=%s" % kv for kv in
                                                            spec.get("env", {}).items()) or "—"))
    if meta.get("targets"):
        lines += ["", "## Targets", "",
                  "Ratios, above 1 Locus is better (rails: the bandwidth on more rails over "
                  "one rail's), from the medians below and from the best of the %s repeats "
                  "(each MPI's least disturbed run)." % meta.get("repeats", "N"), "",
                  "| target | ratio (medians) | ratio (best of repeats) | goal | detail |",
                  "|---|---|---|---|---|"]
        for t in meta["targets"]:
            goal = "—" if t.get("goal") is None else "≥ %.2g (%s)" % (
                t["goal"], "met" if t["value"] >= t["goal"] else "not met")
            lines.append("| %s | %s | %s | %s | %s |" % (
                t["target"], fmt_val(t["value"]), fmt_val(t.get("best_of")), goal,
                t.get("detail", "")))
    for mpi, errs in (meta.get("build_failures") or {}).items():
        lines += ["", "**%s: %d program(s) failed to build:**" % (mpi, len(errs)), ""]
        lines += ["- %s" % e.replace("\n", " ")[:300] for e in errs]
    lines += ["", "Values are %s over the interleaved repeats." % (
        "each MPI's best (its least disturbed run)" if meta.get("stat") == "best" else "medians")]
    if meta.get("sweep_variable"):
        lines[-1] += " Columns are the values of %s; `best` is the best of them." \
            % meta["sweep_variable"]
    else:
        lines[-1] += (" `%s ×X` is how many times better %s is than X (above 1: %s is better;"
                      " times: X / %s, rates: %s / X)." % ((ref_name,) * 5))
    lines.append("")
    for s in summary:
        c = s["case"]
        ref = s["reference"]
        peers = [l for l in s["labels"] if l != ref]
        lines.append("## %s" % c["title"])
        lines.append("")
        lines.append("%s, %s is better, %d rank%s." % (c["metric"], c["better"], c["np"],
                                                       "s" if c["np"] != 1 else ""))
        lines.append("")
        best_title = "best peer" if ref or not meta.get("sweep_variable") else "best"
        head = [c["xlabel"].split(" (")[0]] + s["labels"] + ([best_title] if peers else [])
        if ref:
            head += ["%s ×%s" % (ref_name, p) for p in peers]
            if peers:
                head.append("%s ×best" % ref_name)
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for r in s["rows"]:
            cells = [fmt_size(r["x"])] + [fmt_val(r["values"][l]) for l in s["labels"]]
            if peers:
                cells.append("%s %s" % (r.get("best_peer", "—"), fmt_val(r.get("best_peer_value"))))
            if ref:
                cells += [fmt_val(r["advantage"][p]) for p in peers]
                if peers:
                    cells.append(fmt_val(r.get("advantage_best")))
            lines.append("| " + " | ".join(cells) + " |")
        for l in s["labels"]:
            if s["extras"].get(l):
                lines.append("")
                lines.append("%s: %s" % (l, ", ".join("%s = %s" % (k, fmt_val(v))
                                                      for k, v in s["extras"][l].items())))
        bad = {l: f for l, f in s["failures"].items() if f}
        notes = s.get("notes") or {}
        if bad or notes:
            lines.append("")
            for l, f in bad.items():
                lines.append("- %s: %d failed run(s): %s" % (l, len(f), f[0]))
            for l, n in notes.items():
                lines.append("- %s: %d run(s) %s (numbers kept)" % (l, len(n), n[0]))
        lines.append("")
    return "\n".join(lines) + "\n"


def to_json(summary, meta):
    """The report as a JSON-ready dict (x values kept as numbers or names)."""
    cases = []
    for s in summary:
        cases.append({
            "case": s["case"], "configs": s["labels"], "reference": s["reference"],
            "rows": s["rows"], "extras": s["extras"], "failures": s["failures"],
            "notes": s.get("notes", {}), "successful_runs": s["runs"],
        })
    return {"meta": meta, "cases": cases}


def from_json(doc):
    """The summary and meta back from a report JSON (to redraw or re-table it)."""
    summary = []
    for c in doc["cases"]:
        summary.append({"case": c["case"], "labels": c["configs"], "reference": c["reference"],
                        "rows": c["rows"], "extras": c["extras"], "failures": c["failures"],
                        "notes": c.get("notes", {}), "runs": c["successful_runs"]})
    return summary, doc["meta"]


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _points(s, l):
    return [(r["x"], r["values"][l]) for r in s["rows"]
            if r["values"].get(l) is not None and r["x"] > 0 and r["values"][l] > 0]


def _drawable(s):
    return not s["case"]["categorical"] and any(len(_points(s, l)) >= 2 for l in s["labels"])


def _draw(ax, s):
    from matplotlib.ticker import FuncFormatter
    c = s["case"]
    for l in s["labels"]:
        pts = _points(s, l)
        if not pts:
            continue
        style = "-" if l == s["reference"] else "--"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", markersize=3,
                label=l, linewidth=2 if l == s["reference"] else 1.2)
    if c.get("loglog", True):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(
            FuncFormatter(lambda v, _: fmt_size(int(round(v))) if v >= 1 else ""))
    ax.set_xlabel(c["xlabel"])
    ax.set_ylabel(c["metric"])
    ax.set_title(c["title"], fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


COMBINED = [("p2p", ("osu_latency", "osu_bw"))] + [
    ("coll_np%d" % n, tuple("imb_%s_np%d" % (b, n) for b in ("Bcast", "Allreduce", "Alltoall")))
    for n in (2, 4, 8)]


def plots(summary, outdir, combined=COMBINED):
    """One log-log PNG per numeric case (one line per config) and combined
    figures for the named groups. Returns the files written."""
    plt = _pyplot()
    written = []
    by_id = {s["case"]["id"]: s for s in summary}
    for s in summary:
        if not _drawable(s):
            continue
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        _draw(ax, s)
        fig.tight_layout()
        path = os.path.join(outdir, "%s.png" % s["case"]["id"])
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    for name, ids in combined:
        group = [by_id[i] for i in ids if i in by_id and _drawable(by_id[i])]
        if len(group) < 2:
            continue
        cols = len(group) if len(group) <= 3 else int(math.ceil(math.sqrt(len(group))))
        rows = int(math.ceil(len(group) / cols))
        fig, axes = plt.subplots(rows, cols, figsize=(6.0 * cols, 4.4 * rows), squeeze=False)
        flat = [ax for row in axes for ax in row]
        for ax, s in zip(flat, group):
            _draw(ax, s)
        for ax in flat[len(group):]:
            ax.set_visible(False)
        fig.tight_layout()
        path = os.path.join(outdir, "%s.png" % name)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def write_all(summary, meta, outdir, stem="report", want_plots=True, ref_name="Locus"):
    """Writes STEM.md, STEM.json and the PNGs into outdir; returns the paths."""
    os.makedirs(outdir, exist_ok=True)
    md = os.path.join(outdir, stem + ".md")
    js = os.path.join(outdir, stem + ".json")
    with open(md, "w") as f:
        f.write(markdown(summary, meta, ref_name))
    with open(js, "w") as f:
        json.dump(to_json(summary, meta), f, indent=1)
        f.write("\n")
    paths = [md, js]
    if want_plots:
        paths += plots(summary, outdir, meta.get("plot_groups") or COMBINED)
    return paths
