//! Where message types come from when a bag lacks them: directories of `.msg` files given by
//! the user, then the definitions bundled with rbag for a ROS distribution.
//!
//! ```
//! use rbag_bag::types::{self, Distro};
//! // The bundled ROS 2 types of humble, then those only later distros have.
//! let reg = types::bundled_ros2(Distro::Humble);
//! assert!(reg.contains("sensor_msgs/msg/Imu"));
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rbag_msg::migrate::Rules;
use rbag_msg::store;
pub use rbag_msg::store::Distro;
use rbag_msg::{Dialect, Registry};

use crate::decode::TypeSources;
pub use crate::transcode::connection_for;
use crate::transcode::Targets;
use crate::{Error, Result};

/// The bundled ROS 2 types of `distro`, then those only later distros have.
pub fn bundled_ros2(distro: Distro) -> Registry {
    let mut reg = store::registry(distro).clone();
    for later in [Distro::Humble, Distro::Iron, Distro::Jazzy, Distro::Kilted] {
        reg.fill_from(store::registry(later));
    }
    // The bundled services parse against the types just added (a test holds them to it).
    let _ = store::add_services(&mut reg);
    reg
}

/// The bundled ROS 1 (noetic) types.
pub fn bundled_ros1() -> Registry {
    store::registry(Distro::Noetic).clone()
}

/// Definitions from `[PKG=]DIR` specs, as ROS 1 and ROS 2 registries: an install prefix
/// (`share/<pkg>/msg/*.msg`), a share directory, one package, or `PKG=DIR` for a flat directory
/// of `.msg` files of package PKG. `.msg` files say nothing of their dialect, so each dialect
/// that parses every file keeps them.
pub fn load_dirs(specs: &[String]) -> Result<(Registry, Registry)> {
    let mut ros1 = Registry::new(Dialect::Ros1);
    let mut ros2 = Registry::new(Dialect::Ros2);
    for spec in specs {
        let (pkg, dir) = match spec.split_once('=') {
            Some((pkg, dir)) => (Some(pkg), Path::new(dir)),
            None => (None, Path::new(spec.as_str())),
        };
        let mut errors = Vec::new();
        let mut loaded_any = false;
        for reg in [&mut ros1, &mut ros2] {
            let mut tmp = Registry::new(reg.dialect());
            let loaded = match pkg {
                Some(pkg) => rbag_msg::msg_path::load_as(&mut tmp, dir, pkg),
                None => rbag_msg::msg_path::load(&mut tmp, dir),
            };
            match loaded {
                // A directory of only `.srv`/`.action` files has nothing for ROS 1: that is
                // no error as long as the ROS 2 registry took something.
                Ok(0) => {}
                Ok(_) => {
                    reg.fill_from(&tmp);
                    loaded_any = true;
                }
                Err(e) => errors.push(e),
            }
        }
        if let (Some(ros2), Some(ros1)) = (errors.pop(), errors.pop()) {
            return Err(Error::Definitions { path: dir.into(), ros1: Box::new(ros1), ros2: Box::new(ros2) });
        }
        if !loaded_any {
            return Err(Error::NoDefinitions { path: dir.into() });
        }
    }
    Ok((ros1, ros2))
}

/// The distro a bag says it was recorded on (rosbag2's `ros_distro`), for the bundled types;
/// humble when it does not say or names a ROS 1 distro.
pub fn distro_of(properties: &BTreeMap<String, String>) -> Distro {
    ros2_distro(properties.get("ros_distro").map(String::as_str))
}

fn ros2_distro(name: Option<&str>) -> Distro {
    name.and_then(|d| d.parse::<Distro>().ok()).filter(|d| *d != Distro::Noetic).unwrap_or(Distro::Humble)
}

/// Fallback types for reading a bag: the `dirs` first, then the bundled store for the bag's
/// distro (see [`distro_of`]), then types only later distros have.
pub fn sources_for(properties: &BTreeMap<String, String>, dirs: &[String]) -> Result<TypeSources> {
    let (mut ros1, mut ros2) = load_dirs(dirs)?;
    ros1.fill_from(store::registry(Distro::Noetic));
    ros2.fill_from(&bundled_ros2(distro_of(properties)));
    Ok(TypeSources::new(ros1, ros2))
}

/// The bundled types alone: noetic for ROS 1, `distro` (and later additions) for ROS 2.
pub fn bundled(distro: Distro) -> TypeSources {
    TypeSources::new(bundled_ros1(), bundled_ros2(distro))
}

/// Output types for a conversion: the bundled store for the output's distro (`ros_distro`,
/// humble when absent), and the newer definitions in `migrate_dirs` that messages of those
/// types are rewritten into, with field renames from `rules` (YAML:
/// `renames: {pkg/msg/Type: {old_field: new_field}}`).
pub fn targets(ros_distro: Option<&str>, migrate_dirs: &[String], rules: Option<&Path>) -> Result<Targets> {
    let (migrate_ros1, migrate_ros2) = load_dirs(migrate_dirs)?;
    let rules = match rules {
        Some(p) => read_rules(p)?,
        None => Rules::default(),
    };
    Ok(Targets {
        standard: bundled(ros2_distro(ros_distro)),
        migrate: TypeSources::new(migrate_ros1, migrate_ros2),
        rules,
    })
}

/// The migration rules file.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    renames: BTreeMap<String, BTreeMap<String, String>>,
}

/// Reads a migration rules file (see [`targets`]).
pub fn read_rules(path: &Path) -> Result<Rules> {
    let bad = |reason: String| Error::Rules { path: PathBuf::from(path), reason };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let file: RulesFile = serde_saphyr::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let mut rules = Rules::default();
    for (ty, renames) in &file.renames {
        for (old, new) in renames {
            rules.rename(ty, old, new);
        }
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_of_only_an_action_gives_its_derived_types() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("example_interfaces");
        std::fs::create_dir_all(pkg.join("action")).unwrap();
        std::fs::write(
            pkg.join("action/Fibonacci.action"),
            "int32 order\n---\nint32[] sequence\n---\nint32[] sequence\n",
        )
        .unwrap();
        let (ros1, ros2) = load_dirs(&[pkg.display().to_string()]).unwrap();
        assert!(!ros1.contains("example_interfaces/action/Fibonacci_Goal"));
        for ty in ["SendGoal_Event", "GetResult_Event", "FeedbackMessage"] {
            assert!(ros2.contains(&format!("example_interfaces/action/Fibonacci_{ty}")), "{ty}");
        }
        let empty = dir.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        assert!(matches!(load_dirs(&[empty.display().to_string()]), Err(Error::NoDefinitions { .. })));
    }
}
