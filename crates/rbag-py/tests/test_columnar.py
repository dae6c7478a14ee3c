"""Columnar reads: Reader.to_arrow equals the per-message decode for every topic of every
corpus bag, value for value; to_pandas and to_numpy build on it; `rbag export` writes Parquet
that DuckDB reads with the same row counts and sums."""
import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import rbag
from conftest import ROOT, TEST_MSGS, corpus, missing, peer_module

BAGS = [
    ("ros1/multi_none.bag", None),
    ("ros1/multi_lz4.bag", None),
    ("ros1/multi_bz2.bag", None),
    ("ros1/small_chunks.bag", None),
    ("ros2/mcap/talker", [TEST_MSGS]),
    ("ros2/mcap/wbag", [TEST_MSGS]),
    ("ros2/mcap/cdr_test", [TEST_MSGS]),
    ("ros2/mcap/bag_with_topics_and_service_events", [TEST_MSGS]),
    ("ros2/sqlite3/wbag", [TEST_MSGS]),
    ("ros2/sqlite3/cdr_test", [TEST_MSGS]),
    ("ros2/sqlite3/talker", [TEST_MSGS]),
    ("ros2/sqlite3/empty_bag", [TEST_MSGS]),
    ("ros2/sqlite3/bag_with_topics_and_service_events", [TEST_MSGS]),
]


def need_pyarrow():
    peer_module("pyarrow")
    import pyarrow as pa

    return pa


def plain(v, top=False):
    """A decoded value as Arrow's to_pylist gives it: uint8 arrays as bytes, other arrays as
    lists, messages as dicts."""
    if isinstance(v, np.ndarray):
        return v.tobytes() if v.dtype == np.uint8 else v.tolist()
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v


