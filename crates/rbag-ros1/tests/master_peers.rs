//! The embedded master against real Debian ROS 1 peers on loopback: rostopic, rosparam, rosnode,
//! rospy nodes and the C++ recorder (roscpp's XmlRpc++). Each test has its own master port and
//! ROS home; every process it starts is killed when the test ends, pass or fail.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use rbag_ros1::master::Master;
use rbag_ros1::xmlrpc::Value;
use rbag_testkit::ros1::Ros1Env;

/// A graph whose master is ours, bound to a free loopback port.
fn graph(test: &str) -> Option<(Master, Ros1Env)> {
    let mut env = Ros1Env::new(test)?;
    let master = Master::start("127.0.0.1:0".parse().expect("addr")).expect("the master starts");
    env.port = master.local_addr().port();
    assert_eq!(master.uri(), env.master_uri());
    Some((master, env))
}

fn wait_until(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("timed out after {timeout:?} waiting for {what}");
}

/// The master's own answer to a call (as a node would get it).
fn ask(master: &Master, method: &str, params: &[&str]) -> Value {
    let params = params.iter().map(|p| Value::Str(p.to_string())).collect();
    master.call(method, params).unwrap_or_else(|e| panic!("{method}: {e:?}"))
}

fn publishers_of(master: &Master, topic: &str) -> usize {
    let state = ask(master, "getSystemState", &["/test"]);
    let pubs = state.as_array().and_then(|r| r[2].as_array()).and_then(|s| s[0].as_array()).unwrap_or(&[]);
    pubs.iter()
        .filter_map(Value::as_array)
        .find(|e| e[0].as_str() == Some(topic))
        .and_then(|e| e[1].as_array().map(<[Value]>::len))
        .unwrap_or(0)
}

fn run_ok(env: &Ros1Env, cmd: Command, what: &str) -> String {
    let (ok, out, err) = env.run(cmd, Duration::from_secs(30));
    assert!(ok, "{what} failed:\nstdout: {out}\nstderr: {err}");
    out
}

fn write_script(env: &Ros1Env, name: &str, text: &str) -> std::path::PathBuf {
    let p = env.home.path().join(name);
    std::fs::write(&p, text).expect("script written");
    p
}

fn python(env: &Ros1Env, script: &Path) -> Command {
    let mut cmd = env.command("/usr/bin/python3");
    cmd.arg(script);
    cmd
}

#[test]
fn rostopic_and_rosnode_list_what_is_registered() {
    let Some((master, mut env)) = graph("rostopic_and_rosnode_list_what_is_registered") else { return };
    let mut publisher = env.command("/usr/bin/rostopic");
    publisher.args(["pub", "-r", "10", "/chatter", "std_msgs/String", "data: hi", "__name:=talker"]);
    env.spawn("pub", publisher);
    wait_until("rostopic pub to register", Duration::from_secs(20), || publishers_of(&master, "/chatter") == 1);

    let mut list = env.command("/usr/bin/rostopic");
    list.arg("list");
    let out = run_ok(&env, list, "rostopic list");
    assert!(out.lines().any(|l| l == "/chatter"), "{out}");

    let mut ty = env.command("/usr/bin/rostopic");
    ty.args(["type", "/chatter"]);
    assert_eq!(run_ok(&env, ty, "rostopic type").trim(), "std_msgs/String");

    let mut info = env.command("/usr/bin/rostopic");
    info.args(["info", "/chatter"]);
    let out = run_ok(&env, info, "rostopic info");
    assert!(out.contains("Type: std_msgs/String") && out.contains("/talker"), "{out}");

    if Path::new("/usr/bin/rosnode").exists() {
        let mut nodes = env.command("/usr/bin/rosnode");
        nodes.arg("list");
        let out = run_ok(&env, nodes, "rosnode list");
        assert!(out.lines().any(|l| l == "/talker"), "{out}");
        let mut node_info = env.command("/usr/bin/rosnode");
        node_info.args(["info", "/talker"]);
        let out = run_ok(&env, node_info, "rosnode info");
        assert!(out.contains("/chatter [std_msgs/String]"), "{out}");
    }

    // A clean exit unregisters everything (rospy's shutdown multicall).
    env.interrupt("pub", Duration::from_secs(10));
    wait_until("rostopic pub to unregister", Duration::from_secs(10), || publishers_of(&master, "/chatter") == 0);
    let node = ask(&master, "lookupNode", &["/test", "/talker"]);
    assert_eq!(node.as_array().and_then(|r| r[0].as_i32()), Some(-1), "{node:?}");
}

