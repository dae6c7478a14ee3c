"""The Parquet side of bench/python.sh's to_arrow row (run with the peers venv python): read the
columns rbag's to_arrow builds back from a Parquet file that holds that very table
(`arrow_rbag.py parquet` wrote it), with `pyarrow.parquet.read_table` and its defaults (threads
on, no memory map). The page cache holds the file, as it holds the bag for rbag.
pyarrow.dataset, which read_table imports on first use, is imported before the timer, as the
imports are on rbag's side.

usage: arrow_parquet.py FILE   →   rows= cols= elapsed=
"""
import sys
import time

import pyarrow.dataset  # noqa: F401  (read_table's lazy import, kept out of the timer)
import pyarrow.parquet as pq


def main(path):
    columns = pq.read_schema(path).names
    start = time.perf_counter()
    t = pq.read_table(path, columns=columns)
    elapsed = time.perf_counter() - start
    print(f"rows={t.num_rows} cols={t.num_columns} elapsed={elapsed:.6f}")


if __name__ == "__main__":
    main(sys.argv[1])