def flatten(d, prefix=""):
    """A message's dict as the table's columns: nested messages as dotted names."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = plain(v)
    return out


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b and type(a) is type(b)


def test_to_arrow_equals_the_per_message_decode_for_every_corpus_topic():
    pa = need_pyarrow()
    topics = values = 0
    for rel, msg_path in BAGS:
        with rbag.Reader(corpus(rel), msg_path=msg_path) as bag:
            for name in bag.topics:
                table = bag.to_arrow(name)
                msgs = list(bag.messages(topics=name))
                assert table.num_rows == len(msgs), f"{rel} {name}"
                assert table.schema.field("log_time").type == pa.timestamp("ns")
                times = table.column("log_time").cast(pa.int64()).to_pylist()
                assert times == [m.log_time for m in msgs], f"{rel} {name}: log times"
                columns = {c: table.column(c).to_pylist() for c in table.column_names if c != "log_time"}
                for i, m in enumerate(msgs):
                    row = flatten(m.message.to_dict())
                    assert row.keys() == columns.keys(), f"{rel} {name}: columns"
                    for c, want in row.items():
                        got = columns[c][i]
                        assert same(got, want), f"{rel} {name} message {i} column {c}: {got!r} != {want!r}"
                        values += 1
                topics += 1
    assert topics > 50 and values > 30_000, (topics, values)
    print(f"to_arrow: {topics} topics, {values} values equal the per-message decode", file=sys.stderr)


def test_columns_and_time_window_select():
    pa = need_pyarrow()
    with rbag.Reader(corpus("ros1/multi_none.bag")) as bag:
        imu = list(bag.messages(topics="/imu", raw=True))
        start, end = imu[10].log_time, imu[20].log_time
        t = bag.to_arrow("/imu", columns=["linear_acceleration", "header.frame_id"], start=start, end=end)
        assert t.column_names == [
            "log_time",
            "header.frame_id",
            "linear_acceleration.x",
            "linear_acceleration.y",
            "linear_acceleration.z",
        ]
        assert t.num_rows == 10
        assert t.column("log_time").cast(pa.int64()).to_pylist() == [m.log_time for m in imu[10:20]]
        image = bag.to_arrow("/camera/image_raw")
        assert image.schema.field("data").type == pa.binary()
        first = next(iter(bag.messages(topics="/camera/image_raw")))
        assert image.column("data")[0].as_py() == first.message.data.tobytes()
        assert bag.to_arrow("/imu", start=end, end=start).num_rows == 0


def test_several_bags_merge_in_time_order():
    pa = need_pyarrow()
    paths = [corpus("ros1/multi_none.bag"), corpus("ros1/small_chunks.bag")]
    with rbag.Reader(paths) as bag:
        t = bag.to_arrow("/imu", columns=["header.seq"])
        assert t.num_rows == len(list(bag.messages("/imu", raw=True))) == sum(
            rbag.Reader(p).topics["/imu"].count for p in paths
        )
        times = t.column("log_time").cast(pa.int64()).to_pylist()
        assert times == sorted(times)


def test_to_pandas_and_to_numpy():
    need_pyarrow()
    with rbag.Reader(corpus("ros1/multi_none.bag")) as bag:
        msgs = [m.message for m in bag.messages(topics="/imu")]
        df = bag.to_pandas("/imu", columns=["linear_acceleration"])
        assert df.index.name == "log_time" and str(df.index.dtype) == "datetime64[ns]"
        assert list(df.columns) == ["linear_acceleration.x", "linear_acceleration.y", "linear_acceleration.z"]
        assert df["linear_acceleration.z"].tolist() == [m.linear_acceleration.z for m in msgs]
        acc = bag.to_numpy("/imu", "linear_acceleration")
        assert acc.shape == (len(msgs), 3) and acc.dtype == np.float64
        assert acc[:, 2].tolist() == [m.linear_acceleration.z for m in msgs]
        cov = bag.to_numpy("/imu", "orientation_covariance")
        assert cov.shape == (len(msgs), 9)
        assert np.array_equal(cov, np.stack([m.orientation_covariance for m in msgs]))
        seq = bag.to_numpy("/imu", "header.seq")
        assert seq.dtype == np.uint32 and seq.tolist() == [m.header.seq for m in msgs]
        with pytest.raises(TypeError, match="header.frame_id"):
            bag.to_numpy("/imu", "header.frame_id")


def test_bad_requests_raise_rbag_errors():
    need_pyarrow()
    bag = rbag.Reader(corpus("ros1/multi_none.bag"))
    with pytest.raises(rbag.TopicError, match="/nope"):
        bag.to_arrow("/nope")
    with pytest.raises(rbag.TopicError, match="no column pose.nope.*linear_acceleration.x"):
        bag.to_arrow("/imu", columns=["pose.nope"])
    assert bag.to_arrow("/imu").num_rows > 0
    bag.close()
    with pytest.raises(rbag.ClosedError):
        bag.to_arrow("/imu")


def rbag_cli():
    exe = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "rbag"
    if not exe.exists():
        missing(f"the rbag binary ({exe}; cargo build -p rbag)")
    return exe


def test_export_parquet_reads_in_duckdb_with_the_same_counts_and_sums(tmp_path):
    need_pyarrow()
    peer_module("duckdb")
    import duckdb

    exe = rbag_cli()
    checked = 0
    for rel, msg_path in [("ros1/multi_none.bag", None), ("ros2/sqlite3/wbag", None), ("ros2/mcap/cdr_test", [TEST_MSGS])]:
        out = tmp_path / rel.replace("/", "_")
        args = [exe, "export", corpus(rel), "-o", out, "--json"]
        for p in msg_path or []:
            args += ["--msg-path", p]
        run = subprocess.run(args, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        report = json.loads(run.stdout)
        with rbag.Reader(corpus(rel), msg_path=msg_path) as bag:
            assert {f["topic"] for f in report["files"]} == set(bag.topics)
            for f in report["files"]:
                table = bag.to_arrow(f["topic"])
                path = str(f["path"]).replace("'", "''")
                rows = duckdb.sql(f"SELECT count(*) FROM '{path}'").fetchall()[0][0]
                assert rows == table.num_rows == f["rows"], f"{rel} {f['topic']}"
                for name in table.column_names:
                    kind = table.schema.field(name).type
                    if not (str(kind).startswith(("int", "uint", "double", "float"))):
                        continue
                    want = sum(x for x in table.column(name).to_pylist() if not math.isnan(x))
                    got = duckdb.sql(f"SELECT sum(\"{name}\") FILTER (WHERE NOT isnan(\"{name}\"::DOUBLE)) FROM '{path}'").fetchall()[0][0]
                    assert (got or 0) == pytest.approx(want, rel=1e-12, abs=1e-9), f"{rel} {f['topic']} {name}"
                    checked += 1
    assert checked > 50, checked
    print(f"export: {checked} column sums equal in DuckDB", file=sys.stderr)


def test_export_formats_read_back_in_pyarrow_and_pandas(tmp_path):
    pa = need_pyarrow()
    import pandas as pd
    import pyarrow.ipc

    exe = rbag_cli()
    bag_path = corpus("ros1/multi_none.bag")
    with rbag.Reader(bag_path) as bag:
        want = bag.to_arrow("/imu")
    for fmt in ["arrow", "csv"]:
        out = tmp_path / fmt
        run = subprocess.run([exe, "export", bag_path, "-o", out, "--format", fmt, "/imu", "/tf"], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert sorted(p.name for p in out.iterdir()) == [f"imu.{fmt}", f"tf.{fmt}"]
        if fmt == "arrow":
            got = pa.ipc.open_file(out / "imu.arrow").read_all()
            assert got.equals(want)
        else:
            df = pd.read_csv(out / "imu.csv")
            assert list(df.columns) == want.column_names
            assert df["log_time"].tolist() == want.column("log_time").cast(pa.int64()).to_pylist()
            assert df["linear_acceleration.z"].tolist() == want.column("linear_acceleration.z").to_pylist()
            cov = [json.loads(c) for c in df["orientation_covariance"]]
            assert cov == want.column("orientation_covariance").to_pylist()
    # An existing export is refused without --force, and kept as it was.
    before = (tmp_path / "csv" / "imu.csv").read_bytes()
    run = subprocess.run([exe, "export", bag_path, "-o", tmp_path / "csv", "--format", "csv", "/imu"], capture_output=True, text=True)
    assert run.returncode == 1 and "imu.csv" in run.stderr and "--force" in run.stderr
    assert (tmp_path / "csv" / "imu.csv").read_bytes() == before
    run = subprocess.run([exe, "export", bag_path, "-o", tmp_path / "csv", "--format", "csv", "/nope"], capture_output=True, text=True)
    assert run.returncode == 2 and "/nope" in run.stderr
