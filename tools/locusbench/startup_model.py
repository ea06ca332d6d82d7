"""`locus bench startup --model`: the address exchange's cost carried from the
measured points to machines of up to 10,000 nodes x 64 ranks.

Unit costs, fitted to Locus's own start-up reports (LOCUS_STARTUP_REPORT) of
the runs `locus bench startup` made (docs/startup.md states the
assumptions):

  F(N, B)  one PMI fence across N nodes after B bytes of cards were put:
           f0 + f1*N + N*B/beta (least squares, terms that come out
           negative dropped). locusrun's front end hears every node's
           fence and then sends every node every pair it has not seen (the
           keyval-cache broadcast Hydra does too), so its bytes grow as N*B.
           Fitted on the lazy runs (one put and one fence per rank).
  g        one PMI get, as the asking rank sees it (a round trip to its
           node's proxy, which answers from its cache). Fitted on the shm
           runs: the node's first rank makes P-1 gets in a row.
  s        the proxy's share of a get when a node's L ranks all ask at once
           (simple): they queue at one proxy. Fitted on the simple runs.
  c        bytes of one card in a table (from the tables' sizes).

Per strategy, with P = N*L ranks:

  simple  F(N, P*c) + max((P-1)*g, L*(P-1)*s)       memory/node L*P*(c+8)
  shm     F(N, P*c) + (P-1)*g + P*c/mem_bw          memory/node P*(c+8)
  roots   F(N, P*c) + (N-1)*ceil(L*c*1.2/1000)*g + P*c/mem_bw
                                                    memory/node P*(c+8)
  lazy    F(N, P*c) at MPI_Init; g per peer at first contact
  fabric  only the roots put a card (N of them, where they listen); each
          root gets the ceil(log2 N) cards of the roots it dials in Bruck's
          allgather, and the node blobs travel root to root over the network:
          F(N, N*c) + ceil(log2 N)*(g + alpha) + P*c/net_bw + P*c/mem_bw.
          No front end carries the ranks' cards.

alpha, net_bw and mem_bw are not measured here (a 2-core VM); they are
stated assumptions (ASSUMED below).
"""
import math
import re

from .startup import median

ASSUMED = {
    "alpha_s": 5e-6,        # one network message's latency on a cluster fabric
    "net_bw": 10e9,         # bytes/s a node receives (100 Gb/s class, 80 % of it)
    "mem_bw": 5e9,          # bytes/s to write a node's table
    "front_end_bw": None,   # None: use the fitted beta
}
SCALES = [(1, 64), (8, 64), (64, 64), (256, 64), (1024, 64), (10000, 64)]
MEASURED = ("simple", "shm", "roots", "lazy", "fabric")


def _lsq(rows, nparams):
    """Least squares y = sum(a_i * x_i) over rows [(x_1..x_n, y)] by the
    normal equations; the coefficients, or None when singular."""
    a = [[sum(r[i] * r[j] for r in rows) for j in range(nparams)] for i in range(nparams)]
    b = [sum(r[i] * r[nparams] for r in rows) for i in range(nparams)]
    for col in range(nparams):
        piv = max(range(col, nparams), key=lambda i: abs(a[i][col]))
        if abs(a[piv][col]) < 1e-30:
            return None
        a[col], a[piv], b[col], b[piv] = a[piv], a[col], b[piv], b[col]
        for i in range(nparams):
            if i != col:
                f = a[i][col] / a[col][col]
                a[i] = [x - f * y for x, y in zip(a[i], a[col])]
                b[i] -= f * b[col]
    return [b[i] / a[i][i] for i in range(nparams)]


def _fit_terms(rows, candidates):
    """Least squares y = sum(c_i * x_i) over rows (x_0.., y): the first
    candidate set of terms whose coefficients all come out non-negative
    (the others 0)."""
    width = len(rows[0]) - 1 if rows else 0
    for terms in candidates:
        xs = [[r[t] for t in terms] + [r[-1]] for r in rows]
        got = _lsq(xs, len(terms)) if len(rows) >= len(terms) else None
        if got and all(v >= 0 for v in got):
            out = [0.0] * width
            for t, v in zip(terms, got):
                out[t] = v
            return out
    return [0.0] * width


def _fit_fence(rows):
    """(f0, f1, 1/beta) for y = f0 + f1*N + N*B/beta over rows (N, N*B, y):
    all three where they come out non-negative, else fewer terms."""
    return _fit_terms([(1.0, n, nb, y) for n, nb, y in rows],
                      ((0, 1, 2), (0, 2), (0, 1), (0,)))


