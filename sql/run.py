#!/usr/bin/env python3
"""Runs the queries of this directory on a tracekit Parquet export, with DuckDB or Spark.

    python3 sql/run.py --engine duckdb DATA [--out results.json] [--queries a,b]
    python3 sql/run.py --engine spark DATA [--master local[2]]
    spark-submit --master spark://HOST:7077 sql/run.py --engine spark DATA

DATA is the directory `tracekit export --format parquet -o DATA` wrote. Every table found
there is registered under its name (`sched_slice`, `trace`…) with its `host` and `trace`
partition columns read as strings. Prints one line per query (rows, seconds, rows scanned
per second) on stderr and, with --out, writes {query: {columns, rows, seconds}} as JSON.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def queries(names):
    found = sorted(f[:-4] for f in os.listdir(HERE) if f.endswith(".sql"))
    if names:
        unknown = [n for n in names if n not in found]
        if unknown:
            sys.exit(f"run.py: no query named {', '.join(unknown)} (queries: {', '.join(found)})")
        found = names
    out = []
    for n in found:
        with open(os.path.join(HERE, n + ".sql")) as f:
            out.append((n, f.read()))
    return out


def tables(data):
    if not os.path.isdir(data):
        sys.exit(f"run.py: {data}: not a directory")
    t = sorted(d for d in os.listdir(data) if os.path.isdir(os.path.join(data, d)))
    if "trace" not in t:
        sys.exit(f"run.py: {data}: no `trace` table: not a tracekit Parquet export")
    return t


def plain(v):
    """A JSON-able cell (Decimal and numpy types to float/int)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


class DuckDb:
    def __init__(self, data, threads):
        import duckdb

        self.con = duckdb.connect()
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")
        for t in tables(data):
            glob = os.path.join(data, t, "*", "*", "*.parquet").replace("'", "''")
            self.con.execute(
                f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{glob}', "
                "hive_partitioning = true, hive_types_autocast = false)"
            )

    def run(self, sql):
        cur = self.con.execute(sql)
        cols = [d[0] for d in cur.description]
        return cols, [[plain(v) for v in r] for r in cur.fetchall()]

    def close(self):
        self.con.close()


class Spark:
    def __init__(self, data, master):
        from pyspark.sql import SparkSession

        b = SparkSession.builder.appName("tracekit-sql")
        if master:
            b = b.master(master)
        self.spark = (
            b.config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", os.environ.get("TRACEKIT_SPARK_PARTITIONS", "4"))
            .getOrCreate()
        )
        self.spark.sparkContext.setLogLevel("ERROR")
        for t in tables(data):
            self.spark.read.parquet(os.path.join(os.path.abspath(data), t)).createOrReplaceTempView(t)

    def run(self, sql):
        df = self.spark.sql(sql)
        rows = df.collect()
        return df.columns, [[plain(v) for v in r] for r in rows]

    def close(self):
        self.spark.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("--engine", choices=["duckdb", "spark"], required=True)
    ap.add_argument("--master", help="Spark master (default: spark-submit's, else local[2])")
    ap.add_argument("--threads", help="DuckDB threads")
    ap.add_argument("--queries", help="comma-separated query names (default: all)")
    ap.add_argument("--out", help="write the results here as JSON")
    ap.add_argument("--repeat", type=int, default=1, help="run each query this many times (best time kept)")
    a = ap.parse_args()
    qs = queries(a.queries.split(",") if a.queries else [])
    started = time.time()
    if a.engine == "duckdb":
        eng = DuckDb(a.data, a.threads)
    else:
        master = a.master or (None if "SPARK_ENV_LOADED" in os.environ or os.environ.get("SPARK_SUBMIT") else "local[2]")
        eng = Spark(a.data, master)
    print(f"{a.engine}: ready in {time.time() - started:.2f} s", file=sys.stderr)
    scanned = {}
    results = {}
    for name, sql in qs:
        best = None
        for _ in range(max(1, a.repeat)):
            t0 = time.time()
            cols, rows = eng.run(sql)
            dt = time.time() - t0
            best = dt if best is None else min(best, dt)
        results[name] = {"columns": cols, "rows": rows, "seconds": best}
        # Rows of the table the query reads, for rows/s.
        table = next((t for t in ("sched_slice", "syscall", "irq", "block_io", "thread_state") if f"FROM {t}" in sql), None)
        if table and table not in scanned:
            scanned[table] = eng.run(f"SELECT COUNT(*) FROM {table}")[1][0][0]
        n = scanned.get(table, 0)
        print(f"{name:24} {len(rows):6} rows  {best:8.3f} s  {n / best / 1e6 if best else 0:8.2f} M rows/s over {table}",
              file=sys.stderr, flush=True)
    eng.close()
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f)


if __name__ == "__main__":
    main()
