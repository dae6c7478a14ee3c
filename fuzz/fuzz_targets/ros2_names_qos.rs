//! What a ROS 2 peer or a user file hands rbag-ros2: DDS topic and type names and endpoint
//! user data from discovery, control-service requests (rmw_cyclonedds' header and the
//! fields), QoS overrides / offered-QoS YAML, and what a Zenoh graph hands it: rmw_zenoh
//! liveliness tokens (QoS text included) and sample attachments. Whatever parses must map back
//! consistently; nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rbag_ros2::names::{topic_from_dds, topic_to_dds, type_from_dds, type_hash_from_user_data, type_to_dds, RosTopic};
use rbag_ros2::qos::{adapt_offer_to_recorded_offers, adapt_request_to_offers, Overrides};
use rbag_ros2::service::{parse_plain_request, parse_request, reply, reply_bytes};
use rbag_ros2::zenoh_wire::{qos_from_text, qos_to_text, Attachment, Token};

fuzz_target!(|data: &[u8]| {
    let _ = type_hash_from_user_data(data);
    if let Some(a) = Attachment::decode(data) {
        assert_eq!(Attachment::decode(&a.encode()), Some(a), "an attachment maps back");
    }
    if let Some((header, fields)) = parse_request(data) {
        let _ = (fields.f64(), fields.u64(), fields.time_ns());
        let reply = reply_bytes(header, &[1]);
        assert_eq!(
            (header.len(), reply.len() % 4, &reply[4..20]),
            (16, 0, header),
            "a reply echoes the header, padded"
        );
    }
    // rmw_zenoh's requests: no header; Lyrical's layouts read strings, ints and times anywhere.
    if let Some(fields) = parse_plain_request(data, None) {
        let mut at = 0;
        while let Some((s, next)) = fields.string_at(at) {
            assert!(next > at && next <= fields.bytes().len(), "a string ends inside the request");
            let encoded = reply::code(0, &s);
            assert_eq!(parse_plain_request(&[&[0, 1, 0, 0][..], &encoded].concat(), None).and_then(|f| f.string_at(4)).map(|x| x.0), Some(s));
            at = next;
        }
        let _ = (fields.i32_at(data.len() / 2), fields.time_ns_at(data.len() / 3));
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    // Writing a token (or a QoS text) is a fixed point after one read: what rbag writes, it
    // reads back the same.
    if let Some(t) = Token::parse(text) {
        let once = t.key_expr();
        let again = Token::parse(&once).expect("a token rbag wrote parses");
        assert_eq!(again.key_expr(), once, "token text is stable");
    }
    if let Some(q) = qos_from_text(text) {
        let once = qos_to_text(&q);
        let again = qos_from_text(&once).expect("QoS text rbag wrote parses");
        assert_eq!(qos_to_text(&again), once, "QoS text is stable");
    }
    if let Some(RosTopic::Topic(t)) = topic_from_dds(text) {
        assert_eq!(topic_to_dds(&t), text, "rt/ names map back");
    }
    if let Some(ros) = type_from_dds(text) {
        assert_eq!(type_to_dds(&ros).as_deref(), Some(text), "dds_ type names map back");
    }
    if let Some(dds) = type_to_dds(text) {
        let _ = type_from_dds(&dds);
    }
    if let Ok(o) = Overrides::parse(text) {
        std::hint::black_box(o.is_empty());
    }
    if let Ok(profiles) = rbag_storage::rosbag2::qos::parse(text) {
        let _ = adapt_request_to_offers("/t", &profiles);
        let _ = adapt_offer_to_recorded_offers("/t", &profiles);
        for v in [5, 8, 9] {
            let again = rbag_storage::rosbag2::qos::to_text(&profiles, v);
            let back = rbag_storage::rosbag2::qos::parse(&again).expect("our own QoS text parses");
            assert_eq!(back.len(), profiles.len());
        }
    }
});
