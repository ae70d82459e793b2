#!/usr/bin/env python3
"""Compares the results of sql/run.py with `tracekit analyze --mi`, row by row.

    check_against_analyze.py RESULTS.json HOST/TRACE=MI.json [HOST/TRACE=MI.json ...]

MI.json is the output of `tracekit analyze cputop,syscallstats,irqstats,schedstats,
iolatencystats --mi --no-intersection --limit 0 --total --per-tid --per-prio TRACE` for the
trace exported in partition host=HOST/trace=TRACE. Every row of every compared table must
match (integers exactly, averages and deviations to 1e-9 relative); rows the analysis lists
with a zero count (iolatencystats' empty categories) must be absent from the SQL. Exits 1
listing the differences; prints how many rows were compared.
"""

import json
import math
import re
import sys


def val(cell):
    if cell is None:
        return None
    if isinstance(cell, dict):
        if cell.get("class") == "unknown":
            return None
        return cell.get("value")
    return cell


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-6)
    return a == b


class Checker:
    def __init__(self):
        self.errors = []
        self.compared = 0

    def table(self, what, expected, got):
        """expected, got: {key: tuple of values}."""
        for k in sorted(set(expected) | set(got), key=repr):
            e, g = expected.get(k), got.get(k)
            if e is None or g is None:
                self.errors.append(f"{what} {k}: analyze {e}, SQL {g}")
                continue
            self.compared += 1
            if len(e) != len(g) or not all(close(x, y) for x, y in zip(e, g)):
                self.errors.append(f"{what} {k}: analyze {e}, SQL {g}")


def sql_rows(results, name, part):
    r = results[name]
    cols = r["columns"]
    out = []
    for row in r["rows"]:
        d = dict(zip(cols, row))
        if f"{d['host']}/{d['trace']}" == part:
            out.append(d)
    return out


STATS = ("count", "min_ns", "avg_ns", "max_ns", "stdev_ns")


def stats(d, prefix=""):
    return tuple(d[prefix + k] for k in STATS)


def mi_stats(row, at):
    return tuple(val(c) for c in row[at:at + 5])


def check(c, results, part, mi):
    tables = {}
    for t in mi["results"]:
        cls = t["class"]
        name = cls if isinstance(cls, str) else cls.get("inherit")
        tables.setdefault(name, []).append(t)

    def one(name):
        ts = tables.get(name, [])
        return ts[0]["data"] if ts else []

    # cputop
    c.table(f"{part} cputop per-tid",
            {r[0]["tid"]: (val(r[3]),) for r in one("per-process")},
            {d["tid"]: (d["usage"],) for d in sql_rows(results, "cputop_per_tid", part)})
    c.table(f"{part} cputop per-cpu",
            {r[0]["id"]: (val(r[1]),) for r in one("per-cpu")},
            {d["cpu"]: (d["usage"],) for d in sql_rows(results, "cputop_per_cpu", part)})
    usage = [t for t in tables.get("total", []) if t["data"] and len(t["data"][0]) == 1]
    c.table(f"{part} cputop total",
            {0: (val(r[0]),) for t in usage for r in t["data"]},
            {0: (d["usage"],) for d in sql_rows(results, "cputop_total", part)})
    # syscallstats
    exp = {}
    for t in tables.get("per-tid", []):
        title = t.get("title") or t["class"]["title"]
        tid = int(re.search(r"TID: (-?\d+)\)\]$", title).group(1))
        for r in t["data"]:
            exp[(tid, r[0]["name"])] = tuple(val(x) for x in r[1:6])
    c.table(f"{part} syscallstats per-tid", exp,
            {(d["tid"], d["name"]): (d["calls"], d["min_ns"], d["avg_ns"], d["max_ns"], d["stdev_ns"])
             for d in sql_rows(results, "syscallstats_per_tid", part)})
    totals = [t for t in tables.get("total", []) if t["data"] and len(t["data"][0]) == 2]
    c.table(f"{part} syscallstats total",
            {r[0]["tid"]: (val(r[1]),) for t in totals for r in t["data"]},
            {d["tid"]: (d["calls"],) for d in sql_rows(results, "syscallstats_total", part)})
    # irqstats
    c.table(f"{part} irqstats hard",
            {r[0]["nr"]: (r[0]["name"],) + mi_stats(r, 1) for r in one("hard-stats")},
            {d["irq"]: (d["name"],) + stats(d) for d in sql_rows(results, "irqstats_hard", part)})
    c.table(f"{part} irqstats soft",
            {r[0]["nr"]: (r[0]["name"],) + mi_stats(r, 1) + mi_stats(r, 6) for r in one("soft-stats")},
            {d["vec"]: (d["name"],) + stats(d) + (d["raises"], d["raise_min_ns"], d["raise_avg_ns"],
                                                  d["raise_max_ns"], d["raise_stdev_ns"])
             for d in sql_rows(results, "irqstats_soft", part)})
    # schedstats
    c.table(f"{part} schedstats total",
            {0: mi_stats(r, 0) for r in one("total_stats")},
            {0: stats(d) for d in sql_rows(results, "schedstats_total", part)})
    c.table(f"{part} schedstats per-tid",
            {r[0]["tid"]: mi_stats(r, 1) for r in one("per_tid_stats")},
            {d["tid"]: stats(d) for d in sql_rows(results, "schedstats_per_tid", part)})
    c.table(f"{part} schedstats per-prio",
            {val(r[0]): mi_stats(r, 1) for r in one("per_prio_stats")},
            {d["prio"]: stats(d) for d in sql_rows(results, "schedstats_per_prio", part)})
    # iolatencystats
    c.table(f"{part} iolatencystats syscalls",
            {val(r[0]): mi_stats(r, 1) for r in one("syscall-latency-stats") if val(r[1])},
            {d["category"]: stats(d) for d in sql_rows(results, "iolatencystats_syscall", part)})
    c.table(f"{part} iolatencystats disks",
            {r[0]["name"]: mi_stats(r, 1) for r in one("disk-latency-stats") if val(r[1])},
            {d["disk"]: stats(d) for d in sql_rows(results, "iolatencystats_disk", part)})


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        results = json.load(f)
    c = Checker()
    for arg in sys.argv[2:]:
        part, path = arg.split("=", 1)
        with open(path) as f:
            check(c, results, part, json.load(f))
    for e in c.errors[:40]:
        print(e)
    if c.errors:
        print(f"{len(c.errors)} differences ({c.compared} rows compared)")
        sys.exit(1)
    if c.compared == 0:
        print("nothing compared")
        sys.exit(1)
    print(f"{c.compared} rows equal")


if __name__ == "__main__":
    main()
