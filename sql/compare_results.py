#!/usr/bin/env python3
"""Checks that two result files of run.py (two engines, or local and cluster) hold the same
rows for every query: integers and strings equal, floats to 1e-9 relative.

    compare_results.py A.json B.json
"""

import json
import math
import sys


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is None and b is None
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-6)
    return a == b


def key(row):
    # Rows are told apart by their non-float cells (host, trace, the grouping key...).
    return tuple((v is None, "" if isinstance(v, float) else str(v)) for v in row)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = (json.load(open(p)) for p in sys.argv[1:])
    errors = []
    rows = 0
    if sorted(a) != sorted(b):
        errors.append(f"queries differ: {sorted(a)} / {sorted(b)}")
    for q in sorted(set(a) & set(b)):
        ra, rb = sorted(a[q]["rows"], key=key), sorted(b[q]["rows"], key=key)
        if len(ra) != len(rb):
            errors.append(f"{q}: {len(ra)} rows / {len(rb)}")
            continue
        for x, y in zip(ra, rb):
            rows += 1
            if len(x) != len(y) or not all(same(u, v) for u, v in zip(x, y)):
                errors.append(f"{q}: {x} / {y}")
    for e in errors[:30]:
        print(e)
    if errors:
        print(f"{len(errors)} differences")
        sys.exit(1)
    if rows == 0:
        print("nothing compared")
        sys.exit(1)
    print(f"{rows} rows equal")


if __name__ == "__main__":
    main()
