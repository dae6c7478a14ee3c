"""Drop-in replacements for the Python APIs people already use with bags.

``from rbag.compat import rosbag`` gives ROS 1's ``rosbag.Bag`` over every format rbag reads.
"""
