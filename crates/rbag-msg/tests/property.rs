//! Random values of every bundled type survive encoding and decoding, in both encodings (ROS 1,
//! and CDR little- and big-endian), for the ROS 1 noetic and ROS 2 humble stores.

use rbag_msg::store::{self, Distro};
use rbag_msg::testgen::{random_message, Rng};
use rbag_msg::{decode, encode, Encoding, Schema};

#[test]
fn random_values_of_every_bundled_type_round_trip_through_both_encodings() {
    let mut checked = 0;
    for distro in [Distro::Noetic, Distro::Humble, Distro::Jazzy] {
        let reg = store::registry(distro);
        for name in reg.names() {
            let schema = Schema::compile(reg, name).unwrap_or_else(|e| panic!("{distro} {name}: {e}"));
            let mut rng = Rng::new(0x5eed ^ name.len() as u64 ^ checked as u64);
            for round in 0..20 {
                let value = random_message(&schema, &mut rng, if round < 10 { 3 } else { 40 });
                for (encoding, big_endian) in [(Encoding::Ros1, false), (Encoding::Cdr, false), (Encoding::Cdr, true)] {
                    let mut bytes = Vec::new();
                    encode(&schema, &value, encoding, big_endian, &mut bytes)
                        .unwrap_or_else(|e| panic!("{name} {encoding:?}: {e}"));
                    let back = decode(&schema, &bytes, encoding)
                        .unwrap_or_else(|e| panic!("{name} {encoding:?} be={big_endian}: {e}"));
                    assert_eq!(back, value, "{distro} {name} {encoding:?} be={big_endian}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 20_000, "{checked}");
    eprintln!("{checked} random messages round-tripped");
}
