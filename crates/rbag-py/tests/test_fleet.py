"""rbag.plan, rbag.read_partition, rbag.dask and rbag.ray over 8 bags in a real S3 server (moto,
started on 127.0.0.1 for this module): the distributed reads equal the concatenated
single-process to_arrow, row for row and in order."""
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

import rbag
from conftest import ROOT, missing, peer_module

BUCKET = "fleet"
FRAMES = ["base", "imu_link", "cam"]
BAGS = 8
PER_BAG = 500


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def put(base, key, path):
    """Uploads a file to moto (which checks no signature, but wants one to be present)."""
    auth = "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0"
    req = urllib.request.Request(f"{base}/{key}", data=pathlib.Path(path).read_bytes() if path else b"",
                                 method="PUT", headers={"Authorization": auth,
                                                        "Content-Type": "application/octet-stream"})
    urllib.request.urlopen(req).close()


@pytest.fixture(scope="module")
def bucket(tmp_path_factory):
    """8 ROS 1 bags of /imu, one after another in time, in a moto bucket; their URLs."""
    server = ROOT / ".peers" / "venv" / "bin" / "moto_server"
    if not server.exists():
        missing("moto (scripts/setup-peers.sh)")
    port = free_port()
    proc = subprocess.Popen([str(server), "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(f"{base}/moto-api/").close()
            break
        except OSError:
            assert time.time() < deadline, "moto did not start"
            time.sleep(0.1)
    env = {"AWS_ENDPOINT_URL": base, "AWS_ALLOW_HTTP": "true", "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"}
    os.environ.update(env)
    put(base, BUCKET, None)
    tmp = tmp_path_factory.mktemp("fleet")
    urls = []
    for b in range(BAGS):
        path = tmp / f"run{b}.bag"
        with rbag.Writer(path) as w:
            imu = w.add_connection("/imu", "sensor_msgs/Imu")
            for i in range(PER_BAG):
                t = 1_700_000_000_000_000_000 + (b * PER_BAG + i) * 10_000_000
                w.write(imu, t, {
                    "header": {"seq": i, "stamp": {"secs": t // 10**9, "nsecs": t % 10**9}, "frame_id": FRAMES[i % 3]},
                    "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0},
                    "orientation_covariance": [0.0] * 9,
                    "angular_velocity": {"x": 0.0, "y": 0.0, "z": 0.1},
                    "angular_velocity_covariance": [0.0] * 9,
                    "linear_acceleration": {"x": float(b * PER_BAG + i), "y": 0.5, "z": 9.81},
                    "linear_acceleration_covariance": [0.0] * 9,
                })
        put(base, f"{BUCKET}/runs/run{b}.bag", path)
        urls.append(f"s3://{BUCKET}/runs/run{b}.bag")
    yield urls, env
    proc.kill()
    proc.wait()


def single_process(urls):
    import pyarrow as pa

    return pa.concat_tables([rbag.Reader(u).to_arrow("/imu") for u in urls])


def test_the_plan_covers_every_message_once(bucket):
    urls, _ = bucket
    parts = rbag.plan(urls, "/imu", target_bytes=20_000)
    assert len(parts) > len(urls)
    assert [p.index for p in parts] == list(range(len(parts)))
    for a, b in zip(parts, parts[1:]):
        assert a.end <= b.start  # in order, no overlap: these bags follow each other
    import pyarrow as pa

    got = pa.concat_tables([rbag.read_partition(p) for p in parts])
    assert got.equals(single_process(urls))
    # A window: only the partitions it needs, and only its messages.
    start = 1_700_000_000_000_000_000 + 1_234 * 10_000_000
    end = start + 600 * 10_000_000
    window = rbag.plan(urls, ["/imu"], start=start, end=end, target_bytes=20_000)
    assert {p.bag for p in window} == set(urls[2:4])
    assert sum(rbag.read_partition(p).num_rows for p in window) == 600


def test_dask_read_topic_equals_the_single_process_read(bucket):
    peer_module("distributed")
    import dask
    import dask.dataframe  # noqa: F401
    import pandas as pd
    from distributed import Client, LocalCluster

    import rbag.dask

    urls, _ = bucket
    expected = single_process(urls).to_pandas().set_index("log_time")
    # Strings stay as pandas makes them (Dask would turn them into its own string type).
    dask.config.set({"dataframe.convert-string": False})
    # Workers are processes started now: they inherit the S3 settings of os.environ.
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster):
        df = rbag.dask.read_topic(urls, "/imu", target_bytes=20_000)
        assert df.known_divisions and df.npartitions > len(urls)
        got = df.compute()
        pd.testing.assert_frame_equal(got, expected)
        means = df.groupby("header.frame_id")["linear_acceleration.x"].mean().compute()
        pd.testing.assert_series_equal(
            means.sort_index(), expected.groupby("header.frame_id")["linear_acceleration.x"].mean().sort_index())
        counts = rbag.dask.map_messages(urls, lambda m: m.message.header.frame_id, "/imu",
                                        target_bytes=20_000).frequencies().compute()
        assert dict(counts) == expected["header.frame_id"].value_counts().to_dict()


def test_ray_read_topic_equals_the_single_process_read(bucket):
    peer_module("ray")
    import ray

    import rbag.ray

    urls, env = bucket
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order = True
        ds = rbag.ray.read_topic(urls, "/imu", target_bytes=20_000)
        import pyarrow as pa

        got = pa.concat_tables(ray.get(ds.to_arrow_refs()))
        expected = single_process(urls)
        assert got.num_rows == expected.num_rows
        assert got.column("log_time").to_pylist() == expected.column("log_time").to_pylist()
        assert got.column("linear_acceleration.x").to_pylist() == expected.column("linear_acceleration.x").to_pylist()
    finally:
        ray.shutdown()
