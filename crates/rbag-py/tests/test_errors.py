"""Bad input raises rbag.Error with a clear message; the interpreter survives and the next call
works. The inputs are the kinds the CLI's bad-input tests use: truncated and corrupted copies of
real bags, foreign files, an unindexed recording."""
import os
import shutil

import pytest

import rbag
from conftest import corpus


def damaged(tmp_path, src, name, edit):
    data = bytearray(src.read_bytes())
    edit(data)
    out = tmp_path / name
    out.write_bytes(bytes(data))
    return out


def read_all(path, **kw):
    with rbag.Reader(path, **kw) as bag:
        return sum(1 for _ in bag.messages())


def corrupt_inputs(tmp_path):
    bag = corpus("ros1/multi_lz4.bag")
    mcap = corpus("ros2/mcap/talker/talker.mcap")
    size = bag.stat().st_size
    yield damaged(tmp_path, bag, "truncated.bag", lambda d: d.__delitem__(slice(size // 2, None)))
    yield damaged(tmp_path, bag, "zeroed.bag", lambda d: d.__setitem__(slice(4096, 8192), bytes(4096)))
    yield damaged(tmp_path, bag, "flipped.bag", lambda d: d.__setitem__(slice(20, 40), bytes(range(20))))
    yield damaged(tmp_path, mcap, "truncated.mcap", lambda d: d.__delitem__(slice(len(d) // 2, None)))
    yield damaged(tmp_path, mcap, "zeroed.mcap", lambda d: d.__setitem__(slice(100, 400), b"\xff" * 300))
    (tmp_path / "empty.bag").write_bytes(b"")
    yield tmp_path / "empty.bag"
    (tmp_path / "text.mcap").write_text("not a bag at all\n" * 100)
    yield tmp_path / "text.mcap"
    yield tmp_path / "missing.bag"


def test_corrupt_inputs_raise_rbag_errors_and_the_next_call_works(tmp_path):
    raised = 0
    for path in corrupt_inputs(tmp_path):
        try:
            read_all(path)
        except rbag.InternalError as e:  # a panic caught: still a defect
            pytest.fail(f"{path.name}: internal error: {e}")
        except rbag.Error as e:
            raised += 1
            assert path.name in str(e), f"{path.name}: the message does not name the file: {e}"
        # The interpreter is fine and the next call works.
        assert read_all(corpus("ros1/multi_none.bag")) > 0
    assert raised >= 6, raised


def test_an_unindexed_recording_reads_with_a_warning_or_a_clear_error(tmp_path):
    active = corpus("ros1/crashed.bag.active")
    try:
        n = read_all(active)
        assert n > 0
    except rbag.StorageError as e:
        assert "crashed.bag.active" in str(e)


def test_every_error_is_an_rbag_error():
    for cls in (rbag.StorageError, rbag.DecodeError, rbag.TopicError, rbag.ClosedError, rbag.InternalError):
        assert issubclass(cls, rbag.Error) and issubclass(cls, Exception)
