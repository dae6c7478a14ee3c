//! rosbag2_interfaces' services, as rosbag2 defines them: the fields rbag reads and answers,
//! and their RIHS01 hashes (which rmw_zenoh puts in every key and token, and DDS endpoints in
//! their user data). Comments and default values change neither the layout nor the hash, so
//! only the fields are kept here.

use std::collections::HashMap;
use std::sync::OnceLock;

use rbag_msg::store::Distro;

/// A service of rosbag2_interfaces: its name (`Pause`) and `.srv` text (fields only).
struct Srv {
    name: &'static str,
    text: &'static str,
}

/// The services of Jazzy's rosbag2_interfaces.
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
    Srv { name: "Record", text: "string uri\n---\n" },
    Srv { name: "Resume", text: "---\n" },
    Srv { name: "Seek", text: "builtin_interfaces/Time time\n---\nbool success\n" },
    Srv { name: "SetRate", text: "float64 rate\n---\nbool success\n" },
    Srv { name: "Snapshot", text: "---\nbool success\n" },
    Srv { name: "SplitBagfile", text: "---\n" },
    Srv { name: "StartDiscovery", text: "---\n" },
    Srv { name: "Stop", text: "---\n" },
    Srv { name: "StopDiscovery", text: "---\n" },
    Srv { name: "TogglePaused", text: "---\n" },
];

/// `RIHS01_…` of `rosbag2_interfaces/srv/<name>` as Jazzy defines it; a fixed all-zero hash
/// for a name not listed (the queryables take any hash, so only the graph listing shows it).
pub fn type_hash(name: &str) -> String {
    static HASHES: OnceLock<HashMap<&'static str, String>> = OnceLock::new();
    let hashes = HASHES.get_or_init(|| {
        let mut reg = rbag_msg::store::registry(Distro::Jazzy).clone();
        JAZZY
            .iter()
            .filter_map(|s| {
                let full = format!("rosbag2_interfaces/srv/{}", s.name);
                reg.add_srv(&full, s.text).ok()?;
                Some((s.name, reg.rihs01(&full).ok()?))
            })
            .collect()
    });
    hashes.get(name).cloned().unwrap_or_else(|| format!("RIHS01_{}", "0".repeat(64)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_service_has_a_hash() {
        for s in JAZZY {
            let h = type_hash(s.name);
            assert!(h.starts_with("RIHS01_") && h.len() == 71 && h != type_hash("Nonesuch"), "{}: {h}", s.name);
        }
    }
}
