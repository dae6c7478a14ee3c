//! A Cyclone DDS publisher and subscriber for `bench/ros2_live.sh`, on this crate's raw DDS layer
//! ([`rbag_ros2::dds`]): the reference that `rbag record --ros2` and `rbag play --ros2` are
//! measured against, with no ROS 2 installed.
//!
//! ```text
//! dds_bench pub --domain D [--topic rt/bench] [--type T] --size BYTES --rate HZ|max --count N
//!               [--reliable|--best-effort] [--depth N] [--wait-readers K] [--wait-timeout S]
//!               [--settle-ms MS] [--spin-us US] [--ack-timeout S]
//! dds_bench sub --domain D [--topic rt/bench] [--type T] [--count N] [--timeout S] [--idle S]
//!               [--reliable|--best-effort] [--samples FILE] [--schedule-rate HZ [--schedule-start-ns NS]]
//! dds_bench lateness --samples FILE --started NS (--bag BAG [--rate R] [--topic /bench] | --schedule-rate HZ)
//! ```
//!
//! **Payload.** Every sample is a valid CDR (little endian) `sensor_msgs/msg/CompressedImage`
//! of exactly BYTES bytes (BYTES ≥ 48, rounded up to a multiple of 4), encapsulation header
//! included: `header.stamp` is the send time (the wall clock just before the write),
//! `header.frame_id` the sample's index as 16 decimal digits, `format` is `"raw"`, and `data`
//! fills the rest. The fixed layout lets the subscriber read both at fixed offsets:
//!
//! ```text
//! 0 encapsulation 00 01 00 00 | 4 stamp.sec i32 | 8 stamp.nanosec u32 | 12 frame_id length 17
//! 16 frame_id: 16 digits + NUL | 33 pad | 36 format length 4 | 40 "raw\0" | 44 data length | 48 data
//! ```
//!
//! **pub** joins domain D (default ROS_DOMAIN_ID, else 0), creates one writer (reliable unless
//! --best-effort; keep-last --depth, default 10, as a default ROS 2 publisher; depth 0 means
//! keep-all), waits until K readers are matched (--wait-readers, at most --wait-timeout s, 30)
//! and --settle-ms more (default 500, so the readers match the writer too), then writes N samples,
//! sample i due at `start + i / HZ`. It sleeps until a sample is due (less --spin-us, default 0,
//! which it then busy-waits); a sample already due goes out at once, so a late wake-up is caught
//! up with a short burst and the average rate stays HZ. `--rate max` writes back to back. A
//! reliable write that times out (readers too far behind) is retried until it is taken, and
//! counted. At the end it waits for every reliable reader to acknowledge (--ack-timeout, 30 s)
//! and prints one JSON line on stdout: `sent`, `bytes`, `seconds` (first write → last write
//! returned), `msgs_per_s`, `write_timeouts`, `acked`, `ack_wait_s`, `start_wall_ns` (the wall
//! clock when sample 0 was due) and, when paced, `late_*`: how late each write call began
//! against its due time (p50/p99/max ns).
//!
//! **sub** creates one raw reader (reliable keep-all unless --best-effort) with a
//! data-available listener that notes, on Cyclone's receive thread, the receive wall time, the
//! index and send time from the payload, and the DDS source timestamp. It prints `ready` on
//! stderr once the reader exists, ends after N samples, or --idle s (3) without a sample once one
//! arrived, or --timeout s (600), and prints one JSON line on stdout: `received`, `bytes`,
//! `first_recv_ns`, `last_recv_ns`, `span_s`, `msgs_per_s` ((received − 1) / span), `unique`
//! indices, `duplicates`, `out_of_order` (index lower than the previous), `missing` (indices below
//! the highest one seen that never came), `unreadable`; `e2e_*` = receive − send time in the
//! payload (only meaningful when dds_bench pub sent it), `transit_*` = receive − DDS source
//! timestamp (for `rbag play --ros2`, which stamps with the wall clock at its send call, the
//! time from the send call to the subscriber), each p50/p99/max in ns. With --samples it writes
//! `index recv_ns source_ts_ns` per sample. With --schedule-rate HZ it also reports lateness
//! against the schedule `start + index / HZ` (`lateness_*` when --schedule-start-ns gives the
//! start, and `vs_earliest_*` always, as below).
//!
//! **lateness** reads a samples file and the bag the samples were played from (the index in
//! each payload finds the message and its log time) and prints p50/p99/max of
//! `recv − (started + (log − first_log) / rate)`, the schedule `rbag play --stats` reports
//! (`started_wall_ns`, first_log = the first message of the topic in the bag), and
//! `vs_earliest`: the same against the earliest anchor the samples allow, i.e. the delay beyond
//! the least-delayed message (≥ 0). With --schedule-rate HZ instead of --bag, the schedule is
//! `started + index / HZ` (dds_bench pub's own, `--started` = its `start_wall_ns`).
//!
//! Cyclone reads CYCLONEDDS_URI as usual: the benchmark points it at the loopback-only
//! configuration in rbag-testkit.

