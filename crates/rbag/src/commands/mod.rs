//! One module per verb. Each has an `Args` (clap) and a `run` returning an [`crate::Outcome`].

pub mod completions;
pub mod convert;
pub mod echo;
pub mod info;
pub mod list;
pub mod reindex;

use std::path::Path;

use anyhow::Result;

/// Opens a bag for reading and prints what the storage warned about (a scanned file, a
/// skipped chunk). Storage errors already name the file.
pub fn open(path: &Path) -> Result<Box<dyn rbag_storage::StorageReader>> {
    let reader = rbag_storage::open(path)?;
    for w in reader.warnings() {
        eprintln!("warning: {}: {w}", path.display());
    }
    Ok(reader)
}

/// Where message types come from, for verbs that decode.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TypeArgs {
    /// Read message definitions from this directory too: an install prefix
    /// (`share/<pkg>/msg/*.msg`), a share directory, one package, or `PKG=DIR` for a flat
    /// directory of `.msg` files that belong to package PKG. Repeatable.
    #[arg(long = "msg-path", value_name = "[PKG=]DIR")]
    msg_paths: Vec<String>,
}

impl TypeArgs {
    /// Fallback types for a bag: `--msg-path` first, then the bundled store for the bag's
    /// distro (humble when it does not say), then types only later distros have.
    pub fn sources(&self, properties: &std::collections::BTreeMap<String, String>) -> Result<rbag_bag::decode::TypeSources> {
        use rbag_msg::store::{self, Distro};
        use rbag_msg::{Dialect, Registry};
        let distro = properties.get("ros_distro").and_then(|d| d.parse::<Distro>().ok()).filter(|d| *d != Distro::Noetic).unwrap_or(Distro::Humble);
        let mut ros1 = Registry::new(Dialect::Ros1);
        let mut ros2 = Registry::new(Dialect::Ros2);
        for spec in &self.msg_paths {
            // The files say nothing of their dialect: keep each dialect that parses them all.
            let mut loaded = Vec::new();
            for reg in [&mut ros1, &mut ros2] {
                let mut tmp = Registry::new(reg.dialect());
                let n = match spec.split_once('=') {
                    Some((pkg, dir)) => rbag_msg::msg_path::load_as(&mut tmp, Path::new(dir), pkg),
                    None => rbag_msg::msg_path::load(&mut tmp, Path::new(spec)),
                };
                if let Ok(n) = &n {
                    reg.fill_from(&tmp);
                    if *n == 0 {
                        anyhow::bail!("--msg-path {spec}: no .msg files found");
                    }
                }
                loaded.push(n);
            }
            if let (Err(e1), Err(e2)) = (&loaded[0], &loaded[1]) {
                anyhow::bail!("--msg-path {spec}: not ROS 1 definitions ({e1}) nor ROS 2 ones ({e2})");
            }
        }
        ros1.fill_from(store::registry(Distro::Noetic));
        ros2.fill_from(store::registry(distro));
        for later in [Distro::Humble, Distro::Iron, Distro::Jazzy, Distro::Kilted] {
            ros2.fill_from(store::registry(later));
        }
        Ok(rbag_bag::decode::TypeSources::new(ros1, ros2))
    }
}