def fit(doc, summary):
    """Unit costs from a startup run's summary; raises ValueError when the
    runs lack what a cost needs."""
    pts = {}
    for n, k in doc["grid"]:
        s = summary["%dx%d" % (n, k)]
        pts[(n, k)] = {l[6:]: s[l] for l in s if l.startswith("locus-")}
    if not pts or not all("lazy" in v and "shm" in v and "simple" in v for v in pts.values()):
        raise ValueError("the model needs Locus runs with the simple, shm and lazy strategies")
    # card size: a shm table holds P cards and P+1 offsets, one per node
    cards = []
    for (n, k), v in pts.items():
        tb = v["shm"].get("table_bytes")
        if tb:
            cards.append((tb / n - 216 - 8) / (n * k) - 8)  # less the header, offsets
    c = median(cards) or 60.0
    # The fence: the lazy runs' exchange is one put and one fence. On one
    # node there is no network transport and so no exchange to time.
    rows = [(n, n * (n * k) * c, v["lazy"]["exchange_s"]) for (n, k), v in pts.items()
            if n > 1 and v["lazy"]["exchange_s"] is not None]
    f0, f1, inv_beta = _fit_fence(rows)
    if inv_beta <= 0:
        inv_beta = 1e-12  # no byte term seen: beta is unbounded by these points
    def fence(n, bytes_):
        return f0 + f1 * n + n * bytes_ * inv_beta
    gs, ss = [], []
    for (n, k), v in pts.items():
        p = n * k
        if p < 4:
            continue
        base = fence(n, p * c)
        e = v["shm"]["exchange_s"]
        if e is not None:
            gs.append(max(e - base, 0.0) / (p - 1))
        e = v["simple"]["exchange_s"]
        if e is not None and k > 1:
            ss.append(max(e - base, 0.0) / ((p - 1) * k))
    g = median(gs) or 20e-6
    s = median(ss) or g / 2
    return {"f0_s": f0, "f1_s_per_node": f1, "front_end_bw": 1.0 / inv_beta, "g_s": g,
            "s_s": s, "card_bytes": c, "points": len(pts)}


def predict(u, n, k, assumed=ASSUMED):
    """{strategy: (seconds, memory bytes per node, dominant phase)} at N=n, L=k."""
    p = n * k
    c = u["card_bytes"]
    beta = assumed.get("front_end_bw") or u["front_end_bw"]
    fixed = u["f0_s"] + u["f1_s_per_node"] * n

    def fence(bytes_):
        return fixed + n * bytes_ / beta
    table = p * c / assumed["mem_bw"]
    chunks = math.ceil(k * c * 1.2 / 1000)
    out = {}
    phases = {
        "simple": {"fence": fence(p * c), "gets": max((p - 1) * u["g_s"], k * (p - 1) * u["s_s"])},
        "shm": {"fence": fence(p * c), "gets": (p - 1) * u["g_s"], "table": table},
        "roots": {"fence": fence(p * c), "gets": (n - 1) * chunks * u["g_s"], "table": table},
        "lazy": {"fence": fence(p * c)},
        "fabric": {"fence": fence(n * c),
                   "gets": math.ceil(math.log2(n)) * u["g_s"] if n > 1 else 0.0,
                   "allgather": (math.ceil(math.log2(n)) * assumed["alpha_s"]
                                 + p * c / assumed["net_bw"]) if n > 1 else 0.0,
                   "table": table},
    }
    mem = {"simple": k * p * (c + 8), "shm": p * (c + 8), "roots": p * (c + 8),
           "lazy": 0, "fabric": p * (c + 8)}
    for strat, ph in phases.items():
        total = sum(ph.values())
        dom = max(ph, key=ph.get)
        out[strat] = (total, mem[strat], dom, ph)
    return out


def _fmt_s(v):
    if v < 1e-3:
        return "%.0f us" % (v * 1e6)
    if v < 1:
        return "%.1f ms" % (v * 1e3)
    return "%.2f s" % v


def _fmt_b(v):
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if v >= div:
            return "%.1f %s" % (v / div, unit)
    return "%d B" % v


