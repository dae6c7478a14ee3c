"""`from rbag.compat import rosbag`: a ROS 1 script runs unchanged apart from its import, on a
corpus .bag (with the same output as under Debian's rosbag), and on a .db3 and an .mcap holding
the same messages (written here through rbag's own Python API), with the same output again."""
import os
import pathlib
import subprocess
import sys

import pytest

import rbag
from conftest import corpus, rosbag_python

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "ros1_script.py"


def run_script(python, bag, compat, tmp_path):
    text = SCRIPT.read_text()
    if compat:
        text = text.replace("\nimport rosbag\n", "\nfrom rbag.compat import rosbag\n", 1)
        assert "from rbag.compat import rosbag" in text
    script = tmp_path / ("compat.py" if compat else "original.py")
    script.write_text(text)
    env = dict(os.environ, ROS_HOME=str(tmp_path))
    out = subprocess.run([python, str(script), str(bag)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


def ros2_copy(src, out, storage):
    """The messages of a ROS 1 bag in a rosbag2 bag, through rbag.Reader(dialect="ros2") and
    rbag.Writer."""
    with rbag.Reader(src) as bag, rbag.Writer(out, storage) as w:
        ids = {}
        for m in bag.messages(dialect="ros2"):
            c = m.connection
            if m.topic not in ids:
                ids[m.topic] = w.add_connection(
                    c.topic, c.type, definition=c.definition, encoding=c.encoding,
                    definition_encoding=c.definition_encoding, metadata=c.metadata,
                )
            w.write(ids[m.topic], m.log_time, m.message)
    return out


def test_a_rosbag_script_runs_unchanged_on_every_format(tmp_path):
    python = rosbag_python()
    bag = corpus("ros1/multi_none.bag")
    theirs = run_script(python, bag, False, tmp_path)
    ours = run_script(sys.executable, bag, True, tmp_path)
    assert ours == theirs
    assert theirs.count("\n") > 500
    # The same messages in ROS 2 bags: the script's output differs only where ROS 2 cannot
    # hold what ROS 1 has (per-connection counts and MD5 sums are per bag, not per message).
    for name, storage in [("copy.db3", "sqlite3"), ("copy.mcap", "mcap")]:
        copy = ros2_copy(bag, tmp_path / name, storage)
        got = run_script(sys.executable, copy, True, tmp_path)
        body = lambda s: [l for l in s.splitlines() if not l.startswith(("topic ", "types "))]  # noqa: E731
        assert body(got) == body(theirs), name
        topics = lambda s: [l.split()[:4] for l in s.splitlines() if l.startswith("topic ")]  # noqa: E731
        assert topics(got) == topics(theirs), name


def test_compat_messages_look_like_genpy():
    from rbag.compat import rosbag

    with rosbag.Bag(corpus("ros1/multi_lz4.bag")) as bag:
        topic, msg, t = next(bag.read_messages(topics="/imu"))
        assert topic == "/imu" and msg._type == "sensor_msgs/Imu" and len(msg._md5sum) == 32
        assert isinstance(msg.orientation_covariance, tuple) and len(msg.orientation_covariance) == 9
        assert isinstance(msg.header.stamp, rosbag.Time) and t.to_nsec() > 0
        image = next(bag.read_messages(topics="/camera/image_raw")).message
        assert isinstance(image.data, bytes)
        arr = next(bag.read_messages(topics="/array")).message
        assert isinstance(arr.data, tuple) and isinstance(arr.layout.dim, list)
        # end_time is included, as in rosbag.
        times = [t for _, _, t in bag.read_messages(topics="/imu")]
        window = list(bag.read_messages(topics="/imu", start_time=times[3], end_time=times[5]))
        assert [m.timestamp for m in window] == times[3:6]
        assert bag.get_message_count(["/imu", "/nope"]) == len(times)


def test_service_events_are_left_out_of_a_ros1_view_with_a_warning():
    from rbag.compat import rosbag

    with rosbag.Bag(corpus("ros2/mcap/bag_with_topics_and_service_events")) as bag:
        with pytest.warns(UserWarning, match="_service_event left out"):
            topics = {topic for topic, _, _ in bag.read_messages()}
    assert topics and not any(t.endswith("/_service_event") for t in topics)
