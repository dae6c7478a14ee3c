"""rosbags' side of the decode benchmark: `decode_rosbags.py MANIFEST [ROUNDS] [ROUND_MS]`.

For every payload of the manifest (see decode_gen.py): deserialises it once with
`deserialize_cdr`/`deserialize_ros1` and checks its PATH=VALUE fields, picks a loop count so that
one round takes about ROUND_MS (default 200) ms, then times ROUNDS (default 7) rounds with
`time.perf_counter_ns` and prints `LABEL ENC bytes=B decode_ns=MEDIAN` (ns per message).
"""
import re
import statistics
import sys
import time
from pathlib import Path

from decode_gen import typestore


def lookup(msg, path):
    for part in path.split('.'):
        m = re.fullmatch(r'(\w+)(?:\[(\d+)\])?', part)
        msg = getattr(msg, m[1])
        if m[2] is not None:
            msg = msg[int(m[2])]
    return msg


def check(msg, checks):
    for c in checks:
        path, want = c.split('=', 1)
        got = lookup(msg, path)
        ok = got == want if isinstance(got, str) else float(got) == float(want)
        if not ok:
            raise SystemExit(f'decode_rosbags.py: {path} is {got!r}, expected {want}')


def main() -> None:
    manifest = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    round_ns = (int(sys.argv[3]) if len(sys.argv) > 3 else 200) * 1_000_000
    stores = {}
    for line in Path(manifest).read_text().splitlines():
        label, enc, ty, file, *checks = line.split()
        ts = stores.setdefault(enc, typestore(enc))
        decode = ts.deserialize_cdr if enc == 'cdr' else ts.deserialize_ros1
        raw = Path(file).read_bytes()
        check(decode(raw, ty), checks)

        def once(n):
            t0 = time.perf_counter_ns()
            for _ in range(n):
                decode(raw, ty)
            return time.perf_counter_ns() - t0

        n = 1
        while (t := once(n)) < round_ns // 10:
            n *= 10
        n = max(1, n * round_ns // max(t, 1))
        ns = statistics.median(once(n) / n for _ in range(rounds))
        print(f'{label} {enc} bytes={len(raw)} decode_ns={ns:.1f}', flush=True)


if __name__ == '__main__':
    main()