#[test]
fn rosparam_set_get_list_delete() {
    let Some((_master, env)) = graph("rosparam_set_get_list_delete") else { return };
    let rosparam = |args: &[&str]| {
        let mut c = env.command("/usr/bin/rosparam");
        // No trailing slash: Python clients then POST to /RPC2.
        c.env("ROS_MASTER_URI", env.master_uri().trim_end_matches('/')).args(args);
        c
    };
    run_ok(&env, rosparam(&["set", "/foo", "42"]), "rosparam set");
    assert_eq!(run_ok(&env, rosparam(&["get", "/foo"]), "rosparam get").trim(), "42");
    run_ok(&env, rosparam(&["set", "/dict", "{a: 1, b: {c: z}, l: [1, 2.5, x]}"]), "rosparam set dict");
    let out = run_ok(&env, rosparam(&["get", "/dict/b/c"]), "rosparam get nested");
    assert_eq!(out.trim(), "z");
    let out = run_ok(&env, rosparam(&["get", "/dict"]), "rosparam get dict");
    assert!(out.contains("a: 1") && out.contains("c: z") && out.contains("2.5"), "{out}");
    let out = run_ok(&env, rosparam(&["list"]), "rosparam list");
    for name in ["/foo", "/dict/a", "/dict/b/c", "/dict/l", "/rosdistro", "/rosversion", "/run_id"] {
        assert!(out.lines().any(|l| l == name), "{name} missing from:\n{out}");
    }
    assert!(!out.lines().any(|l| l == "/dict" || l == "/dict/b"), "namespaces listed:\n{out}");
    // rosparam prints the seeded "noetic\n" as YAML, as it does under roscore.
    assert!(run_ok(&env, rosparam(&["get", "/rosdistro"]), "rosparam get /rosdistro").contains("noetic"));
    run_ok(&env, rosparam(&["delete", "/foo"]), "rosparam delete");
    let (ok, _, err) = env.run(rosparam(&["get", "/foo"]), Duration::from_secs(30));
    assert!(!ok && err.contains("/foo"), "get after delete: {err}");
    let (ok, _, err) = env.run(rosparam(&["delete", "/foo"]), Duration::from_secs(30));
    assert!(!ok, "deleting twice: {err}");
}

#[test]
fn latched_publisher_reaches_a_later_echo() {
    let Some((master, mut env)) = graph("latched_publisher_reaches_a_later_echo") else { return };
    let mut publisher = env.command("/usr/bin/rostopic");
    publisher.args(["pub", "-l", "/chatter", "std_msgs/String", "hi"]);
    env.spawn("pub", publisher);
    wait_until("rostopic pub -l to register", Duration::from_secs(20), || publishers_of(&master, "/chatter") == 1);
    let mut echo = env.command("/usr/bin/rostopic");
    echo.args(["echo", "-n", "1", "/chatter"]);
    let out = run_ok(&env, echo, "rostopic echo -n 1");
    assert!(out.contains("data: \"hi\""), "{out}");
}

const TALKER: &str = r#"
import rospy
from std_msgs.msg import String
rospy.init_node('talker')
pub = rospy.Publisher('/chatter', String, queue_size=10)
rate = rospy.Rate(20)
i = 0
while not rospy.is_shutdown():
    pub.publish(String(data='hello %d' % i))
    i += 1
    rate.sleep()
"#;

const LISTENER: &str = r#"
import rospy
from std_msgs.msg import String
heard = []
def on_message(m):
    heard.append(m.data)
    print('heard', m.data, flush=True)
    if len(heard) >= 5:
        rospy.signal_shutdown('heard enough')
rospy.init_node('listener')
rospy.Subscriber('/chatter', String, on_message)
rospy.spin()
"#;

#[test]
fn rospy_talker_and_listener_find_each_other() {
    let Some((master, mut env)) = graph("rospy_talker_and_listener_find_each_other") else { return };
    let talker = write_script(&env, "talker.py", TALKER);
    let listener = write_script(&env, "listener.py", LISTENER);
    // The listener first: it learns of the talker through publisherUpdate.
    env.spawn("listener", python(&env, &listener));
    wait_until("the listener to subscribe", Duration::from_secs(20), || {
        let subs = ask(&master, "getSystemState", &["/test"]);
        format!("{subs:?}").contains("/listener")
    });
    env.spawn("talker", python(&env, &talker));
    wait_until("the listener to hear 5 messages", Duration::from_secs(30), || {
        env.log("listener").matches("heard hello").count() >= 5
    });
}

