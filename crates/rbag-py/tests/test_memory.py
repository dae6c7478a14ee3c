"""Iterating a 300 MB bag keeps the interpreter's resident memory under 150 MB above what it
was before the read (the peak, VmHWM, measured in a fresh interpreter)."""
import subprocess
import sys

import rbag

SCRIPT = """
import sys, zlib, rbag

def rss_kib(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])

base = rss_kib("VmRSS")
n = total = 0
with rbag.Reader(sys.argv[1]) as bag:
    for m in bag.messages(raw=sys.argv[2] == "raw"):
        n += 1
        total += len(m.data)
        zlib.adler32(m.data)  # touch every byte: shared views must not keep pages resident
print(n, total, base, rss_kib("VmHWM"))
"""


def make_bag(path, mib):
    """A ROS 1 bag of `mib` MiB of sensor_msgs/Image-sized messages (and small ones between)."""
    payload = bytes(range(256)) * 4096  # 1 MiB
    with rbag.Writer(path) as w:
        image = w.add_connection("/camera", "std_msgs/String")
        small = w.add_connection("/chatter", "std_msgs/String")
        for i in range(mib):
            t = 1_000_000_000 + i * 10_000_000
            w.write(image, t, len(payload).to_bytes(4, "little") + payload)
            for k in range(20):
                w.write(small, t + k, {"data": f"message {i}.{k}"})
    return path


def test_iterating_a_300_mb_bag_keeps_rss_bounded(tmp_path):
    bag = make_bag(tmp_path / "big.bag", 300)
    assert bag.stat().st_size > 300 * 2**20
    for mode in ("raw", "decoded"):
        out = subprocess.run([sys.executable, "-c", SCRIPT, str(bag), mode], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        n, total, base, peak = map(int, out.stdout.split())
        assert n == 300 * 21 and total > 300 * 2**20
        above = (peak - base) / 1024
        print(f"{mode}: peak RSS {above:.0f} MiB above the interpreter's {base / 1024:.0f} MiB", file=sys.stderr)
        assert above < 150, f"{mode}: {above:.0f} MiB above the baseline"
