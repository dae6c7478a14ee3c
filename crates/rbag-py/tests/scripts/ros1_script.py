"""A ROS 1 script written against Debian's rosbag. The test runs it as it is under
/usr/bin/python3 (with Debian's rosbag) and with its one import line swapped for
`from rbag.compat import rosbag`; the output must be the same."""
import sys

import rosbag

bag = rosbag.Bag(sys.argv[1])
info = bag.get_type_and_topic_info()
for topic in sorted(info.topics):
    t = info.topics[topic]
    print("topic", topic, t.msg_type, t.message_count, t.connections)
print("types", sorted(info.msg_types))
print("start %.6f end %.6f count %d" % (bag.get_start_time(), bag.get_end_time(), bag.get_message_count()))
print("imu count", bag.get_message_count("/imu"))
seen = {}
for topic, msg, t in bag.read_messages(topics=["/imu", "/chatter", "/tf", "/camera/image_raw", "/array"]):
    seen[topic] = seen.get(topic, 0) + 1
    if topic == "/imu":
        print(t.to_sec(), t.to_nsec(), msg._type, msg.header.frame_id, msg.header.stamp.to_nsec(),
              msg.linear_acceleration.x, msg.angular_velocity.z, msg.orientation_covariance[0],
              len(msg.orientation_covariance), type(msg.orientation_covariance).__name__)
    elif topic == "/chatter":
        print(t.secs, t.nsecs, msg.data)
    elif topic == "/tf":
        print(t.to_nsec(), [tr.child_frame_id for tr in msg.transforms],
              msg.transforms[0].transform.translation.x, msg.transforms[0].header.stamp.secs)
    elif topic == "/camera/image_raw":
        print(t.to_nsec(), msg.encoding, msg.width, msg.height, type(msg.data).__name__, len(msg.data), msg.data[:8])
    else:
        print(t.to_nsec(), msg.data[:3], type(msg.data).__name__, [d.label for d in msg.layout.dim])

window = [t.to_nsec() for _, _, t in bag.read_messages(topics="/imu")]
print("seen", sorted(seen.items()), len(window))
bag.close()
