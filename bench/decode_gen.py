"""Payloads of the decode benchmark: `decode_gen.py OUTDIR`.

Builds four messages with rosbags' type stores (ROS 2 humble for CDR, ROS 1 noetic for ROS 1),
serialises each with `serialize_cdr` (little-endian) and `serialize_ros1` into OUTDIR/NAME.ENC,
and writes OUTDIR/manifest, one line per payload that bench_decode and decode_rosbags.py both
read:

    LABEL ENC TYPE FILE PATH=VALUE...

PATH=VALUE are the checks each side makes once before timing (a field path and the value it
must decode to: a string, or a number compared as a float).
"""
import sys
from pathlib import Path

import numpy as np
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

ENCODINGS = ['cdr', 'ros1']
RNG_SEED = 0xdec0de


def typestore(enc):
    """rosbags' store for an encoding: humble for CDR, noetic for ROS 1 (whose store lacks
    tf2_msgs/TFMessage: it is registered from its one-line definition)."""
    ts = get_typestore(Stores.ROS2_HUMBLE if enc == 'cdr' else Stores.ROS1_NOETIC)
    if 'tf2_msgs/msg/TFMessage' not in ts.types:
        ts.register(get_types_from_msg('geometry_msgs/TransformStamped[] transforms', 'tf2_msgs/msg/TFMessage'))
    return ts


def messages(ts, ros1):
    """(name, label, type, message, checks) of the four benchmark messages in store `ts`."""
    T = ts.types
    rng = np.random.default_rng(RNG_SEED)
    stamp = T['builtin_interfaces/msg/Time'](sec=1_700_000_000, nanosec=123_456_789)

    def header(frame):
        h = T['std_msgs/msg/Header']
        return h(seq=42, stamp=stamp, frame_id=frame) if ros1 else h(stamp=stamp, frame_id=frame)

    V3, Q = T['geometry_msgs/msg/Vector3'], T['geometry_msgs/msg/Quaternion']
    cov = np.arange(9, dtype=np.float64) * 0.01
    imu = T['sensor_msgs/msg/Imu'](
        header=header('imu_link'),
        orientation=Q(x=0.0, y=0.0, z=0.38268343236, w=0.92387953251), orientation_covariance=cov,
        angular_velocity=V3(x=0.01, y=-0.02, z=0.5), angular_velocity_covariance=cov,
        linear_acceleration=V3(x=0.1, y=-0.2, z=9.75), linear_acceleration_covariance=cov)

    def tf(parent, child, x):
        return T['geometry_msgs/msg/TransformStamped'](
            header=header(parent), child_frame_id=child,
            transform=T['geometry_msgs/msg/Transform'](translation=V3(x=x, y=0.0, z=0.1), rotation=Q(x=0.0, y=0.0, z=0.0, w=1.0)))
    tfm = T['tf2_msgs/msg/TFMessage'](transforms=[tf('odom', 'base_link', 1.5), tf('base_link', 'laser', 0.25)])

    n = 65536  # x y z intensity float32: 16 B per point, 1 MiB of data
    PF = T['sensor_msgs/msg/PointField']
    fields = [PF(name=c, offset=4 * i, datatype=PF.FLOAT32, count=1) for i, c in enumerate(['x', 'y', 'z', 'intensity'])]
    cloud_data = np.frombuffer(rng.random((n, 4), dtype=np.float32).tobytes(), np.uint8)
    cloud = T['sensor_msgs/msg/PointCloud2'](
        header=header('lidar'), height=1, width=n, fields=fields, is_bigendian=False,
        point_step=16, row_step=16 * n, data=cloud_data, is_dense=True)

    w, h = 640, 480
    img_data = rng.integers(0, 256, size=w * h * 3, dtype=np.uint8)
    image = T['sensor_msgs/msg/Image'](
        header=header('camera'), height=h, width=w, encoding='rgb8', is_bigendian=0, step=3 * w, data=img_data)

    last = lambda a: f'data[{len(a) - 1}]={int(a[-1])}'  # noqa: E731
    return [
        ('imu', 'sensor_msgs/Imu', 'sensor_msgs/msg/Imu', imu, ['header.frame_id=imu_link', 'linear_acceleration.z=9.75']),
        ('tf', 'tf2_msgs/TFMessage', 'tf2_msgs/msg/TFMessage', tfm,
         ['transforms[1].child_frame_id=laser', 'transforms[1].transform.translation.x=0.25']),
        ('cloud', 'sensor_msgs/PointCloud2', 'sensor_msgs/msg/PointCloud2', cloud,
         ['fields[3].name=intensity', f'width={n}', last(cloud_data)]),
        ('image', 'sensor_msgs/Image', 'sensor_msgs/msg/Image', image, ['encoding=rgb8', f'width={w}', last(img_data)]),
    ]


def main() -> None:
    out = Path(sys.argv[1])
    lines = []
    for enc in ENCODINGS:
        ts = typestore(enc)
        for name, label, ty, msg, checks in messages(ts, enc == 'ros1'):
            raw = ts.serialize_cdr(msg, ty) if enc == 'cdr' else ts.serialize_ros1(msg, ty)
            path = out / f'{name}.{enc}'
            path.write_bytes(bytes(raw))
            lines.append(' '.join([label, enc, ty, str(path), *checks]))
    (out / 'manifest').write_text('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
