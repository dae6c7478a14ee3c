"""Read and write robot bags from Python, with no ROS installed.

rbag reads ROS 1 bags (``.bag``), rosbag2 bags (directories with ``metadata.yaml``, or single
``.db3``/``.mcap`` files) and writes any of them::

    import rbag

    with rbag.Reader("run.bag") as bag:
        print(bag.topics)
        for m in bag.messages(topics=["/imu"]):
            print(m.log_time, m.message.linear_acceleration.x)

Decoded messages are ``rbag.Msg`` objects: attribute access, ``_type``, ``to_dict()``, numpy
arrays for numeric arrays. Every failure is an ``rbag.Error`` whose message names the file,
offset, topic or field at fault.
"""

# Decoded arrays and shared payloads are numpy arrays: load numpy with the package, not
# inside the first read (its import takes ~0.1 s and starts its BLAS threads).
import numpy as _numpy  # noqa: F401

from rbag._rbag import (
    ClosedError,
    Connection,
    DecodeError,
    Error,
    InternalError,
    Message,
    Messages,
    Msg,
    Reader,
    StorageError,
    Topic,
    TopicError,
    Writer,
    __version__,
)
from rbag._fleet import Partition, plan, read_partition

__all__ = [
    "ClosedError",
    "Connection",
    "DecodeError",
    "Error",
    "InternalError",
    "Message",
    "Messages",
    "Msg",
    "Partition",
    "Reader",
    "StorageError",
    "Topic",
    "TopicError",
    "Writer",
    "__version__",
    "plan",
    "read_partition",
]
