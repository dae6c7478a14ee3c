"""rbag.Writer: bags written from dicts, rbag.Msg objects and raw bytes open in rosbags, the
mcap library and Debian's rosbag with the same messages."""
import json
import subprocess
import sys

import numpy as np
import pytest

import rbag
from conftest import corpus, peer_module, rosbag_python

IMU = {
    "header": {"stamp": {"sec": 5, "nanosec": 7}, "frame_id": "imu_link"},
    "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0},
    "orientation_covariance": [0.5] * 9,
    "angular_velocity": {"x": 1.0, "y": 2.0, "z": 3.0},
    "angular_velocity_covariance": np.zeros(9),
    "linear_acceleration": {"x": 0.1, "y": 0.2, "z": 9.81},
    "linear_acceleration_covariance": [0.0] * 9,
}


def write_ros2(path, storage):
    with rbag.Writer(path, storage) as w:
        imu = w.add_connection("/imu", "sensor_msgs/msg/Imu")
        chatter = w.add_connection("/chatter", "std_msgs/msg/String")
        for i in range(10):
            w.write(imu, 1_000_000_000 + i, dict(IMU, linear_acceleration={"x": i, "y": 0.0, "z": 9.81}))
            w.write(chatter, 1_000_000_000 + i, {"data": f"hello {i}"})
    return path


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_rosbag2_written_from_dicts_reads_back(tmp_path, storage):
    out = write_ros2(tmp_path / "out", storage)
    with rbag.Reader(out) as bag:
        assert bag.info["storage"] == storage
        msgs = list(bag.messages(topics="/imu"))
        assert [m.message.linear_acceleration.x for m in msgs] == [float(i) for i in range(10)]
        assert msgs[0].message.header.frame_id == "imu_link"
        assert list(msgs[0].message.orientation_covariance) == [0.5] * 9


def test_rosbags_reads_what_rbag_wrote(tmp_path):
    peer_module("rosbags")
    from rosbags.highlevel import AnyReader

    out = write_ros2(tmp_path / "out", "sqlite3")
    with AnyReader([out]) as reader:
        got = [(c.topic, reader.deserialize(raw, c.msgtype)) for c, _, raw in reader.messages()]
    chatter = [m.data for t, m in got if t == "/chatter"]
    assert chatter == [f"hello {i}" for i in range(10)]
    imu = [m for t, m in got if t == "/imu"]
    assert [m.linear_acceleration.x for m in imu] == [float(i) for i in range(10)]


def test_the_mcap_library_reads_what_rbag_wrote(tmp_path):
    peer_module("mcap_ros2")
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    out = tmp_path / "out.mcap"
    write_ros2(out, None)
    with open(out, "rb") as f:
        got = [(c.topic, m) for _, c, _, m in make_reader(f, decoder_factories=[DecoderFactory()]).iter_decoded_messages()]
    assert [m.data for t, m in got if t == "/chatter"] == [f"hello {i}" for i in range(10)]
    assert [m.header.frame_id for t, m in got if t == "/imu"] == ["imu_link"] * 10


def test_debian_rosbag_reads_a_ros1_bag_rbag_wrote(tmp_path):
    python = rosbag_python()
    out = tmp_path / "out.bag"
    with rbag.Writer(out) as w:
        c = w.add_connection("/chatter", "std_msgs/String")
        p = w.add_connection("/point", "geometry_msgs/Point")
        for i in range(5):
            w.write(c, 2_000_000_000 + i, {"data": f"hi {i}"})
            w.write(p, 2_000_000_000 + i, {"x": float(i), "y": 1.5, "z": -2.0})
    script = (
        "import json, rosbag, sys\n"
        "out = [[t, m.data if t == '/chatter' else [m.x, m.y, m.z], s.to_nsec()]"
        " for t, m, s in rosbag.Bag(sys.argv[1]).read_messages()]\n"
        "print(json.dumps(out))\n"
    )
    res = subprocess.run([python, "-c", script, str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    assert [m for t, m, _ in got if t == "/chatter"] == [f"hi {i}" for i in range(5)]
    assert [m for t, m, _ in got if t == "/point"] == [[float(i), 1.5, -2.0] for i in range(5)]
    assert got[0][2] == 2_000_000_000


def test_raw_bytes_and_msg_objects_copy_a_bag(tmp_path):
    src = corpus("ros1/multi_none.bag")
    out = tmp_path / "copy.mcap"
    with rbag.Reader(src) as bag, rbag.Writer(out) as w:
        ids = {}
        for c in bag.connections:
            ids[c.id] = w.add_connection(c.topic, c.type, definition=c.definition, encoding="ros1",
                                         definition_encoding="ros1msg", metadata=c.metadata)
        n = 0
        for m in bag.messages(topics=["/imu", "/chatter"]):
            conn = next(c for c in bag.connections if c.topic == m.topic and c.type == m.type)
            w.write(ids[conn.id], m.log_time, m.message if m.topic == "/imu" else m.data)
            n += 1
    with rbag.Reader(src) as a, rbag.Reader(out) as b:
        assert [m.data for m in a.messages(topics=["/imu", "/chatter"])] == [
            m.data for m in b.messages(topics=["/imu", "/chatter"])
        ]


def test_a_failed_write_leaves_nothing(tmp_path):
    out = tmp_path / "x.mcap"
    with pytest.raises(ValueError):
        with rbag.Writer(out) as w:
            c = w.add_connection("/chatter", "std_msgs/msg/String")
            w.write(c, 1, {"data": "ok"})
            raise ValueError("the caller's own error")
    assert not out.exists()
    with rbag.Writer(out) as w:
        c = w.add_connection("/chatter", "std_msgs/msg/String")
        with pytest.raises(ValueError, match='no field "data"'):
            w.write(c, 1, {"dat": "typo"})
        with pytest.raises(TypeError, match="data: expected str"):
            w.write(c, 1, {"data": 5})
    assert out.exists()
    with pytest.raises(rbag.StorageError, match="exists"):
        rbag.Writer(out)
    with pytest.raises(rbag.DecodeError, match="no_pkg/msg/Nothing"):
        with rbag.Writer(tmp_path / "y.mcap") as w:
            w.add_connection("/x", "no_pkg/msg/Nothing")


def fincore_bytes(path):
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", str(path)],
                         check=True, capture_output=True, text=True).stdout
    return int(out.strip())


@pytest.mark.parametrize("name", ["out.bag", "out.mcap"])
def test_direct_io_writer_reads_back_and_skips_the_page_cache(tmp_path, name):
    """direct_io="require" writes with O_DIRECT: the same messages, and next to nothing of the
    file in the page cache."""
    ros1 = name.endswith(".bag")
    with rbag.Writer(tmp_path / name, direct_io="require") as w:
        c = w.add_connection("/chatter", "std_msgs/String" if ros1 else "std_msgs/msg/String")
        for i in range(24):
            w.write(c, 1_000_000_000 + i, {"data": f"{i}" + "x" * 200_000})
    path = tmp_path / name
    assert fincore_bytes(path) * 100 <= path.stat().st_size
    with rbag.Reader(path) as bag:
        msgs = list(bag.messages())
        assert [m.message.data[:2] for m in msgs][:3] == ["0x", "1x", "2x"]
        assert len(msgs) == 24


def test_direct_io_rejects_other_values(tmp_path):
    with pytest.raises(ValueError, match="direct_io"):
        rbag.Writer(tmp_path / "x.mcap", direct_io="sometimes")
