#!/usr/bin/env python3
"""Decode every message of MCAP files with mcap + mcap_ros2 (the oracle), as NDJSON.

usage: .peers/venv/bin/python decode_mcap.py FILE.mcap [FILE2.mcap ...]

Prints {"topic", "log_time" (ns), "message" (canonical form, see canonical.py)} per line, file
after file in the order given, each file's messages in file order (log_time_order=False).
mcap_ros2 decodes CDR with the ros2msg schema stored in the file (`char` read as uint8: see
below). A channel whose schema it cannot use (none, ros2idl, or a definition it cannot parse)
is left out, its topic, schema and error go to stderr, the other topics are still printed, and
the exit is 3. A payload it cannot read stops that file there: topic, schema and error to
stderr, exit 3.
"""
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from canonical import emit  # noqa: E402

from mcap.reader import make_reader  # noqa: E402
from mcap_ros2 import _dynamic  # noqa: E402
from mcap_ros2._cdr import CdrReader  # noqa: E402
from mcap_ros2.decoder import DecoderFactory  # noqa: E402

# mcap_ros2 0.6.0 reads ROS 2 `char` as int8, but rosidl maps `char` to uint8 (0..255), as it
# does `byte`: read both unsigned, so the oracles agree on the one meaning.
_dynamic.FIELD_PARSERS["char"] = CdrReader.uint8
_dynamic.ARRAY_PARSERS["char"] = CdrReader.uint8_array


def complain(path, topic, schema, error):
    name, encoding = (schema.name, schema.encoding) if schema else (None, None)
    print(f"decode_mcap: {path}: topic {topic!r}, schema {name!r} ({encoding}): {error}", file=sys.stderr)


def undecodable(path, summary):
    """Topics of the channels whose schema mcap_ros2 cannot make a decoder from."""
    bad = set()
    for channel in summary.channels.values() if summary else ():
        schema = summary.schemas.get(channel.schema_id)
        try:
            ok = DecoderFactory().decoder_for(channel.message_encoding, schema) is not None
            error = f"no decoder for message encoding {channel.message_encoding!r}"
        except Exception as e:  # noqa: BLE001 - whatever the oracle raises is reported
            ok, error = False, f"{type(e).__name__}: {e}"
        if not ok:
            complain(path, channel.topic, schema, error)
            bad.add(channel.topic)
    return bad


def decode(path):
    """Print the file's messages; False if anything was left out."""
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        bad = undecodable(path, summary)
        topics = None if not bad else [c.topic for c in summary.channels.values() if c.topic not in bad]
        done = 0
        try:
            for _, channel, message, decoded in reader.iter_decoded_messages(topics, log_time_order=False):
                emit(channel.topic, message.log_time, decoded)
                done += 1
        except Exception as e:  # noqa: BLE001
            f.seek(0)
            messages = make_reader(f).iter_messages(topics, log_time_order=False)
            schema, channel, _ = next(itertools.islice(messages, done, None), (None, None, None))
            complain(path, channel.topic if channel else "?", schema, f"message {done}: {type(e).__name__}: {e}")
            return False
    return not bad


def main(paths):
    if not paths:
        sys.exit(__doc__.split("\n\n")[1])
    ok = True
    for path in paths:
        ok = decode(path) and ok
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
