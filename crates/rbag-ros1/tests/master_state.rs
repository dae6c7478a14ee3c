//! The embedded master's API with no sockets: rosmaster's replies, strings and notifications
//! (docs/ros1-live-spike.md §2.2, §2.4, §4), checked call by call on `MasterState`.

use rbag_ros1::master::{Callback, MasterState, Notification};
use rbag_ros1::xmlrpc::Value;

const URI: &str = "http://127.0.0.1:11311/";

fn s(x: &str) -> Value {
    Value::Str(x.into())
}

fn i(x: i32) -> Value {
    Value::Int(x)
}

fn arr(v: Vec<Value>) -> Value {
    Value::Array(v)
}

fn strs(v: &[&str]) -> Value {
    arr(v.iter().map(|x| s(x)).collect())
}

fn st(m: Vec<(&str, Value)>) -> Value {
    Value::Struct(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn r(code: i32, msg: &str, v: Value) -> Value {
    arr(vec![i(code), s(msg), v])
}

/// Calls and returns the reply and notifications; faults fail the test.
fn call(m: &mut MasterState, method: &str, params: Vec<Value>) -> (Value, Vec<Notification>) {
    let (result, notes) = m.call(method, params);
    (result.unwrap_or_else(|e| panic!("{method}: fault {e:?}")), notes)
}

fn reply(m: &mut MasterState, method: &str, params: Vec<Value>) -> Value {
    call(m, method, params).0
}

fn pub_update(api: &str, topic: &str, pubs: &[&str]) -> Notification {
    Notification {
        api: api.into(),
        callback: Callback::PublisherUpdate {
            topic: topic.into(),
            publishers: pubs.iter().map(|x| x.to_string()).collect(),
        },
    }
}

fn param_update(api: &str, key: &str, value: Value) -> Notification {
    Notification { api: api.into(), callback: Callback::ParamUpdate { key: key.into(), value } }
}

#[test]
fn arity_caller_id_and_unknown_methods() {
    let mut m = MasterState::new(URI);
    assert_eq!(reply(&mut m, "getParam", vec![s("/x")]), r(-1, "Error: bad call arity", i(0)));
    assert_eq!(reply(&mut m, "getParam", vec![s("/x"), s("k"), s("extra")]), r(-1, "Error: bad call arity", i(0)));
    assert_eq!(reply(&mut m, "registerPublisher", vec![s("/x")]), r(-1, "Error: bad call arity", arr(vec![])));
    assert_eq!(reply(&mut m, "hasParam", vec![]), r(-1, "missing required caller_id parameter", Value::Bool(false)));
    assert_eq!(reply(&mut m, "getUri", vec![i(3)]), r(-1, "caller_id must be a string", s("")));
    assert_eq!(
        reply(&mut m, "getSystemState", vec![s("/x"), s("y")]),
        r(-1, "Error: bad call arity", arr(vec![arr(vec![]), arr(vec![]), arr(vec![])]))
    );
    let (result, notes) = m.call("noSuchMethod", vec![s("/x")]);
    assert_eq!(result, Err((1, "<class 'Exception'>:method \"noSuchMethod\" is not supported".into())));
    assert!(notes.is_empty());
}

#[test]
fn uri_pid_and_shutdown() {
    let mut m = MasterState::new(URI);
    assert_eq!(reply(&mut m, "getUri", vec![s("/n")]), r(1, "", s(URI)));
    assert_eq!(reply(&mut m, "getPid", vec![s("/n")]), r(1, "", i(std::process::id() as i32)));
    assert!(!m.shutdown_requested());
    assert_eq!(reply(&mut m, "shutdown", vec![s("/n"), s("bye")]), r(1, "shutdown", i(0)));
    assert!(m.shutdown_requested());
}

#[test]
fn seeded_parameters() {
    let mut m = MasterState::new(URI);
    assert_eq!(
        reply(&mut m, "getParam", vec![s("/n"), s("/rosdistro")]),
        r(1, "Parameter [/rosdistro]", s("noetic\n"))
    );
    assert_eq!(
        reply(&mut m, "getParam", vec![s("/n"), s("/rosversion")]),
        r(1, "Parameter [/rosversion]", s("1.15.15\n"))
    );
    let run_id = reply(&mut m, "getParam", vec![s("/n"), s("/run_id")]);
    let id = run_id.as_array().and_then(|a| a[2].as_str()).expect("run_id").to_string();
    let groups: Vec<usize> = id.split('-').map(str::len).collect();
    assert_eq!(groups, vec![8, 4, 4, 4, 12], "{id}");
    assert!(id.chars().all(|c| c == '-' || c.is_ascii_hexdigit()), "{id}");
    assert_eq!(&id[14..15], "1", "uuid1 shape: {id}");
    assert_ne!(MasterState::new(URI).call("getParam", vec![s("/n"), s("/run_id")]).0, Ok(run_id));
    assert_eq!(
        reply(&mut m, "getParamNames", vec![s("/n")]),
        r(1, "Parameter names", strs(&["/run_id", "/rosversion", "/rosdistro"]))
    );
}

#[test]
fn parameter_server() {
    let mut m = MasterState::new(URI);
    let c = || s("/rosparam-1");
    assert_eq!(reply(&mut m, "setParam", vec![c(), s("/foo/bar"), i(42)]), r(1, "parameter /foo/bar set", i(0)));
    reply(&mut m, "setParam", vec![c(), s("foo/s"), s("hello")]);
    reply(&mut m, "setParam", vec![c(), s("/foo/f"), Value::Double(2.5)]);
    assert_eq!(
        reply(&mut m, "getParam", vec![s("/rosparam-13891"), s("/foo")]),
        r(1, "Parameter [/foo]", st(vec![("bar", i(42)), ("s", s("hello")), ("f", Value::Double(2.5))]))
    );
    assert_eq!(reply(&mut m, "hasParam", vec![c(), s("/foo/s")]), r(1, "/foo/s", Value::Bool(true)));
    assert_eq!(reply(&mut m, "hasParam", vec![c(), s("/foo/nope")]), r(1, "/foo/nope", Value::Bool(false)));
    assert_eq!(
        reply(&mut m, "getParam", vec![c(), s("/nonexistent")]),
        r(-1, "Parameter [/nonexistent] is not set", i(0))
    );
    // Private and relative keys resolve against the caller.
    reply(&mut m, "setParam", vec![s("/ns/node"), s("~p"), i(1)]);
    reply(&mut m, "setParam", vec![s("/ns/node"), s("rel"), i(2)]);
    assert_eq!(
        reply(&mut m, "getParam", vec![c(), s("/ns")]),
        r(1, "Parameter [/ns]", st(vec![("node", st(vec![("p", i(1))])), ("rel", i(2))]))
    );
    // A dict replaces the subtree; getParamNames lists leaves only.
    reply(&mut m, "setParam", vec![c(), s("/d"), st(vec![("a", i(1)), ("b", st(vec![("c", s("z"))]))])]);
    reply(&mut m, "setParam", vec![c(), s("/d"), st(vec![("a", i(1)), ("b", st(vec![("c", s("z"))]))])]);
    let names = reply(&mut m, "getParamNames", vec![c()]);
    let names: Vec<&str> =
        names.as_array().expect("reply")[2].as_array().expect("names").iter().filter_map(Value::as_str).collect();
    assert_eq!(
        names,
        vec![
            "/run_id",
            "/rosversion",
            "/rosdistro",
            "/foo/bar",
            "/foo/s",
            "/foo/f",
            "/ns/node/p",
            "/ns/rel",
            "/d/a",
            "/d/b/c"
        ]
    );
    reply(&mut m, "setParam", vec![c(), s("/d"), st(vec![("x", i(9))])]);
    assert_eq!(reply(&mut m, "getParam", vec![c(), s("/d")]), r(1, "Parameter [/d]", st(vec![("x", i(9))])));
    assert_eq!(reply(&mut m, "deleteParam", vec![c(), s("/foo/bar")]), r(1, "parameter /foo/bar deleted", i(0)));
    assert_eq!(reply(&mut m, "deleteParam", vec![c(), s("/k")]), r(-1, "parameter [/k] is not set", i(0)));
    assert_eq!(reply(&mut m, "deleteParam", vec![c(), s("/")]), r(-1, "parameter [/] is not set", i(0)));
    assert_eq!(
        reply(&mut m, "setParam", vec![c(), s("/"), i(1)]),
        r(-1, "Error: invalid arguments: cannot set root of parameter tree to non-dictionary", i(0))
    );
    assert_eq!(
        reply(&mut m, "getParam", vec![c(), s("")]),
        r(-1, "ERROR: parameter [key] must be specified and non-empty", i(0))
    );
    assert_eq!(reply(&mut m, "getParam", vec![c(), i(5)]), r(-1, "ERROR: parameter [key] must be a string", i(0)));
    assert_eq!(
        reply(&mut m, "setParam", vec![c(), s("/n"), Value::Nil]),
        r(-1, "ERROR: parameter [value] must be specified", i(0))
    );
    // The whole tree.
    let root = reply(&mut m, "getParam", vec![c(), s("/")]);
    assert_eq!(root.as_array().expect("reply")[1], s("Parameter [/]"));
}

#[test]
fn search_param() {
    let mut m = MasterState::new(URI);
    reply(&mut m, "setParam", vec![s("/x"), s("/foo"), i(1)]);
    reply(&mut m, "setParam", vec![s("/x"), s("/a/b/foo"), i(2)]);
    assert_eq!(reply(&mut m, "searchParam", vec![s("/a/b/node"), s("foo")]), r(1, "Found [/a/b/foo]", s("/a/b/foo")));
    assert_eq!(reply(&mut m, "searchParam", vec![s("/a/node"), s("foo")]), r(1, "Found [/foo]", s("/foo")));
    assert_eq!(
        reply(&mut m, "searchParam", vec![s("/a/node"), s("foo/deeper")]),
        r(1, "Found [/foo/deeper]", s("/foo/deeper"))
    );
    assert_eq!(
        reply(&mut m, "searchParam", vec![s("/a/node"), s("k")]),
        r(-1, "Cannot find parameter [k] in an upwards search", s(""))
    );
    assert_eq!(reply(&mut m, "searchParam", vec![s("/a/node"), s("~k")]), r(0, "Internal failure: invalid key", i(0)));
}

#[test]
fn subscribe_param_and_updates() {
    let mut m = MasterState::new(URI);
    let api = "http://127.0.0.1:40000/";
    let (rep, notes) = call(&mut m, "subscribeParam", vec![s("/listener"), s(api), s("/cached")]);
    assert_eq!(rep, r(1, "Subscribed to parameter [/cached]", st(vec![])));
    assert!(notes.is_empty());
    // Another caller sets it: the subscriber hears the key with a trailing slash.
    let (rep, notes) = call(&mut m, "setParam", vec![s("/rosparam-1"), s("/cached"), i(7)]);
    assert_eq!(rep, r(1, "parameter /cached set", i(0)));
    assert_eq!(notes, vec![param_update(api, "/cached/", i(7))]);
    assert_eq!(notes[0].method(), "paramUpdate");
    assert_eq!(notes[0].params(), vec![s("/master"), s("/cached/"), i(7)]);
    // The subscriber's own change is not echoed back to it.
    let (_, notes) = call(&mut m, "setParam", vec![s("/listener"), s("/cached"), i(8)]);
    assert!(notes.is_empty());
    // subscribeParam returns the current value.
    let (rep, _) = call(&mut m, "subscribeParam", vec![s("/other"), s("http://127.0.0.1:40001/"), s("cached")]);
    assert_eq!(rep, r(1, "Subscribed to parameter [/cached]", i(8)));
    // A deletion goes to everyone, the deleter included, as {}.
    let (_, notes) = call(&mut m, "deleteParam", vec![s("/listener"), s("/cached")]);
    assert_eq!(
        notes,
        vec![
            param_update(api, "/cached/", st(vec![])),
            param_update("http://127.0.0.1:40001/", "/cached/", st(vec![]))
        ]
    );
    // Setting a namespace above tells the subscriber its part.
    let (_, notes) = call(&mut m, "setParam", vec![s("/x"), s("/"), st(vec![("cached", i(3))])]);
    assert_eq!(notes[0], param_update(api, "/cached/", i(3)));
    assert_eq!(
        reply(&mut m, "unsubscribeParam", vec![s("/listener"), s(api), s("/cached")]),
        r(1, "Unsubscribe to parameter [/cached]", i(1))
    );
    let (_, notes) = call(&mut m, "setParam", vec![s("/x"), s("/cached"), i(4)]);
    assert_eq!(notes, vec![param_update("http://127.0.0.1:40001/", "/cached/", i(4))]);
    // A -1 reply to paramUpdate unsubscribes.
    m.param_update_refused("http://127.0.0.1:40001/", "/cached/");
    let (_, notes) = call(&mut m, "setParam", vec![s("/x"), s("/cached"), i(5)]);
    assert!(notes.is_empty());
    assert_eq!(reply(&mut m, "lookupNode", vec![s("/x"), s("/other")]), r(-1, "unknown node [/other]", s("")));
    assert_eq!(
        reply(&mut m, "subscribeParam", vec![s("/l"), s("nope"), s("/k")]),
        r(-1, "ERROR: parameter [caller_api] is not an RPC URI", i(0))
    );
}

#[test]
fn publishers_and_subscribers() {
    let mut m = MasterState::new(URI);
    let (talker, listener, rec) = ("http://127.0.0.1:43237/", "http://127.0.0.1:33563/", "http://127.0.0.1:36431/");
    let (rep, notes) =
        call(&mut m, "registerSubscriber", vec![s("/listener"), s("/chatter"), s("std_msgs/String"), s(listener)]);
    assert_eq!(rep, r(1, "Subscribed to [/chatter]", arr(vec![])));
    assert!(notes.is_empty());
    let (rep, notes) =
        call(&mut m, "registerPublisher", vec![s("/talker"), s("chatter"), s("std_msgs/String"), s(talker)]);
    assert_eq!(rep, r(1, "Registered [/talker] as publisher of [/chatter]", strs(&[listener])));
    assert_eq!(notes, vec![pub_update(listener, "/chatter", &[talker])]);
    assert_eq!(notes[0].params(), vec![s("/master"), s("/chatter"), strs(&[talker])]);
    // record subscribes with type *: it gets the publishers, and the type stays.
    let (rep, _) = call(&mut m, "registerSubscriber", vec![s("/record_1"), s("/chatter"), s("*"), s(rec)]);
    assert_eq!(rep, r(1, "Subscribed to [/chatter]", strs(&[talker])));
    assert_eq!(
        reply(&mut m, "getPublishedTopics", vec![s("/x"), s("")]),
        r(1, "current topics", arr(vec![strs(&["/chatter", "std_msgs/String"])]))
    );
    assert_eq!(
        reply(&mut m, "getSystemState", vec![s("/x")]),
        r(
            1,
            "current system state",
            arr(vec![
                arr(vec![arr(vec![s("/chatter"), strs(&["/talker"])])]),
                arr(vec![arr(vec![s("/chatter"), strs(&["/listener", "/record_1"])])]),
                arr(vec![]),
            ])
        )
    );
    assert_eq!(reply(&mut m, "lookupNode", vec![s("/x"), s("/talker")]), r(1, "node api", s(talker)));
    // Unregistering the publisher tells both subscribers the list is empty.
    let (rep, notes) = call(&mut m, "unregisterPublisher", vec![s("/talker"), s("/chatter"), s(talker)]);
    assert_eq!(rep, r(1, "Unregistered [/talker] as provider of [/chatter]", i(1)));
    assert_eq!(notes, vec![pub_update(listener, "/chatter", &[]), pub_update(rec, "/chatter", &[])]);
    assert_eq!(reply(&mut m, "lookupNode", vec![s("/x"), s("/talker")]), r(-1, "unknown node [/talker]", s("")));
    let (rep, notes) = call(&mut m, "unregisterPublisher", vec![s("/talker"), s("/chatter"), s(talker)]);
    assert_eq!(rep, r(1, "[/talker] is not a registered node", i(0)));
    assert!(notes.is_empty());
    assert_eq!(
        reply(&mut m, "unregisterSubscriber", vec![s("/listener"), s("/other"), s(listener)]),
        r(1, "[/listener] is not a known provider of [/other]", i(0))
    );
    // Only topics with publishers are published; types are never forgotten.
    assert_eq!(reply(&mut m, "getPublishedTopics", vec![s("/x"), s("")]), r(1, "current topics", arr(vec![])));
    assert_eq!(
        reply(&mut m, "getTopicTypes", vec![s("/x")]),
        r(1, "current system state", arr(vec![strs(&["/chatter", "std_msgs/String"])]))
    );
}

#[test]
fn topic_types_and_subgraphs() {
    let mut m = MasterState::new(URI);
    let api = "http://127.0.0.1:1/";
    reply(&mut m, "registerSubscriber", vec![s("/a"), s("/t"), s("std_msgs/Int32"), s(api)]);
    reply(&mut m, "registerSubscriber", vec![s("/a"), s("/t"), s("std_msgs/String"), s(api)]);
    reply(&mut m, "registerSubscriber", vec![s("/a"), s("/star"), s("*"), s(api)]);
    assert_eq!(
        reply(&mut m, "getTopicTypes", vec![s("/a")]),
        r(1, "current system state", arr(vec![strs(&["/t", "std_msgs/Int32"])]))
    );
    // A publisher's type overrides; a publisher's * only fills a gap.
    reply(&mut m, "registerPublisher", vec![s("/p"), s("/t"), s("std_msgs/String"), s(api)]);
    reply(&mut m, "registerPublisher", vec![s("/p"), s("/t"), s("*"), s(api)]);
    reply(&mut m, "registerPublisher", vec![s("/p"), s("/ns/u"), s("*"), s(api)]);
    assert_eq!(
        reply(&mut m, "getTopicTypes", vec![s("/a")]),
        r(1, "current system state", arr(vec![strs(&["/t", "std_msgs/String"]), strs(&["/ns/u", "*"])]))
    );
    assert_eq!(
        reply(&mut m, "getPublishedTopics", vec![s("/x"), s("/ns")]),
        r(1, "current topics", arr(vec![strs(&["/ns/u", "*"])]))
    );
    // A relative subgraph resolves against the caller's namespace.
    assert_eq!(reply(&mut m, "getPublishedTopics", vec![s("/ns/node"), s("u")]), r(1, "current topics", arr(vec![])));
    assert_eq!(
        reply(&mut m, "getPublishedTopics", vec![s("/node"), s("ns")]),
        r(1, "current topics", arr(vec![strs(&["/ns/u", "*"])]))
    );
    // Validation, with registerPublisher's error value [].
    let bad = |m: &mut MasterState, topic: Value, ty: &str, api: &str| {
        reply(m, "registerPublisher", vec![s("/p"), topic, s(ty), s(api)])
    };
    assert_eq!(
        bad(&mut m, s(""), "a/b", api),
        r(-1, "ERROR: parameter [topic] must be a non-empty string", arr(vec![]))
    );
    assert_eq!(
        bad(&mut m, s("/a b"), "a/b", api),
        r(-1, "ERROR: parameter [topic] contains illegal chars", arr(vec![]))
    );
    assert_eq!(
        bad(&mut m, s("/"), "a/b", api),
        r(-1, "ERROR: parameter [topic] cannot be the global namespace", arr(vec![]))
    );
    assert_eq!(
        bad(&mut m, s("/t"), "String", api),
        r(-1, "ERROR: parameter [topic_type] is not a valid package resource name", arr(vec![]))
    );
    assert_eq!(
        bad(&mut m, s("/t"), "a/b", ""),
        r(-1, "ERROR: parameter [caller_api] is not an XMLRPC URI", arr(vec![]))
    );
}

#[test]
fn services() {
    let mut m = MasterState::new(URI);
    let api = "http://127.0.0.1:2/";
    assert_eq!(
        reply(&mut m, "registerService", vec![s("/n"), s("~get_loggers"), s("rosrpc://127.0.0.1:3"), s(api)]),
        r(1, "Registered [/n] as provider of [/n/get_loggers]", i(1))
    );
    assert_eq!(
        reply(&mut m, "lookupService", vec![s("/x"), s("/n/get_loggers")]),
        r(1, "rosrpc URI: [rosrpc://127.0.0.1:3]", s("rosrpc://127.0.0.1:3"))
    );
    assert_eq!(reply(&mut m, "lookupService", vec![s("/x"), s("/nope")]), r(-1, "no provider", s("")));
    assert_eq!(
        reply(&mut m, "getSystemState", vec![s("/x")]),
        r(
            1,
            "current system state",
            arr(vec![arr(vec![]), arr(vec![]), arr(vec![arr(vec![s("/n/get_loggers"), strs(&["/n"])])])])
        )
    );
    assert_eq!(
        reply(&mut m, "unregisterService", vec![s("/n"), s("/n/get_loggers"), s("rosrpc://127.0.0.1:9")]),
        r(1, "[rosrpc://127.0.0.1:9] is no longer the current service api handle for [/n/get_loggers]", i(0))
    );
    assert_eq!(
        reply(&mut m, "unregisterService", vec![s("/n"), s("/n/get_loggers"), s("rosrpc://127.0.0.1:3")]),
        r(1, "Unregistered [/n] as provider of [/n/get_loggers]", i(1))
    );
    assert_eq!(reply(&mut m, "lookupNode", vec![s("/x"), s("/n")]), r(-1, "unknown node [/n]", s("")));
}

#[test]
fn a_node_taking_a_known_name_shuts_the_old_one_down() {
    let mut m = MasterState::new(URI);
    let (old, new) = ("http://127.0.0.1:5000/", "http://127.0.0.1:5001/");
    reply(&mut m, "registerPublisher", vec![s("/talker"), s("/chatter"), s("std_msgs/String"), s(old)]);
    let (_, notes) = call(&mut m, "registerPublisher", vec![s("/talker"), s("/chatter"), s("std_msgs/String"), s(new)]);
    assert_eq!(
        notes,
        vec![Notification {
            api: old.into(),
            callback: Callback::Shutdown { reason: "[/talker] Reason: new node registered with same name".into() }
        }]
    );
    assert_eq!(notes[0].method(), "shutdown");
    assert_eq!(reply(&mut m, "lookupNode", vec![s("/x"), s("/talker")]), r(1, "node api", s(new)));
    assert_eq!(
        reply(&mut m, "getSystemState", vec![s("/x")]),
        r(
            1,
            "current system state",
            arr(vec![arr(vec![arr(vec![s("/chatter"), strs(&["/talker"])])]), arr(vec![]), arr(vec![])])
        )
    );
}