#[cfg(not(feature = "dds"))]
fn main() {
    eprintln!("dds_bench: built without the `dds` feature");
    std::process::exit(2);
}

#[cfg(feature = "dds")]
fn main() {
    imp::main()
}

#[cfg(feature = "dds")]
mod imp {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use rbag_ros2::dds::{Participant, RawReader, RawWriter, Sample};
    use rbag_storage::rosbag2::qos::{policy, QosProfile};

    const DEFAULT_TOPIC: &str = "rt/bench";
    const DEFAULT_TYPE: &str = "sensor_msgs::msg::dds_::CompressedImage_";
    /// Bytes before `data` in the payload (see the module docs).
    const HEAD: usize = 48;

    fn usage() -> ! {
        eprintln!(
            "usage: dds_bench pub --domain D [--topic T] [--type TYPE] --size BYTES --rate HZ|max --count N [--reliable|--best-effort] [--depth N]\n\
             \x20                    [--wait-readers K] [--wait-timeout S] [--settle-ms MS] [--spin-us US] [--ack-timeout S]\n\
             \x20      dds_bench sub --domain D [--topic T] [--type TYPE] [--count N] [--timeout S] [--idle S] [--reliable|--best-effort] [--samples FILE]\n\
             \x20                    [--schedule-rate HZ [--schedule-start-ns NS]]\n\
             \x20      dds_bench lateness --samples FILE --started NS (--bag BAG [--rate R] [--topic /bench] | --schedule-rate HZ)"
        );
        std::process::exit(2)
    }

    fn die(msg: impl std::fmt::Display) -> ! {
        eprintln!("dds_bench: {msg}");
        std::process::exit(1)
    }

