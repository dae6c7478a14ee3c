"""rbag.Reader on real bags: the summary, topic and time selection, raw and decoded messages,
closing, threads."""
import threading

import numpy as np
import pytest

import rbag
from conftest import TEST_MSGS, corpus


def test_summary_of_a_ros1_bag():
    path = corpus("ros1/multi_lz4.bag")
    with rbag.Reader(path) as bag:
        topics = bag.topics
        assert {"/chatter", "/imu", "/tf", "/camera/image_raw", "/robot_description"} <= set(topics)
        imu = topics["/imu"]
        assert (imu.name, imu.type, imu.encoding) == ("/imu", "sensor_msgs/Imu", "ros1")
        assert imu.count > 100 and 90 < imu.frequency < 110
        assert "geometry_msgs/Vector3 linear_acceleration" in imu.definition
        assert sum(t.count for t in topics.values()) == bag.message_count
        assert bag.start < bag.end and bag.duration == bag.end - bag.start
        info = bag.info
        assert info["message_count"] == bag.message_count and info["storage"] == "ros1"
        assert "/imu" in str(bag) and "sensor_msgs/Imu" in str(bag)
        assert {c.topic for c in bag.connections} == set(topics)


def test_qos_and_definition_of_a_rosbag2_topic():
    with rbag.Reader(corpus("ros2/mcap/talker")) as bag:
        topic = bag.topics["/topic"]
        assert topic.type == "std_msgs/msg/String" and topic.encoding == "cdr"
        assert "reliability" in topic.qos
        assert "string data" in topic.definition


def test_topics_and_time_window_select_messages():
    with rbag.Reader(corpus("ros1/multi_none.bag")) as bag:
        imu = list(bag.messages(topics="/imu"))
        assert len(imu) == bag.topics["/imu"].count
        assert all(m.topic == "/imu" and m.type == "sensor_msgs/Imu" for m in imu)
        times = [m.log_time for m in imu]
        assert times == sorted(times)
        start, end = times[10], times[20]
        window = list(bag.messages(topics=["/imu", "/chatter"], start=start, end=end))
        assert window and all(start <= m.log_time < end for m in window)
        assert [m.log_time for m in window if m.topic == "/imu"] == times[10:20]


def test_decoded_messages_have_fields_numpy_arrays_and_a_yaml_repr():
    with rbag.Reader(corpus("ros1/multi_none.bag")) as bag:
        m = next(iter(bag.messages(topics="/imu")))
        imu = m.message
        assert imu._type == "sensor_msgs/Imu"
        assert imu._fields[:2] == ("header", "orientation")
        assert isinstance(imu.linear_acceleration.z, float)
        cov = imu.orientation_covariance
        assert isinstance(cov, np.ndarray) and cov.dtype == np.float64 and cov.shape == (9,)
        assert imu.header.stamp.secs > 0 and isinstance(imu.header.frame_id, str)
        d = imu.to_dict()
        assert d["linear_acceleration"]["z"] == imu.linear_acceleration.z
        text = repr(imu)
        assert "linear_acceleration:\n  x: " in text and "frame_id: " in text
        with pytest.raises(AttributeError, match=r'no field "nope" \(it has: header, orientation, '):
            imu.nope
        image = next(iter(bag.messages(topics="/camera/image_raw"))).message
        assert image.data.dtype == np.uint8 and image.data.size == image.height * image.step


def test_raw_messages_carry_bytes_only():
    with rbag.Reader(corpus("ros2/sqlite3/cdr_test"), msg_path=[TEST_MSGS]) as bag:
        raw = list(bag.messages(raw=True))
        assert raw and all(m.message is None and isinstance(m.data, memoryview) and m.data.readonly for m in raw)
        decoded = list(bag.messages())
        assert [m.data for m in decoded] == [m.data for m in raw]


def test_a_topic_the_bag_lacks_is_an_error_listing_the_topics():
    with rbag.Reader(corpus("ros1/multi_none.bag")) as bag:
        with pytest.raises(rbag.TopicError, match="no topic /imuu.*/imu"):
            bag.messages(topics="/imuu")


def test_a_closed_reader_says_so():
    bag = rbag.Reader(corpus("ros1/multi_none.bag"))
    it = bag.messages(topics="/chatter")
    bag.close()
    with pytest.raises(rbag.ClosedError):
        bag.topics
    # An iterator started before keeps its bag open.
    assert sum(1 for _ in it) > 0


def test_readers_work_from_threads():
    path = corpus("ros1/multi_bz2.bag")
    counts = []

    def read():
        with rbag.Reader(path) as bag:
            counts.append(sum(1 for _ in bag.messages()))

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with rbag.Reader(path) as bag:
        assert counts == [bag.message_count] * 4


def test_several_bags_read_as_one_in_time_order():
    a, b = corpus("ros1/multi_none.bag"), corpus("ros2/mcap/talker")
    def listed(paths):
        with rbag.Reader(paths) as bag:
            return [(m.topic, m.log_time, m.connection.bag, m.message._type) for m in bag.messages()]
    one, two = listed(a), listed(b)
    both = listed([a, b])
    # Log-time order, ties in the order the bags are given (a stable sort of the two).
    expected = sorted([(t, lt, 0, ty) for t, lt, _, ty in one] + [(t, lt, 1, ty) for t, lt, _, ty in two],
                      key=lambda m: m[1])
    assert both == expected
    with rbag.Reader([a, b]) as bag:
        assert bag.paths == [str(a), str(b)] and len(bag.info) == 2
        assert bag.message_count == len(one) + len(two)
        assert "/topic" in bag.topics and "/imu" in bag.topics
        assert {c.bag for c in bag.connections} == {0, 1}
        with pytest.raises(rbag.TopicError):
            bag.messages(topics="/nope")
        assert len(list(bag.messages(topics="/topic"))) == bag.topics["/topic"].count


def test_large_payloads_are_shared_read_only_views():
    with rbag.Reader(corpus("ros1/multi_none.bag")) as bag:
        image = next(iter(bag.messages(topics="/camera/image_raw", raw=True)))
        small = next(iter(bag.messages(topics="/chatter", raw=True)))
    # Still readable after the reader closed: the view keeps its buffer alive.
    assert len(image.data) > 4096 and image.data.obj is not None and not isinstance(image.data.obj, bytes)
    assert isinstance(small.data.obj, bytes)
    with pytest.raises(TypeError):
        image.data[0] = 1
    with pytest.raises(ValueError):
        image.data.obj[0] = 1
    assert bytes(image.data)[:4] == image.data[:4].tobytes()
