//! One module per verb. Each has an `Args` (clap) and a `run` returning an [`crate::Outcome`].

pub mod completions;
#[cfg(feature = "ros2")]
pub mod control_services;
pub mod convert;
pub mod echo;
pub mod info;
pub mod keyboard;
pub mod list;
pub mod master;
pub mod middleware;
pub mod play;
pub mod play_plan;
pub mod play_ros1;
#[cfg(feature = "ros2")]
pub mod play_ros2;
pub mod rate_control;
pub mod record;
pub mod record_ros1;
#[cfg(feature = "ros2")]
pub mod record_ros2;
pub mod reindex;
pub mod ros1;
#[cfg(feature = "ros2")]
pub mod ros2;
pub mod rosbag2_args;
#[cfg(feature = "ros2")]
pub mod service_requests;
pub mod signals;

use std::path::Path;

use anyhow::Result;

/// Opens a bag for reading and prints what the storage warned about (a scanned file, a
/// skipped chunk). Storage errors already name the file.
pub fn open(path: &Path) -> Result<Box<dyn rbag_storage::StorageReader>> {
    open_with(path, &ReadArgs::default())
}

/// How verbs that read messages treat a damaged bag.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct ReadArgs {
    /// Read messages on connections the bag never declares (a ROS 1 connection with no
    /// connection record, an MCAP channel with no Channel record, a rosbag2 topic id missing
    /// from the topics table) as topic /rbag/undeclared/<id> with no type, kept raw where the
    /// output allows, instead of failing on the first one. rbag then exits with 3.
    #[arg(long)]
    pub lenient: bool,
}

/// [`open`] with `read`'s options. Under `--lenient`, messages read on stand-ins for
/// undeclared connections are counted, and the run ends with exit code 3 (see `main`).
pub fn open_with(path: &Path, read: &ReadArgs) -> Result<Box<dyn rbag_storage::StorageReader>> {
    let reader = rbag_storage::open_with(path, &rbag_storage::ReadOptions { lenient: read.lenient })?;
    for w in reader.warnings() {
        note!("warning: {}: {w}", path.display());
    }
    if !read.lenient {
        return Ok(reader);
    }
    let stand_ins: Vec<u32> =
        reader.info()?.undeclared.keys().copied().filter(|&id| reader.connection(id).is_some()).collect();
    if stand_ins.is_empty() {
        return Ok(reader);
    }
    Ok(Box::new(undeclared::Counted { inner: reader, stand_ins }))
}

/// Says what `reader` could not read of `path` (a torn tail, a skipped chunk) as dropped;
/// returns whether there was any, for exit code 3.
pub fn report_lost(path: &Path, reader: &dyn rbag_storage::StorageReader) -> bool {
    let lost = reader.lost();
    for l in &lost {
        note!("dropped: {}: {l}", path.display());
    }
    !lost.is_empty()
}

pub mod undeclared {
    //! Counting the messages a lenient read takes from stand-in connections, for the exit code.

    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicU64, Ordering};

    use rbag_storage::{Connection, Filter, Message, MessageIter, ReadStats, Result, StorageInfo, StorageReader};

    static READ: AtomicU64 = AtomicU64::new(0);

    /// Messages read on stand-ins for undeclared connections in this run.
    pub fn read() -> u64 {
        READ.load(Ordering::Relaxed)
    }

    /// A reader whose message streams count the messages of `stand_ins` (sorted).
    pub struct Counted {
        pub inner: Box<dyn StorageReader>,
        pub stand_ins: Vec<u32>,
    }

    impl Counted {
        fn count<'a>(&'a self, iter: MessageIter<'a>) -> MessageIter<'a> {
            Box::new(iter.inspect(|m| {
                if m.as_ref().is_ok_and(|m| self.stand_ins.binary_search(&m.connection).is_ok()) {
                    READ.fetch_add(1, Ordering::Relaxed);
                }
            }))
        }
    }

    impl StorageReader for Counted {
        fn connections(&self) -> &[Connection] {
            self.inner.connections()
        }
        fn info(&self) -> Result<StorageInfo> {
            self.inner.info()
        }
        fn messages<'a>(&'a self, filter: &Filter) -> Result<MessageIter<'a>> {
            Ok(self.count(self.inner.messages(filter)?))
        }
        fn nth(&self, topic: &str, n: u64) -> Result<Option<Message>> {
            self.inner.nth(topic, n)
        }
        fn seek<'a>(&'a self, time_ns: u64) -> Result<MessageIter<'a>> {
            Ok(self.count(self.inner.seek(time_ns)?))
        }
        fn median_periods(&self) -> Result<BTreeMap<String, u64>> {
            self.inner.median_periods()
        }
        fn stats(&self) -> ReadStats {
            self.inner.stats()
        }
        fn warnings(&self) -> Vec<String> {
            self.inner.warnings()
        }
        fn lost(&self) -> Vec<String> {
            self.inner.lost()
        }
        fn connection(&self, id: u32) -> Option<&Connection> {
            self.inner.connection(id)
        }
    }
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
    pub fn sources(
        &self,
        properties: &std::collections::BTreeMap<String, String>,
    ) -> Result<rbag_bag::decode::TypeSources> {
        use rbag_msg::store::{self, Distro};
        let distro = properties
            .get("ros_distro")
            .and_then(|d| d.parse::<Distro>().ok())
            .filter(|d| *d != Distro::Noetic)
            .unwrap_or(Distro::Humble);
        let (mut ros1, mut ros2) = load_msg_dirs(&self.msg_paths, "--msg-path")?;
        ros1.fill_from(store::registry(Distro::Noetic));
        ros2.fill_from(&store_ros2(distro));
        Ok(rbag_bag::decode::TypeSources::new(ros1, ros2))
    }
}

/// The bundled ROS 2 types of `distro`, then those only later distros have.
pub fn store_ros2(distro: rbag_msg::store::Distro) -> rbag_msg::Registry {
    use rbag_msg::store::{self, Distro};
    let mut reg = store::registry(distro).clone();
    for later in [Distro::Humble, Distro::Iron, Distro::Jazzy, Distro::Kilted] {
        reg.fill_from(store::registry(later));
    }
    reg
}

/// Definitions from `[PKG=]DIR` directories, as ROS 1 and ROS 2 registries: `.msg` files say
/// nothing of their dialect, so each dialect that parses every file keeps them.
pub fn load_msg_dirs(specs: &[String], flag: &str) -> Result<(rbag_msg::Registry, rbag_msg::Registry)> {
    use rbag_msg::{Dialect, Registry};
    let mut ros1 = Registry::new(Dialect::Ros1);
    let mut ros2 = Registry::new(Dialect::Ros2);
    for spec in specs {
        let mut errors = Vec::new();
        for reg in [&mut ros1, &mut ros2] {
            let mut tmp = Registry::new(reg.dialect());
            let loaded = match spec.split_once('=') {
                Some((pkg, dir)) => rbag_msg::msg_path::load_as(&mut tmp, Path::new(dir), pkg),
                None => rbag_msg::msg_path::load(&mut tmp, Path::new(spec)),
            };
            match loaded {
                Ok(0) => anyhow::bail!("{flag} {spec}: no .msg files found"),
                Ok(_) => reg.fill_from(&tmp),
                Err(e) => errors.push(e.to_string()),
            }
        }
        if errors.len() == 2 {
            anyhow::bail!("{flag} {spec}: not ROS 1 definitions ({}) nor ROS 2 ones ({})", errors[0], errors[1]);
        }
    }
    Ok((ros1, ros2))
}