    fn now_ns() -> i64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64)
    }

    fn parse<T: std::str::FromStr>(v: String) -> T {
        v.parse().unwrap_or_else(|_| usage())
    }

    fn default_domain() -> u32 {
        std::env::var("ROS_DOMAIN_ID").ok().and_then(|v| v.parse().ok()).unwrap_or(0)
    }

    fn qos(reliable: bool, depth: u64) -> QosProfile {
        QosProfile {
            history: if depth == 0 { policy::KEEP_ALL } else { policy::KEEP_LAST },
            depth,
            reliability: if reliable { policy::RELIABLE } else { policy::BEST_EFFORT },
            durability: policy::VOLATILE,
            ..QosProfile::default()
        }
    }

    /// The payload of `size` bytes (see the module docs); index and stamp are filled per sample.
    fn payload(size: usize) -> Vec<u8> {
        let mut b = vec![0u8; size];
        b[..4].copy_from_slice(&[0, 1, 0, 0]);
        b[12..16].copy_from_slice(&17u32.to_le_bytes());
        b[16..32].copy_from_slice(b"0000000000000000");
        b[36..40].copy_from_slice(&4u32.to_le_bytes());
        b[40..44].copy_from_slice(b"raw\0");
        b[44..48].copy_from_slice(&((size - HEAD) as u32).to_le_bytes());
        // Data that does not compress to nothing (no storage here compresses, but keep it honest).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for c in b[HEAD..].chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let w = x.to_le_bytes();
            c.copy_from_slice(&w[..c.len()]);
        }
        b
    }

    fn stamp(b: &mut [u8], index: u64, send_ns: i64) {
        b[4..8].copy_from_slice(&((send_ns / 1_000_000_000) as i32).to_le_bytes());
        b[8..12].copy_from_slice(&((send_ns % 1_000_000_000) as u32).to_le_bytes());
        let mut i = index;
        for d in b[16..32].iter_mut().rev() {
            *d = b'0' + (i % 10) as u8;
            i /= 10;
        }
    }

    /// (index, send time) from a payload, if it has dds_bench's layout.
    fn read_payload(b: &[u8]) -> Option<(u64, i64)> {
        if b.len() < HEAD || b[12..16] != 17u32.to_le_bytes() {
            return None;
        }
        let sec = i32::from_le_bytes(b[4..8].try_into().ok()?) as i64;
        let nsec = u32::from_le_bytes(b[8..12].try_into().ok()?) as i64;
        let mut index = 0u64;
        for &d in &b[16..32] {
            if !d.is_ascii_digit() {
                return None;
            }
            index = index * 10 + (d - b'0') as u64;
        }
        Some((index, sec * 1_000_000_000 + nsec))
    }

    fn participant(domain: u32) -> Participant {
        Participant::new(domain).unwrap_or_else(|e| die(format!("joining domain {domain}: {e}")))
    }

    // ------------------------------------------------------------------------------------------
    // pub
    // ------------------------------------------------------------------------------------------

    fn publish(args: &[String]) {
        let (mut domain, mut topic, mut ty) = (default_domain(), DEFAULT_TOPIC.to_string(), DEFAULT_TYPE.to_string());
        let (mut size, mut rate, mut count): (Option<usize>, Option<f64>, Option<u64>) = (None, None, None);
        let (mut reliable, mut depth, mut wait_readers) = (true, 10u64, 0u32);
        let (mut wait_timeout, mut settle, mut spin, mut ack_timeout) = (30.0f64, 500u64, 0u64, 30.0f64);
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut val = || it.next().cloned().unwrap_or_else(|| usage());
            match a.as_str() {
                "--domain" => domain = parse(val()),
                "--topic" => topic = val(),
                "--type" => ty = val(),
                "--size" => size = Some(parse(val())),
                "--rate" => {
                    let v = val();
                    let r = if v == "max" { f64::INFINITY } else { parse::<f64>(v) };
                    if r.is_nan() || r <= 0.0 {
                        usage();
                    }
                    rate = Some(r);
                }
                "--count" => count = Some(parse(val())),
                "--reliable" => reliable = true,
                "--best-effort" => reliable = false,
                "--depth" => depth = parse(val()),
                "--wait-readers" => wait_readers = parse(val()),
                "--wait-timeout" => wait_timeout = parse(val()),
                "--settle-ms" => settle = parse(val()),
                "--spin-us" => spin = parse(val()),
                "--ack-timeout" => ack_timeout = parse(val()),
                _ => usage(),
            }
        }
        let (Some(size), Some(rate), Some(count)) = (size, rate, count) else { usage() };
        if size < HEAD {
            die(format!("--size {size}: at least {HEAD} bytes"));
        }
        let size = size.div_ceil(4) * 4;
        let p = participant(domain);
        let w = RawWriter::new(&p, &topic, &ty, &qos(reliable, depth), None).unwrap_or_else(|e| die(e));
        let t0 = Instant::now();
        while w.matched() < wait_readers {
            if t0.elapsed().as_secs_f64() > wait_timeout {
                die(format!("{topic}: {} of {wait_readers} reader(s) matched after {wait_timeout} s", w.matched()));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if wait_readers > 0 {
            eprintln!("matched {} reader(s) after {:.3} s", w.matched(), t0.elapsed().as_secs_f64());
            std::thread::sleep(Duration::from_millis(settle));
        }
        let mut buf = payload(size);
        let period_ns = if rate.is_finite() { 1e9 / rate } else { 0.0 };
        let spin = Duration::from_micros(spin);
        let mut timeouts = 0u64;
        let mut late: Vec<i64> = Vec::with_capacity(if period_ns > 0.0 { count.min(1 << 24) as usize } else { 0 });
        let start = Instant::now();
        let start_wall = now_ns();
        for i in 0..count {
            if period_ns > 0.0 {
                let due = start + Duration::from_nanos((i as f64 * period_ns) as u64);
                loop {
                    let now = Instant::now();
                    if now >= due {
                        break;
                    }
                    let left = due - now;
                    if left > spin {
                        std::thread::sleep(left - spin);
                    } else {
                        std::hint::spin_loop();
                    }
                }
            }
            let t = now_ns();
            if period_ns > 0.0 {
                late.push((start.elapsed().as_nanos() as f64 - i as f64 * period_ns) as i64);
            }
            stamp(&mut buf, i, t);
            loop {
                match w.write(&buf, t) {
                    Ok(()) => break,
                    Err(e) if e.timed_out() => timeouts += 1,
                    Err(e) => die(e),
                }
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        let a0 = Instant::now();
        let acked = !reliable || w.wait_for_acks(Duration::from_secs_f64(ack_timeout)).is_ok();
        let ack_wait = a0.elapsed().as_secs_f64();
        let mps = if seconds > 0.0 { count as f64 / seconds } else { 0.0 };
        let mut out = format!(
            "{{\"sent\":{count},\"bytes\":{},\"size\":{size},\"start_wall_ns\":{start_wall},\"seconds\":{seconds:.6},\"msgs_per_s\":{mps:.1},\"write_timeouts\":{timeouts},\"acked\":{acked},\"ack_wait_s\":{ack_wait:.3},\"matched_at_end\":{}",
            count * size as u64,
            w.matched()
        );
        if !late.is_empty() {
            out += &stats("late", late);
        }
        out.push('}');
        println!("{out}");
    }

    // ------------------------------------------------------------------------------------------
    // sub
    // ------------------------------------------------------------------------------------------

    #[derive(Default)]
    struct State {
        bytes: u64,
        unreadable: u64,
        first_recv: i64,
        last_recv: i64,
        /// (index, recv_ns, send_ns in the payload, DDS source timestamp)
        samples: Vec<(u64, i64, i64, i64)>,
    }

    /// Nearest-rank percentile of sorted values.
    fn pct(sorted: &[i64], p: f64) -> i64 {
        if sorted.is_empty() {
            return 0;
        }
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    fn stats(name: &str, mut v: Vec<i64>) -> String {
        v.sort_unstable();
        format!(
            ",\"{name}_p50_ns\":{},\"{name}_p99_ns\":{},\"{name}_max_ns\":{}",
            pct(&v, 50.0),
            pct(&v, 99.0),
            v.last().copied().unwrap_or(0)
        )
    }

    fn subscribe(args: &[String]) {
        let (mut domain, mut topic, mut ty) = (default_domain(), DEFAULT_TOPIC.to_string(), DEFAULT_TYPE.to_string());
        let (mut count, mut timeout, mut idle, mut reliable) = (u64::MAX, 600.0f64, 3.0f64, true);
        let mut samples_path: Option<String> = None;
        let (mut sched_start, mut sched_rate) = (None::<i64>, None::<f64>);
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut val = || it.next().cloned().unwrap_or_else(|| usage());
            match a.as_str() {
                "--domain" => domain = parse(val()),
                "--topic" => topic = val(),
                "--type" => ty = val(),
                "--count" => count = parse(val()),
                "--timeout" => timeout = parse(val()),
                "--idle" => idle = parse(val()),
                "--reliable" => reliable = true,
                "--best-effort" => reliable = false,
                "--samples" => samples_path = Some(val()),
                "--schedule-start-ns" => sched_start = Some(parse(val())),
                "--schedule-rate" => sched_rate = Some(parse(val())),
                _ => usage(),
            }
        }
        let state = Arc::new(Mutex::new(State { samples: Vec::with_capacity(1 << 16), ..State::default() }));
        let received = Arc::new(AtomicU64::new(0));
        let p = participant(domain);
        let (st, n) = (state.clone(), received.clone());
        let callback = Box::new(move |s: Sample| {
            let recv = now_ns();
            let mut g = st.lock().unwrap();
            if g.samples.is_empty() && g.unreadable == 0 {
                g.first_recv = recv;
            }
            g.last_recv = recv;
            g.bytes += s.data.len() as u64;
            match read_payload(&s.data) {
                Some((index, send)) => g.samples.push((index, recv, send, s.source_timestamp)),
                None => g.unreadable += 1,
            }
            n.fetch_add(1, Ordering::Release);
        });
        let reader = RawReader::new(&p, &topic, &ty, &qos(reliable, 0), callback).unwrap_or_else(|e| die(e));
        eprintln!("ready");
        let start = Instant::now();
        let mut last_seen = (0u64, Instant::now());
        loop {
            std::thread::sleep(Duration::from_millis(10));
            let k = received.load(Ordering::Acquire);
            if k != last_seen.0 {
                last_seen = (k, Instant::now());
            }
            if k >= count
                || (k > 0 && last_seen.1.elapsed().as_secs_f64() >= idle)
                || start.elapsed().as_secs_f64() >= timeout
            {
                break;
            }
        }
        drop(reader);
        let s = std::mem::take(&mut *state.lock().unwrap());
        let total = s.samples.len() as u64 + s.unreadable;
        if let Some(path) = samples_path {
            let mut out = String::with_capacity(s.samples.len() * 48);
            for (i, recv, _, src) in &s.samples {
                out.push_str(&format!("{i} {recv} {src}\n"));
            }
            std::fs::write(&path, out).unwrap_or_else(|e| die(format!("{path}: {e}")));
        }
        let mut seen = std::collections::HashSet::with_capacity(s.samples.len());
        let (mut dup, mut ooo, mut prev, mut top) = (0u64, 0u64, None::<u64>, None::<u64>);
        for (i, ..) in &s.samples {
            if !seen.insert(*i) {
                dup += 1;
            }
            if prev.is_some_and(|p| *i < p) {
                ooo += 1;
            }
            prev = Some(*i);
            top = top.max(Some(*i));
        }
        let missing = top.map_or(0, |t| t + 1 - seen.len() as u64);
        let span = (s.last_recv - s.first_recv).max(0) as f64 / 1e9;
        let rate = if span > 0.0 && total > 1 { (total - 1) as f64 / span } else { 0.0 };
        let mut out = format!(
            "{{\"received\":{total},\"bytes\":{},\"first_recv_ns\":{},\"last_recv_ns\":{},\"span_s\":{span:.6},\"msgs_per_s\":{rate:.1},\"unique\":{},\"duplicates\":{dup},\"out_of_order\":{ooo},\"missing\":{missing},\"unreadable\":{}",
            s.bytes,
            s.first_recv,
            s.last_recv,
            seen.len(),
            s.unreadable
        );
        out += &stats("e2e", s.samples.iter().map(|&(_, r, send, _)| r - send).collect());
        out += &stats("transit", s.samples.iter().map(|&(_, r, _, src)| r - src).collect());
        if let (Some(hz), false) = (sched_rate.filter(|h| *h > 0.0), s.samples.is_empty()) {
            let pts: Vec<(i64, i64)> = s.samples.iter().map(|&(i, r, ..)| ((i as f64 * 1e9 / hz) as i64, r)).collect();
            out += &lateness_json(&pts, sched_start);
        }
        out.push('}');
        println!("{out}");
    }

    // ------------------------------------------------------------------------------------------
    // lateness
    // ------------------------------------------------------------------------------------------

    /// Lateness of `(offset in the schedule, recv)` points against `started`, and against the
    /// earliest anchor they allow; JSON fields after `count`.
    fn lateness_json(pts: &[(i64, i64)], started: Option<i64>) -> String {
        let late = |anchor: i64| {
            let mut v: Vec<i64> = pts.iter().map(|&(off, recv)| recv - (anchor + off)).collect();
            v.sort_unstable();
            v
        };
        let mut out = String::new();
        if let Some(st) = started {
            let v = late(st);
            out += &format!(
                ",\"lateness_min_ns\":{},\"lateness_p50_ns\":{},\"lateness_p99_ns\":{},\"lateness_max_ns\":{}",
                v[0],
                pct(&v, 50.0),
                pct(&v, 99.0),
                v[v.len() - 1]
            );
        }
        let earliest = pts.iter().map(|&(off, recv)| recv - off).min().unwrap_or(0);
        let rel = late(earliest);
        out += &format!(
            ",\"vs_earliest_p50_ns\":{},\"vs_earliest_p99_ns\":{},\"vs_earliest_max_ns\":{}",
            pct(&rel, 50.0),
            pct(&rel, 99.0),
            rel[rel.len() - 1]
        );
        out
    }

    /// index -> log time of the messages on `topic` in `bag` (u64::MAX where none), and the
    /// topic's first log time.
    fn log_times(bag: &str, topic: &str) -> (Vec<u64>, u64) {
        let reader = rbag_storage::open(std::path::Path::new(bag)).unwrap_or_else(|e| die(format!("{bag}: {e}")));
        let ids: Vec<u32> = reader.connections().iter().filter(|c| c.topic == topic).map(|c| c.id).collect();
        let mut log_of: Vec<u64> = Vec::new();
        let mut first_log = None::<u64>;
        for m in reader.messages(&rbag_storage::Filter::default()).unwrap_or_else(|e| die(format!("{bag}: {e}"))) {
            let m = m.unwrap_or_else(|e| die(format!("{bag}: {e}")));
            if !ids.contains(&m.connection) {
                continue;
            }
            first_log.get_or_insert(m.log_time);
            let Some((i, _)) = read_payload(&m.data) else { continue };
            let i = i as usize;
            if log_of.len() <= i {
                log_of.resize(i + 1, u64::MAX);
            }
            log_of[i] = m.log_time;
        }
        (log_of, first_log.unwrap_or_else(|| die(format!("{bag}: no message on {topic}"))))
    }

    fn lateness(args: &[String]) {
        let (mut samples, mut bag, mut started, mut rate, mut topic) =
            (None::<String>, None::<String>, None::<i64>, 1.0f64, "/bench".to_string());
        let mut schedule_rate = None::<f64>;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut val = || it.next().cloned().unwrap_or_else(|| usage());
            match a.as_str() {
                "--samples" => samples = Some(val()),
                "--bag" => bag = Some(val()),
                "--started" | "--schedule-start-ns" => started = Some(parse(val())),
                "--rate" => rate = parse(val()),
                "--schedule-rate" => schedule_rate = Some(parse(val())),
                "--topic" => topic = val(),
                _ => usage(),
            }
        }
        let (Some(samples), Some(started)) = (samples, started) else { usage() };
        // The schedule: the bag's log times (divided by the play rate), or index / HZ.
        let offset: Box<dyn Fn(usize) -> Option<i64>> = match (bag, schedule_rate) {
            (Some(bag), None) => {
                let (log_of, first_log) = log_times(&bag, &topic);
                Box::new(move |i| {
                    log_of.get(i).filter(|&&l| l != u64::MAX).map(|&l| ((l - first_log) as f64 / rate) as i64)
                })
            }
            (None, Some(hz)) if hz > 0.0 => Box::new(move |i| Some((i as f64 * 1e9 / hz) as i64)),
            _ => usage(),
        };
        let text = std::fs::read_to_string(&samples).unwrap_or_else(|e| die(format!("{samples}: {e}")));
        let mut pts: Vec<(i64, i64)> = Vec::new();
        let mut unmatched = 0u64;
        for l in text.lines() {
            let mut f = l.split(' ');
            let (Some(i), Some(recv)) =
                (f.next().and_then(|v| v.parse::<usize>().ok()), f.next().and_then(|v| v.parse::<i64>().ok()))
            else {
                continue;
            };
            match offset(i) {
                Some(off) => pts.push((off, recv)),
                None => unmatched += 1,
            }
        }
        if pts.is_empty() {
            die(format!("{samples}: no sample matches the schedule"));
        }
        println!("{{\"count\":{},\"unmatched\":{unmatched}{}}}", pts.len(), lateness_json(&pts, Some(started)));
    }

    pub fn main() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        match args.first().map(String::as_str) {
            Some("pub") => publish(&args[1..]),
            Some("sub") => subscribe(&args[1..]),
            Some("lateness") => lateness(&args[1..]),
            _ => usage(),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn payload_round_trips() {
            let mut b = payload(1024);
            stamp(&mut b, 12345, 1_700_000_000_123_456_789);
            assert_eq!(read_payload(&b), Some((12345, 1_700_000_000_123_456_789)));
            assert_eq!(b.len(), 1024);
        }
    }
}