def markdown(u, doc, summary, scales=SCALES, assumed=ASSUMED):
    lines = ["# Start-up model: the address exchange from one node to 10,000 x 64", "",
             "Unit costs fitted to %d measured layouts (docs/startup.md):" % u["points"], "",
             "| cost | value |", "|---|---|",
             "| fence, fixed (f0) | %s |" % _fmt_s(u["f0_s"]),
             "| fence, per node (f1) | %s |" % _fmt_s(u["f1_s_per_node"]),
             "| front end's card broadcast (beta) | %.1f MB/s |" % (u["front_end_bw"] / 1e6),
             "| PMI get, one asker (g) | %s |" % _fmt_s(u["g_s"]),
             "| PMI get, proxy share under load (s) | %s |" % _fmt_s(u["s_s"]),
             "| card in a table (c) | %.0f B |" % u["card_bytes"], "",
             "Assumed (not measurable on this machine): network latency %s, a node's network "
             "bandwidth %.0f GB/s, table writes %.0f GB/s%s."
             % (_fmt_s(assumed["alpha_s"]), assumed["net_bw"] / 1e9, assumed["mem_bw"] / 1e9,
                "; the front end's broadcast at %.0f MB/s instead of the fitted beta "
                "(--front-end-bw)" % (assumed["front_end_bw"] / 1e6)
                if assumed.get("front_end_bw") else ""),
             "", "## Predicted exchange time, memory per node, dominant phase", "",
             "| nodes x ranks | " + " | ".join(["simple", "shm", "roots", "lazy (Init)",
                                                 "fabric"]) + " |",
             "|---|---|---|---|---|---|"]
    for n, k in scales:
        pr = predict(u, n, k, assumed)
        cells = []
        for st in ("simple", "shm", "roots", "lazy", "fabric"):
            t, m, dom, _ = pr[st]
            cells.append("%s, %s, %s" % (_fmt_s(t), _fmt_b(m), dom))
        lines.append("| %d x %d | %s |" % (n, k, " | ".join(cells)))
    lines += ["", "## Model against the measured points (exchange, as the last rank to arrive "
              "sees it)", "",
              "| layout | " + " | ".join("%s measured / model" % s for s in
                                          MEASURED) + " |",
              "|---|" + "---|" * len(MEASURED)]
    for n, k in doc["grid"]:
        s = summary["%dx%d" % (n, k)]
        pr = predict(u, n, k)
        cells = []
        for st in MEASURED:
            meas = s.get("locus-" + st, {}).get("exchange_s")
            cells.append("%s / %s" % (_fmt_s(meas) if meas is not None else "—",
                                      _fmt_s(pr[st][0])))
        lines.append("| %dx%d | %s |" % (n, k, " | ".join(cells)))
    return "\n".join(lines) + "\n"


def to_json(u, scales=SCALES, assumed=ASSUMED):
    out = {"units": u, "assumed": assumed, "predictions": []}
    for n, k in scales:
        for st, (t, m, dom, ph) in predict(u, n, k, assumed).items():
            out["predictions"].append({"nodes": n, "ranks_per_node": k, "strategy": st,
                                       "seconds": t, "memory_per_node": m, "dominant": dom,
                                       "phases": ph})
    return out


# ---------------------------------------------------------------- launch

# The launch model: launch to the end of MPI_Init as a whole, for Locus's
# fabric exchange with every proxy started by locusrun (the star, fanout 0)
# and with a tree of proxies (fanout k).
#
# Fitted on the VM: T(N, L) = b*N + r*P + q*P^2 (P = N*L) per fanout. Every
# emulated node shares the machine's two vCPUs, so b is what one more node
# costs the whole machine (its proxy's start and plan, its share of the
# fences), r what one more rank does, and q*P^2 the time-slicing of P
# processes on two CPUs, which grows with their number. b and r are both
# serialised here: upper bounds for the share of a node or a rank on the
# critical path of a real cluster, where each node runs its own part on
# its own cores.
#
# Projected to a cluster of N nodes x L ranks, phase by phase:
#   resource manager   R (assumed: the allocation's own launch step, which
#                      Locus does not control; 0 for ssh)
#   proxy launch       d * (k * b + hop), d = ceil(log_k N): each level's
#                      parents start their k children one after another
#                      (the star: d = 1, k = N)
#   rank start         L * r + q * L^2: a node's proxy forks its L ranks,
#                      which then share the node (its cores, not two)
#   fences             d * (f_lvl + k * N * c / beta): each level combines
#                      its children's and sends the N root cards down to k
#                      children (the star: N * N * c / beta from one process)
#   exchange           the roots' allgather (fabric) over the network
AUTO_FANOUT = 4             # LOCUS_LAUNCH_FANOUT=auto's fanout (src/launch/fe_tree.c)
LAUNCH_ASSUMED = {
    "rm_s": 0.5,            # the resource manager's own step launch at 10,000 nodes
    "hop_s": 0.005,         # one remote start on a cluster network (fork, exec, connect)
    "fence_level_s": 50e-6, # one level of combined fences (a message each way)
    "tree_bw": 1e9,         # bytes/s an inner proxy sends down
}


def _fit_launch(rows):
    """(b, r, q) for T = b*N + r*P + q*P^2 over rows (N, L, T), P = N*L."""
    return _fit_terms([(n, n * l, (n * l) ** 2, y) for n, l, y in rows],
                      ((0, 1, 2), (0, 1), (1, 2), (0, 2), (1,), (0,)))


