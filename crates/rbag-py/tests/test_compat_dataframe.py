"""rbag.compat.dataframe.get_dataframe gives the DataFrame rosbags-dataframe gives, on every
format."""
import pathlib

import numpy as np
import pytest

import rbag
from conftest import TEST_MSGS, corpus, peer_module

CASES = [
    ("ros1/multi_none.bag", "/imu", ["linear_acceleration.x", "header.frame_id", "orientation_covariance"]),
    ("ros1/multi_lz4.bag", "/odom", ["pose.pose.position.x", "twist.twist.angular.z", "child_frame_id"]),
    ("ros2/mcap/wbag", "CCC", ["data"]),
    ("ros2/mcap/cdr_test", "/array_topic", ["float64_values", "string_values", "int32_values"]),
    ("ros2/sqlite3/cdr_test", "/test_topic", ["int32_value", "bool_value", "float64_value"]),
]


@pytest.mark.parametrize("rel,topic,keys", CASES)
def test_get_dataframe_equals_rosbags_dataframe(rel, topic, keys):
    peer_module("rosbags.dataframe")
    from rosbags.dataframe import get_dataframe as theirs
    from rosbags.highlevel import AnyReader

    from rbag.compat.dataframe import get_dataframe

    path = corpus(rel)
    with rbag.Reader(path, msg_path=[TEST_MSGS]) as reader:
        if topic not in reader.topics:
            pytest.fail(f"{rel} has no {topic}: {sorted(reader.topics)}")
        ours = get_dataframe(reader, topic, keys)
    with AnyReader([pathlib.Path(path)]) as reader:
        if rel.startswith("ros2/sqlite3/cdr_test"):
            from rosbags.typesys import get_types_from_msg

            root = pathlib.Path("/usr/share/test_interface_files/msg")
            reader.typestore.register({k: v for f in root.glob("*.msg")
                                       for k, v in get_types_from_msg(f.read_text(), f"test_msgs/msg/{f.stem}").items()})
        expected = theirs(reader, topic, keys)
    assert len(ours) > 0 and list(ours.columns) == list(expected.columns)
    assert (ours.index == expected.index).all()
    for key in keys:
        for a, b in zip(ours[key], expected[key]):
            if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                assert np.array_equal(np.asarray(a), np.asarray(b)), key
            else:
                assert a == b, key


def test_unknown_topics_and_fields_are_errors():
    from rbag.compat.dataframe import DataframeError, get_dataframe

    with rbag.Reader(corpus("ros1/multi_none.bag")) as reader:
        with pytest.raises(DataframeError, match="unknown topic '/nope'"):
            get_dataframe(reader, "/nope", ["x"])
        with pytest.raises(DataframeError, match="nope"):
            get_dataframe(reader, "/imu", ["linear_acceleration.nope"])
