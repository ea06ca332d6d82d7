"""Parsers for the text output of the benchmark programs.

They read the layouts users know (OSU micro-benchmarks, IMB-MPI1, the classic
least-squares ping_pong, STREAM), so they also read real OSU/IMB output.
Every parser returns plain dicts and raises ParseError naming what is wrong.
"""
import re


class ParseError(ValueError):
    """The text is not the benchmark output the parser expects."""


_OSU_TITLES = {
    "osu mpi latency test": "osu_latency",
    "osu mpi bandwidth test": "osu_bw",
    "osu mpi bi-directional bandwidth test": "osu_bibw",
    "osu mpi multiple bandwidth / message rate test": "osu_mbw_mr",
    "locus mpi-io collective bandwidth test": "io_bench",
    "locus multi-threaded message rate test": "mt_rate",
}

_OSU_KEYS = {
    "latency (us)": "latency_us",
    "avg latency(us)": "latency_us",
    "bandwidth (mb/s)": "bandwidth_mb_s",
    "mb/s": "bandwidth_mb_s",
    "messages/s": "messages_per_s",
}


def _num(tok):
    try:
        return float(tok)
    except ValueError as exc:
        raise ParseError("not a number: %r" % tok) from exc


def parse_osu(text):
    """OSU point-to-point output -> {benchmark, columns, rows: [{bytes, ...}], pairs, window}."""
    bench = None
    columns = None
    rows = []
    pairs = window = None
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            body = s.lstrip("#").strip()
            low = body.lower()
            for title, name in _OSU_TITLES.items():
                if low.startswith(title):
                    bench = name
            m = re.search(r"pairs:\s*(\d+)", body)
            if m:
                pairs = int(m.group(1))
            m = re.search(r"window size:\s*(\d+)", body)
            if m:
                window = int(m.group(1))
            first = next((w for w in ("size", "threads") if low.startswith(w)), None)
            if first:  # mt_rate's rows are thread counts, kept under "bytes"
                titles = re.split(r"\s{2,}", body[len(first):].strip())
                columns = [_OSU_KEYS.get(t.lower(), t) for t in titles if t]
            continue
        if columns is None:
            continue  # launcher noise before the table
        toks = s.split()
        if len(toks) != len(columns) + 1 or not re.fullmatch(r"\d+", toks[0]):
            raise ParseError("unexpected OSU row: %r" % line)
        row = {"bytes": int(toks[0])}
        for key, tok in zip(columns, toks[1:]):
            row[key] = _num(tok)
        rows.append(row)
    if bench is None or columns is None:
        raise ParseError("no OSU title and column header found")
    if not rows:
        raise ParseError("OSU output has no data rows")
    return {"benchmark": bench, "columns": columns, "rows": rows, "pairs": pairs, "window": window}


_IMB_KEYS = {
    "#bytes": "bytes",
    "#repetitions": "repetitions",
    "t[usec]": "t_us",
    "t_min[usec]": "t_min_us",
    "t_max[usec]": "t_max_us",
    "t_avg[usec]": "t_avg_us",
    "mbytes/sec": "mbytes_per_sec",
    "msg/sec": "msg_per_sec",
}


def parse_imb(text):
    """IMB-MPI1 output -> list of {benchmark, processes, columns, rows}."""
    tables = []
    cur = None
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"#\s*Benchmarking\s+(\S+)", s)
        if m:
            cur = {"benchmark": m.group(1), "processes": None, "columns": None, "rows": []}
            tables.append(cur)
            continue
        if cur is None or not s:
            continue
        m = re.match(r"#\s*#processes\s*=\s*(\d+)", s)
        if m:
            cur["processes"] = int(m.group(1))
            continue
        if s.startswith("#repetitions") or s.startswith("#bytes"):
            cur["columns"] = [_IMB_KEYS.get(t.lower(), t) for t in s.split()]
            continue
        if s.startswith("#") or cur["columns"] is None:
            continue
        toks = s.split()
        if len(toks) != len(cur["columns"]) or not re.fullmatch(r"\d+", toks[0]):
            cur = None  # end of this table (trailer text)
            continue
        row = {}
        for key, tok in zip(cur["columns"], toks):
            row[key] = int(tok) if key in ("bytes", "repetitions") else _num(tok)
        cur["rows"].append(row)
    tables = [t for t in tables if t["rows"]]
    if not tables:
        raise ParseError("no IMB benchmark table found")
    for t in tables:
        if t["processes"] is None:
            raise ParseError("IMB table %s lacks '# #processes'" % t["benchmark"])
    return tables


