"""rosbags' side of bench/python.sh's to_arrow row (run with the peers venv python): the loop a
rosbags user writes to get a topic of sensor_msgs/Imu into pandas. rosbags.highlevel's AnyReader
reads the ROS 1 bag, `reader.deserialize` turns every message into an object, a plain loop
appends each field to a column list, and `pandas.DataFrame` builds the frame: the same columns
as `rbag.Reader.to_arrow(TOPIC).to_pandas()` (dotted names, every field, the covariances as one
float64[9] numpy array per row) with `log_time` as a DatetimeIndex. The loop names the Imu
fields itself. rosbags-dataframe's `get_dataframe(reader, topic, keys)`, which resolves dotted
keys per message, builds the same frame but is slower (about 5.1 s against this loop's 3.0 s
for 90,000 Imu), so it is not used: the faster peer is the one compared.

The timer covers opening the bag, deserializing, the loop and the DataFrame, not the imports
(pandas and numpy are imported first, as a user's script would have them already).

usage: arrow_rosbags_df.py BAG TOPIC [--check]   →   rows= cols= elapsed=
  --check  afterwards (not timed) compares the frame with rbag's to_arrow(TOPIC).to_pandas()
"""
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from rosbags.highlevel import AnyReader

COLUMNS = [
    "header.seq", "header.stamp.secs", "header.stamp.nsecs", "header.frame_id",
    "orientation.x", "orientation.y", "orientation.z", "orientation.w",
    "orientation_covariance",
    "angular_velocity.x", "angular_velocity.y", "angular_velocity.z",
    "angular_velocity_covariance",
    "linear_acceleration.x", "linear_acceleration.y", "linear_acceleration.z",
    "linear_acceleration_covariance",
]


def read(path, topic):
    times = []
    seq, secs, nsecs, frame = [], [], [], []
    ox, oy, oz, ow, ocov = [], [], [], [], []
    ax, ay, az, acov = [], [], [], []
    lx, ly, lz, lcov = [], [], [], []
    with AnyReader([Path(path)]) as reader:
        conns = [c for c in reader.connections if c.topic == topic]
        for conn, t, raw in reader.messages(connections=conns):
            m = reader.deserialize(raw, conn.msgtype)
            times.append(t)
            h = m.header
            seq.append(h.seq)
            secs.append(h.stamp.sec)
            nsecs.append(h.stamp.nanosec)
            frame.append(h.frame_id)
            o = m.orientation
            ox.append(o.x); oy.append(o.y); oz.append(o.z); ow.append(o.w)
            ocov.append(m.orientation_covariance)
            a = m.angular_velocity
            ax.append(a.x); ay.append(a.y); az.append(a.z)
            acov.append(m.angular_velocity_covariance)
            l = m.linear_acceleration
            lx.append(l.x); ly.append(l.y); lz.append(l.z)
            lcov.append(m.linear_acceleration_covariance)
    index = pd.DatetimeIndex(np.array(times, dtype="datetime64[ns]"), name="log_time")
    data = {
        "header.seq": np.array(seq, dtype=np.uint32),
        "header.stamp.secs": np.array(secs, dtype=np.uint32),
        "header.stamp.nsecs": np.array(nsecs, dtype=np.uint32),
        "header.frame_id": frame,
        "orientation.x": ox, "orientation.y": oy, "orientation.z": oz, "orientation.w": ow,
        "orientation_covariance": ocov,
        "angular_velocity.x": ax, "angular_velocity.y": ay, "angular_velocity.z": az,
        "angular_velocity_covariance": acov,
        "linear_acceleration.x": lx, "linear_acceleration.y": ly, "linear_acceleration.z": lz,
        "linear_acceleration_covariance": lcov,
    }
    return pd.DataFrame(data, index=index, columns=COLUMNS)


def check(df, path, topic):
    import rbag

    ref = rbag.Reader(path).to_arrow(topic).to_pandas().set_index("log_time")
    assert list(df.columns) == list(ref.columns), (list(df.columns), list(ref.columns))
    assert len(df) == len(ref), (len(df), len(ref))
    assert (df.index == ref.index).all(), "log_time differs"
    for name in COLUMNS:
        a, b = df[name], ref[name]
        if name.endswith("covariance"):
            assert np.array_equal(np.stack(a.to_numpy()), np.stack(b.to_numpy())), name
        else:
            assert (a.to_numpy() == b.to_numpy()).all(), name
    print(f"check=ok rows={len(ref)}", file=sys.stderr)


def main(path, topic, do_check):
    start = time.perf_counter()
    df = read(path, topic)
    elapsed = time.perf_counter() - start
    print(f"rows={len(df)} cols={len(df.columns) + 1} elapsed={elapsed:.6f}")
    if do_check:
        check(df, path, topic)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], "--check" in sys.argv[3:])
