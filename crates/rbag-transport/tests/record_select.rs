//! Topic selection as `rosbag record` does it.

use rbag_transport::TopicSelection;

#[test]
fn explicit_topics_match_exactly() {
    let s = TopicSelection::topics(["/chatter", "/ns/odom"]);
    assert!(s.matches("/chatter") && s.matches("/ns/odom"));
    assert!(!s.matches("/chatter2") && !s.matches("/ns") && !s.matches("chatter"));
    assert!(s.is_explicit_only());
    assert_eq!(s.explicit_topics().collect::<Vec<_>>(), ["/chatter", "/ns/odom"]);
}

#[test]
fn regexes_match_whole_names_like_boost_regex_match() {
    let s = TopicSelection::regexes(["/cam.*/image", "/a|/b"]).unwrap();
    assert!(s.matches("/camera/image"));
    assert!(!s.matches("/camera/image_raw"), "a prefix match is not enough");
    assert!(!s.matches("/x/camera/image"), "nor a match inside the name");
    // The alternation is anchored as a whole, not only its first branch.
    assert!(s.matches("/a") && s.matches("/b"));
    assert!(!s.matches("/ab") && !s.matches("/b/c"));
    assert!(!s.is_explicit_only());
}

#[test]
fn exclude_subtracts_from_all_and_regexes_but_not_from_named_topics() {
    let s = TopicSelection::all().with_exclude("/rosout.*").unwrap();
    assert!(s.matches("/chatter"));
    assert!(!s.matches("/rosout") && !s.matches("/rosout_agg"));
    assert!(s.matches("/x/rosout"), "the exclude pattern matches whole names too");

    let s = TopicSelection::regexes(["/cam/.*"]).unwrap().with_exclude(".*compressed.*").unwrap();
    assert!(s.matches("/cam/image"));
    assert!(!s.matches("/cam/image/compressed"));

    // rosbag subscribes to named topics directly; -x only filters discovered ones.
    let s = TopicSelection::topics(["/rosout"]).with_all().with_exclude("/rosout").unwrap();
    assert!(s.matches("/rosout"));
    assert!(s.is_all());
}

#[test]
fn node_topics_skip_patterns_but_not_exclude() {
    let s = TopicSelection::topics(["/keep"]).with_exclude("/secret.*").unwrap();
    assert!(s.allows_node_topic("/anything"));
    assert!(!s.allows_node_topic("/secret/key"));
    assert!(s.allows_node_topic("/keep"));
    assert!(!s.matches("/anything"), "node topics are not selected by matches()");
}

#[test]
fn bad_patterns_are_errors_naming_the_pattern() {
    let err = TopicSelection::regexes(["/ok", "/bad("]).unwrap_err();
    assert!(err.to_string().contains("\"/bad(\""), "{err}");
    assert!(TopicSelection::all().with_exclude("[").is_err());
}