def parse_pingpong(text):
    """Classic ping_pong output -> {iterations: [{iter, latency_us,
    inv_bandwidth_s_per_mb, bandwidth_mb_s, points: [{bytes, time_us, fit_us}]}]}."""
    iters = []
    cur = None
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"iter\s*=\s*(\d+)$", s)
        if m:
            cur = {"iter": int(m.group(1)), "points": []}
            iters.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r"a = latency =\s*(\S+)\s+microseconds", s)
        if m:
            cur["latency_us"] = _num(m.group(1))
            continue
        m = re.match(r"b = inverse bandwidth =\s*(\S+)\s+secs/Mbyte", s)
        if m:
            cur["inv_bandwidth_s_per_mb"] = _num(m.group(1))
            continue
        m = re.match(r"1/b = bandwidth =\s*(\S+)\s+Mbytes/sec", s)
        if m:
            cur["bandwidth_mb_s"] = _num(m.group(1))
            continue
        m = re.match(r"(\d+)\.\s+(\S+)\s+(\S+)$", s)
        if m:
            cur["points"].append({"bytes": int(m.group(1)), "time_us": _num(m.group(2)),
                                  "fit_us": _num(m.group(3))})
    if not iters:
        raise ParseError("no 'iter =' block found in ping_pong output")
    for it in iters:
        for key in ("latency_us", "inv_bandwidth_s_per_mb", "bandwidth_mb_s"):
            if key not in it:
                raise ParseError("ping_pong iter %d lacks %s" % (it["iter"], key))
        if len(it["points"]) < 2:
            raise ParseError("ping_pong iter %d has fewer than two points" % it["iter"])
    return {"iterations": iters}


def parse_stream(text):
    """STREAM output -> {rows: [{function, best_rate_mb_s, avg_time_s, min_time_s,
    max_time_s}], validates, placement: [lines]}."""
    rows = []
    placement = []
    validates = None
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"(Copy|Scale|Add|Triad):\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$", s)
        if m:
            rows.append({"function": m.group(1).lower(), "best_rate_mb_s": _num(m.group(2)),
                         "avg_time_s": _num(m.group(3)), "min_time_s": _num(m.group(4)),
                         "max_time_s": _num(m.group(5))})
        elif s.startswith("Solution Validates"):
            validates = True
        elif s.startswith("Failed Validation"):
            validates = False
        elif re.match(r"Rank \d+: cpu", s):
            placement.append(s)
    if len(rows) != 4:
        raise ParseError("STREAM output has %d of the 4 kernel rows" % len(rows))
    return {"rows": rows, "validates": validates, "placement": placement}


def detect(text):
    """Names the format of a benchmark output: osu, imb, pingpong or stream."""
    if re.search(r"#\s*Benchmarking\s+\S+", text):
        return "imb"
    if "least squares fit" in text:
        return "pingpong"
    if re.search(r"^Triad:", text, re.M):
        return "stream"
    if re.search(r"^#\s*OSU", text, re.M):
        return "osu"
    raise ParseError("unrecognised benchmark output")


PARSERS = {"osu": parse_osu, "imb": parse_imb, "pingpong": parse_pingpong, "stream": parse_stream}


def parse_any(text):
    """Detects the format and parses it; returns (format, parsed)."""
    kind = detect(text)
    return kind, PARSERS[kind](text)