#[test]
fn a_second_node_with_the_same_name_shuts_the_first_down() {
    let Some((master, mut env)) = graph("a_second_node_with_the_same_name_shuts_the_first_down") else { return };
    let talker = write_script(&env, "talker.py", TALKER);
    env.spawn("first", python(&env, &talker));
    wait_until("the first talker to register", Duration::from_secs(20), || publishers_of(&master, "/chatter") == 1);
    let first_api = ask(&master, "lookupNode", &["/test", "/talker"]);
    env.spawn("second", python(&env, &talker));
    wait_until("the second talker to take the name", Duration::from_secs(20), || {
        ask(&master, "lookupNode", &["/test", "/talker"]) != first_api
    });
    // rospy logs the master's shutdown request and exits.
    wait_until("the first talker to be told to shut down", Duration::from_secs(20), || {
        env.log("first").contains("new node registered with same name")
    });
    // The second registers /chatter after /rosout: wait for it, then the first must not have
    // taken it away when it unregistered on its way out.
    wait_until("the second talker to publish /chatter", Duration::from_secs(20), || {
        publishers_of(&master, "/chatter") == 1
    });
    let second_api = ask(&master, "lookupNode", &["/test", "/talker"]);
    assert_ne!(second_api, first_api);
    let first_gone = env.interrupt("first", Duration::from_secs(10));
    assert!(first_gone.is_some(), "the first talker did not stop");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(publishers_of(&master, "/chatter"), 1);
    assert_eq!(ask(&master, "lookupNode", &["/test", "/talker"]), second_api);
}

const PARAM_CACHE: &str = r#"
import rospy, time
rospy.init_node('cache')
last = None
deadline = time.time() + 40
while not rospy.is_shutdown() and time.time() < deadline:
    v = rospy.get_param_cached('/cached', 'unset')
    if v != last:
        print('value', v, flush=True)
        last = v
    if v == 7:
        break
    time.sleep(0.05)
"#;

#[test]
fn rospy_cached_parameter_hears_rosparam_set() {
    let Some((master, mut env)) = graph("rospy_cached_parameter_hears_rosparam_set") else { return };
    let script = write_script(&env, "cache.py", PARAM_CACHE);
    let mut node = python(&env, &script);
    node.env("ROS_MASTER_URI", env.master_uri());
    env.spawn("cache", node);
    wait_until("the node to subscribe to /cached", Duration::from_secs(20), || env.log("cache").contains("value"));
    let mut set = env.command("/usr/bin/rosparam");
    set.args(["set", "/cached", "7"]);
    run_ok(&env, set, "rosparam set /cached 7");
    wait_until("paramUpdate to reach the node", Duration::from_secs(20), || env.log("cache").contains("value 7"));
    // The cache held the value only because the master pushed it.
    let got = ask(&master, "getParam", &["/test", "/cached"]);
    assert_eq!(got.as_array().map(|r| r[2].clone()), Some(Value::Int(7)));
}

#[test]
fn roscpp_recorder_records_through_the_master() {
    let Some((master, mut env)) = graph("roscpp_recorder_records_through_the_master") else { return };
    let mut publisher = env.command("/usr/bin/rostopic");
    publisher.args(["pub", "-r", "20", "/chatter", "std_msgs/String", "data: rec"]);
    env.spawn("pub", publisher);
    wait_until("rostopic pub to register", Duration::from_secs(20), || publishers_of(&master, "/chatter") == 1);
    let bag = env.home.path().join("rec.bag");
    let mut record = env.command("/usr/lib/rosbag/record");
    record.args(["-O", bag.to_str().expect("utf-8 path"), "--duration=3", "/chatter"]);
    let (ok, out, err) = env.run(record, Duration::from_secs(30));
    assert!(ok, "record failed:\n{out}\n{err}");
    let mut info = env.command("/usr/bin/python3");
    info.args(["-c", "import rosbag, sys; print(rosbag.Bag(sys.argv[1]).get_message_count('/chatter'))"]).arg(&bag);
    let count: u32 = run_ok(&env, info, "rosbag count").trim().parse().expect("a count");
    assert!(count >= 10, "only {count} messages recorded");
    // The recorder (XmlRpc++: untyped strings, Content-length) unregistered on exit.
    let state = format!("{:?}", ask(&master, "getSystemState", &["/test"]));
    assert!(!state.contains("/record"), "{state}");
}
