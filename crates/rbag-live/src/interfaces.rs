//! rosbag2_interfaces' services, as rosbag2 defines them: the fields rbag reads and answers,
//! and their RIHS01 hashes (which rmw_zenoh puts in every key and token, and DDS endpoints in
//! their user data). Comments and default values change neither the layout nor the hash, so
//! only the fields are kept here.
//!
//! Two layouts exist under the same names (rosbag2_interfaces at the release tags jazzy
//! 0.26.10, kilted 0.32.0, lyrical 0.33.3): Lyrical gave `Stop`, `Resume`, `SplitBagfile` and
//! `Record` return codes (and `Resume`/`SplitBagfile` a time, a mode and a topic, `Record` a
//! start time). A client's type hash says which it was built with; rbag answers in that layout
//! and announces Jazzy's (the older clients are the many).

use std::collections::HashMap;
use std::sync::OnceLock;

use rbag_msg::store::Distro;

/// A service of rosbag2_interfaces: its name (`Pause`) and `.srv` text (fields only).
struct Srv {
    name: &'static str,
    text: &'static str,
}

/// The services of Jazzy's rosbag2_interfaces (0.26.10, which added the recorder's `Record`,
/// `StartDiscovery`, `StopDiscovery` and `IsDiscoveryRunning`; Kilted has the rest, the same).
const JAZZY: &[Srv] = &[
    Srv { name: "Burst", text: "uint64 num_messages\n---\nuint64 actually_burst\n" },
    Srv { name: "GetRate", text: "---\nfloat64 rate\n" },
    Srv { name: "IsDiscoveryRunning", text: "---\nbool running\n" },
    Srv { name: "IsPaused", text: "---\nbool paused\n" },
    Srv { name: "Pause", text: "---\n" },
    Srv {
        name: "Play",
        text: "builtin_interfaces/Time start_offset\nbuiltin_interfaces/Duration playback_duration\n\
               builtin_interfaces/Time playback_until_timestamp\n---\nbool success\n",
    },
    Srv { name: "PlayNext", text: "---\nbool success\n" },
    Srv { name: "Record", text: "string uri\n---\nint32 return_code\nstring error_string\n" },
    Srv { name: "Resume", text: "---\n" },
    Srv { name: "Seek", text: "builtin_interfaces/Time time\n---\nbool success\n" },
    Srv { name: "SetRate", text: "float64 rate\n---\nbool success\n" },
    Srv { name: "Snapshot", text: "---\nbool success\n" },
    Srv { name: "SplitBagfile", text: "---\n" },
    Srv { name: "StartDiscovery", text: "---\nint32 return_code\nstring error_string\n" },
    Srv { name: "Stop", text: "---\n" },
    Srv { name: "StopDiscovery", text: "---\nint32 return_code\nstring error_string\n" },
    Srv { name: "TogglePaused", text: "---\n" },
];

/// The services Lyrical changed (the others are Jazzy's).
const LYRICAL: &[Srv] = &[
    Srv {
        name: "Record",
        text: "string uri\nbuiltin_interfaces/Time start_time\n---\nint32 return_code\nstring error_string\n",
    },
    Srv {
        name: "Resume",
        text: "builtin_interfaces/Time resume_time\nint32 resume_mode\nstring tracking_topic_name\n---\n\
               int32 return_code\nstring error_string\n",
    },
    Srv {
        name: "SplitBagfile",
        text: "builtin_interfaces/Time split_time\nint32 split_mode\nstring tracking_topic_name\n---\n\
               int32 return_code\nstring error_string\n",
    },
    Srv { name: "Stop", text: "---\nint32 return_code\nstring error_string\n" },
];

/// The hashes of a set of definitions, by name.
fn hashes(srvs: &[Srv]) -> HashMap<&'static str, String> {
    let mut reg = rbag_msg::store::registry(Distro::Jazzy).clone();
    srvs.iter()
        .filter_map(|s| {
            let full = format!("rosbag2_interfaces/srv/{}", s.name);
            reg.add_srv(&full, s.text).ok()?;
            Some((s.name, reg.rihs01(&full).ok()?))
        })
        .collect()
}

/// `RIHS01_…` of `rosbag2_interfaces/srv/<name>` as Jazzy defines it; a fixed all-zero hash
/// for a name not listed (the queryables take any hash, so only the graph listing shows it).
pub fn type_hash(name: &str) -> String {
    static HASHES: OnceLock<HashMap<&'static str, String>> = OnceLock::new();
    HASHES.get_or_init(|| hashes(JAZZY)).get(name).cloned().unwrap_or_else(|| format!("RIHS01_{}", "0".repeat(64)))
}

/// `RIHS01_…` of Lyrical's `rosbag2_interfaces/srv/<name>`, for the services it changed.
pub fn lyrical_hash(name: &str) -> Option<String> {
    static HASHES: OnceLock<HashMap<&'static str, String>> = OnceLock::new();
    HASHES.get_or_init(|| hashes(LYRICAL)).get(name).cloned()
}

/// Whether a client naming `client_hash` for service type `name` uses Lyrical's layout.
pub fn is_lyrical(name: &str, client_hash: Option<&str>) -> bool {
    client_hash.is_some_and(|h| lyrical_hash(name).as_deref() == Some(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_service_has_a_hash_and_lyrical_changes_four() {
        for s in JAZZY {
            let h = type_hash(s.name);
            assert!(h.starts_with("RIHS01_") && h.len() == 71 && h != type_hash("Nonesuch"), "{}: {h}", s.name);
        }
        for s in LYRICAL {
            let h = lyrical_hash(s.name).unwrap();
            assert_ne!(h, type_hash(s.name), "{}", s.name);
            assert!(is_lyrical(s.name, Some(&h)) && !is_lyrical(s.name, Some(&type_hash(s.name))));
        }
        assert!(!is_lyrical("Pause", None) && lyrical_hash("Pause").is_none());
    }
}
