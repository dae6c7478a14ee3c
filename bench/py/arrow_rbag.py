"""rbag's side of bench/python.sh's to_arrow row (run with the peers venv python, where the
release wheel is installed).

  arrow_rbag.py table BAG TOPIC         rbag.Reader(BAG).to_arrow(TOPIC), the Reader's opening
                                        included: rows= cols= elapsed=
  arrow_rbag.py parquet BAG TOPIC OUT   writes that table to OUT with pyarrow.parquet.write_table
                                        (pyarrow's defaults: snappy), once, not timed: rows= bytes=
  arrow_rbag.py profile BAG TOPIC       where to_arrow's time goes (see below)

pyarrow and pandas are imported before the timer, as arrow_rosbags_df.py imports pandas: the
time is the read, the decoding, the columns and the hand-over. pandas matters: pyarrow.table(),
which takes rbag's Arrow C stream, asks whether its argument is a DataFrame and imports pandas to
do so, so in a process without pandas loaded the first to_arrow also pays that import.

`profile` first times one to_arrow with pandas not yet imported (`cold`, that import included),
then splits to_arrow's time, each a median of 5 in the same process: `open` (Reader alone), `raw`
(every raw payload of TOPIC through messages(raw=True): reading plus a Python object per message),
`arrow` (to_arrow, Reader included), `arrow_one_column` (to_arrow with columns=["header.seq"]:
the bag read and every message decoded, one column built) and `arrow_covariances` (the three
float64[9] columns alone).
"""
import os
import statistics
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq

import rbag


def table(path, topic):
    import pandas  # noqa: F401  (see the docstring)

    start = time.perf_counter()
    t = rbag.Reader(path).to_arrow(topic)
    elapsed = time.perf_counter() - start
    assert isinstance(t, pa.Table)
    print(f"rows={t.num_rows} cols={t.num_columns} elapsed={elapsed:.6f}")


def parquet(path, topic, out):
    t = rbag.Reader(path).to_arrow(topic)
    pq.write_table(t, out)
    print(f"rows={t.num_rows} cols={t.num_columns} bytes={os.path.getsize(out)}")


def profile(path, topic):
    def med(f):
        times = []
        for _ in range(5):
            start = time.perf_counter()
            f()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    def raw():
        with rbag.Reader(path) as bag:
            for m in bag.messages(topics=topic, raw=True):
                m.data

    start = time.perf_counter()
    rbag.Reader(path).to_arrow(topic)
    cold = time.perf_counter() - start
    pandas_imported = "pandas" in sys.modules
    covariances = [
        "orientation_covariance", "angular_velocity_covariance", "linear_acceleration_covariance",
    ]
    fields = {
        "cold": cold,
        "open": med(lambda: rbag.Reader(path).topics),
        "raw": med(raw),
        "arrow": med(lambda: rbag.Reader(path).to_arrow(topic)),
        "arrow_one_column": med(lambda: rbag.Reader(path).to_arrow(topic, columns=["header.seq"])),
        "arrow_covariances": med(lambda: rbag.Reader(path).to_arrow(topic, columns=covariances)),
    }
    print(" ".join(f"{k}={v:.6f}" for k, v in fields.items()) + f" pandas_imported={pandas_imported}")


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "table":
        table(*args)
    elif mode == "parquet":
        parquet(*args)
    elif mode == "profile":
        profile(*args)
    else:
        sys.exit(__doc__)
