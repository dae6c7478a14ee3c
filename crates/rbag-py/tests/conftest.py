"""Shared by the rbag Python tests: where the corpus, the oracles and the peers are.

The corpus (../shared/corpus beside the project) is read in place. Without it, the tests that
need it are skipped and say why; under CI=true a missing corpus or peer is a failure.
"""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
CORPUS = ROOT.parent / "shared" / "corpus"
ORACLE = ROOT / "tests" / "oracle"
CI = os.environ.get("CI") == "true"
TEST_MSGS = "test_msgs=/usr/share/test_interface_files"
ROSBAG_PYTHON = "/usr/bin/python3"


def missing(what):
    """Skip (or, under CI=true, fail) a test that needs something absent."""
    if CI:
        pytest.fail(f"{what} is missing, and CI=true requires it")
    log = os.environ.get("RBAG_SKIP_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"python: {what}\n")
    pytest.skip(f"skipped: {what} is missing")


def corpus(rel):
    path = CORPUS / rel
    if not path.exists():
        missing(f"the corpus ({path})")
    return path


def rosbag_python():
    """Debian's /usr/bin/python3, where rosbag and genpy import."""
    ok = os.path.exists(ROSBAG_PYTHON) and subprocess.run(
        [ROSBAG_PYTHON, "-c", "import rosbag, genpy"], capture_output=True
    ).returncode == 0
    if not ok:
        missing("Debian's rosbag (python3-rosbag, scripts/setup-peers.sh)")
    return ROSBAG_PYTHON


def peer_module(name):
    """A Python peer in this interpreter (the venv of scripts/setup-peers.sh)."""
    try:
        __import__(name)
    except ImportError:
        missing(f"the Python package {name} (scripts/setup-peers.sh)")


def oracle(python, script, *args, ok=(0,)):
    """Runs a decode oracle of tests/oracle; returns its NDJSON lines."""
    with_home = dict(os.environ, ROS_HOME=str(pathlib.Path(os.environ.get("TMPDIR", "/tmp"))), PYTHONUTF8="1")
    out = subprocess.run([python, str(ORACLE / script), *map(str, args)], capture_output=True, env=with_home)
    assert out.returncode in ok, f"{script} {args}: {out.stderr.decode(errors='replace')}"
    return out.stdout.decode("utf-8").splitlines()


@pytest.fixture
def tmp(tmp_path):
    return tmp_path


def which(tool):
    return shutil.which(tool)


sys.path.insert(0, str(ORACLE))