def launch_labels(doc):
    """{fanout: label} of Locus's runs with the default exchange (fabric, or
    the one label without a fanout suffix per strategy)."""
    out = {}
    for l in doc["labels"]:
        m = re.match(r"locus-fabric(?:-k(\d+|auto))?$", l)
        if m:
            out[m.group(1) or "auto"] = l
    return out


def fit_launch(doc, summary):
    """{fanout: {"b","r","q","points","worst","rows"}}: the fit per fanout
    and its worst relative error over the measured points (more than one
    node)."""
    fits = {}
    for k, label in launch_labels(doc).items():
        rows = [(n, l, summary["%dx%d" % (n, l)][label]["init"]) for n, l in doc["grid"]
                if n > 1 and summary["%dx%d" % (n, l)].get(label, {}).get("init") is not None]
        if len(rows) < 3:
            continue
        b, r, q = _fit_launch(rows)
        f = {"b": b, "r": r, "q": q, "points": len(rows), "rows": rows}
        f["worst"] = max(abs(launch_vm(f, n, l) - y) / y for n, l, y in rows if y > 0)
        fits[k] = f
    return fits


def launch_vm(fit, n, l):
    """The fit's launch to MPI_Init on the VM, seconds."""
    p = n * l
    return fit["b"] * n + fit["r"] * p + fit["q"] * p * p


def predict_launch(fit, u, n, l, k, assumed=LAUNCH_ASSUMED):
    """{phase: seconds} on a cluster (k = 0: the star)."""
    fan = k if k and k < n else n
    depth = max(1, math.ceil(math.log(n) / math.log(fan) - 1e-9)) if fan > 1 else 1
    c = u["card_bytes"] if u else 60.0
    ph = {"resource manager": assumed["rm_s"],
          "proxy launch": depth * (fan * fit["b"] + assumed["hop_s"]),
          "rank start": l * fit["r"] + fit["q"] * l * l,
          "fences": depth * (assumed["fence_level_s"] + fan * n * c / assumed["tree_bw"])}
    # the roots' allgather over the fabric (ASSUMED: latency, bandwidth)
    ph["exchange"] = (math.ceil(math.log2(n)) * ASSUMED["alpha_s"] + n * l * c / ASSUMED["net_bw"]
                      if n > 1 else 0.0)
    return ph


def launch_markdown(fits, u, scales=((256, 64), (1024, 64), (10000, 64)),
                    assumed=LAUNCH_ASSUMED):
    if not fits:
        return ""
    lines = ["", "## Launch to the end of MPI_Init: fit and projection", "",
             "Fitted per LOCUS_LAUNCH_FANOUT on the VM: T = b·N + r·P + q·P² (P = N·L "
             "ranks; every node's and rank's work serialised on two vCPUs, q the "
             "time-slicing of P processes there).", "",
             "| fanout | b (a node) | r (a rank) | q | points | worst error |",
             "|---|---|---|---|---|---|"]
    for k, f in sorted(fits.items()):
        lines.append("| %s | %s | %s | %.3g s | %d | %.0f %% |" % (
            k, _fmt_s(f["b"]), _fmt_s(f["r"]), f["q"], f["points"], 100 * f["worst"]))
    lines += ["", "| fanout | layout | measured | model | error |", "|---|---|---|---|---|"]
    for k, f in sorted(fits.items()):
        for n, l, y in f["rows"]:
            m = launch_vm(f, n, l)
            lines.append("| %s | %dx%d | %s | %s | %+.0f %% |" % (
                k, n, l, _fmt_s(y), _fmt_s(m), 100 * (m - y) / y))
    lines += ["", "Projected to a cluster (each node's part on its own cores; b and r are "
              "the VM's, upper bounds; assumed: resource manager %s, a remote start %s, a "
              "fence level %s, %.0f GB/s down the tree; the roots' allgather at %s and %.0f GB/s):"
              % (_fmt_s(assumed["rm_s"]), _fmt_s(assumed["hop_s"]),
                 _fmt_s(assumed["fence_level_s"]), assumed["tree_bw"] / 1e9,
                 _fmt_s(ASSUMED["alpha_s"]), ASSUMED["net_bw"] / 1e9), ""]
    for n, l in scales:
        for k, f in sorted(fits.items()):
            kk = 0 if k in ("0", "auto") else int(k)
            # a measured tree's costs also priced at the default's fanout
            for fan in [kk] + ([AUTO_FANOUT] if kk and kk != AUTO_FANOUT else []):
                ph = predict_launch(f, u, n, l, fan, assumed)
                lines.append("- %d x %d, fanout %d%s: **%s** (%s)" % (
                    n, l, fan, "" if fan == kk else " (fanout %s's costs)" % k,
                    _fmt_s(sum(ph.values())),
                    ", ".join("%s %s" % (p, _fmt_s(v)) for p, v in ph.items())))
    return "\n".join(lines) + "\n"
