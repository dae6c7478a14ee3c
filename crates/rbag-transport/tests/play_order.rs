//! `--message-order sent`, `--delay` on the player's clock and progress reports, driven by a
//! virtual clock: every time asserted is exact.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use rbag_storage::Message;
use rbag_transport::clock::{Clock, VirtualClock};
use rbag_transport::play::{
    Control, MessageOrder, PlayError, PlayOptions, PlayReport, PlaySink, Player, Progress, ProgressHook, ProgressState,
    VecSource,
};

const MS: u64 = 1_000_000;
const BAG0: u64 = 1_700_000_000_000_000_000;

/// Messages logged 100 ms apart, sent at these milliseconds (after `BAG0`), tagged with their
/// storage index.
fn sent_at(sent_ms: &[u64]) -> VecSource {
    VecSource::new(
        sent_ms
            .iter()
            .enumerate()
            .map(|(i, &s)| Message {
                connection: 0,
                log_time: BAG0 + i as u64 * 100 * MS,
                publish_time: BAG0 + s * MS,
                data: Bytes::from(i.to_string()),
            })
            .collect(),
    )
}

/// (clock ms, message tag, /clock values sent before it in ms).
#[derive(Default)]
struct Rec {
    sent: Vec<(u64, String)>,
    clock_ms: Vec<u64>,
    now: Option<Arc<VirtualClock>>,
}

impl PlaySink for Rec {
    fn publish(&mut self, m: &Message) -> Result<(), PlayError> {
        let now = self.now.as_ref().map_or(0, |c| c.now() / MS);
        self.sent.push((now, String::from_utf8(m.data.to_vec()).unwrap()));
        Ok(())
    }

    fn clock(&mut self, t: u64) -> Result<(), PlayError> {
        self.clock_ms.push((t - BAG0) / MS);
        Ok(())
    }
}

fn play(options: PlayOptions, source: &mut VecSource, clock: Arc<VirtualClock>) -> (PlayReport, Rec) {
    let (_tx, rx): (Sender<Control>, Receiver<Control>) = channel();
    let mut sink = Rec { now: Some(clock.clone()), ..Rec::default() };
    let report = Player::new(options).unwrap().run(source, &mut sink, clock.as_ref(), &rx).unwrap();
    (report, sink)
}

fn tags(rec: &Rec) -> Vec<&str> {
    rec.sent.iter().map(|(_, t)| t.as_str()).collect()
}

fn sent_order(window: usize) -> PlayOptions {
    PlayOptions { message_order: MessageOrder::Sent, read_ahead: window, ..PlayOptions::default() }
}

/// Send times out of log order: 2 was sent first, then 0, 3, 1.
const SENT: &[u64] = &[100, 300, 50, 200];

#[test]
fn sent_order_plays_by_send_time_on_its_schedule() {
    let clock = Arc::new(VirtualClock::new(0));
    let options = PlayOptions { clock_hz: Some(1.0), ..sent_order(1000) };
    let (report, rec) = play(options, &mut sent_at(SENT), clock);
    assert_eq!(report.published, 4);
    // Anchored at the first sent (50 ms), then due at send time - 50 ms.
    assert_eq!(rec.sent, [(0, "2".into()), (50, "0".into()), (150, "3".into()), (250, "1".into())]);
    assert!(rec.clock_ms.starts_with(&[50]), "/clock carries send times: {:?}", rec.clock_ms);
    assert!([100, 200, 300].iter().all(|t| rec.clock_ms.contains(t)), "{:?}", rec.clock_ms);
}

#[test]
fn received_order_and_a_window_of_one_keep_storage_order() {
    let (_, rec) = play(PlayOptions::default(), &mut sent_at(SENT), Arc::new(VirtualClock::new(0)));
    assert_eq!(tags(&rec), ["0", "1", "2", "3"]);
    let times: Vec<u64> = rec.sent.iter().map(|s| s.0).collect();
    assert_eq!(times, [0, 100, 200, 300], "scheduled by log time");
    let (_, rec) =
        play(PlayOptions { immediate: true, ..sent_order(1) }, &mut sent_at(SENT), Arc::new(VirtualClock::new(0)));
    assert_eq!(tags(&rec), ["0", "1", "2", "3"]);
}

#[test]
fn the_window_bounds_the_reordering() {
    let options = PlayOptions { immediate: true, ..sent_order(2) };
    let (_, rec) = play(options, &mut sent_at(SENT), Arc::new(VirtualClock::new(0)));
    // {0, 1} → 0; {1, 2} → 2; {1, 3} → 3; 1.
    assert_eq!(tags(&rec), ["0", "2", "3", "1"]);
}

#[test]
fn loop_and_seek_still_work_in_sent_order() {
    // Immediate mode takes no time: the sink quits after two passes.
    struct Twice(Rec, Sender<Control>);
    impl PlaySink for Twice {
        fn publish(&mut self, m: &Message) -> Result<(), PlayError> {
            self.0.publish(m)?;
            if self.0.sent.len() == 8 {
                let _ = self.1.send(Control::Quit);
            }
            Ok(())
        }
    }
    let options = PlayOptions { loop_: true, immediate: true, ..sent_order(1000) };
    let (tx, rx) = channel();
    let mut twice = Twice(Rec::default(), tx);
    let clock = VirtualClock::new(0);
    let report = Player::new(options).unwrap().run(&mut sent_at(SENT), &mut twice, &clock, &rx).unwrap();
    assert!(report.loops >= 1 && report.quit);
    assert_eq!(tags(&twice.0), ["2", "0", "3", "1", "2", "0", "3", "1"]);

    // A seek to send time 150 ms: storage is reopened at log time 150 ms (messages 2 and 3),
    // and of those, what was sent from 150 ms on plays (3, at 200 ms).
    let clock = Arc::new(VirtualClock::new(0).at(10 * MS, Control::Seek(BAG0 + 150 * MS)));
    let (_, rec) = play(sent_order(1000), &mut sent_at(SENT), clock);
    assert_eq!(tags(&rec), ["2", "3"]);
    assert_eq!(rec.sent[1].0, 10 + 50, "due 50 ms after the seek target");
}

#[test]
fn the_delay_is_waited_on_the_clock_and_reported() {
    let seen = Arc::new(Mutex::new(Vec::<Progress>::new()));
    let log = seen.clone();
    let options = PlayOptions {
        start_delay_ns: 500 * MS,
        progress: Some(ProgressHook::new(move |p| log.lock().unwrap().push(*p))),
        ..PlayOptions::default()
    };
    let clock = Arc::new(VirtualClock::new(0));
    let (_, rec) = play(options, &mut sent_at(SENT), clock);
    let times: Vec<u64> = rec.sent.iter().map(|s| s.0).collect();
    assert_eq!(times, [500, 600, 700, 800]);
    let seen = seen.lock().unwrap();
    let states: Vec<ProgressState> = seen.iter().map(|p| p.state).collect();
    assert_eq!(states[0], ProgressState::Delayed);
    assert_eq!(states.last(), Some(&ProgressState::Stopped));
    assert!(states.contains(&ProgressState::Running));
    let last = seen.last().unwrap();
    assert_eq!((last.bag_time_ns, last.bag_start_ns, last.bag_end_ns), (BAG0 + 300 * MS, BAG0, BAG0 + 300 * MS));
}

#[test]
fn quit_and_pause_during_the_delay_are_heard() {
    let clock = Arc::new(VirtualClock::new(0).at(100 * MS, Control::Quit));
    let options = PlayOptions { start_delay_ns: 500 * MS, ..PlayOptions::default() };
    let (report, rec) = play(options, &mut sent_at(SENT), clock);
    assert!(report.quit && rec.sent.is_empty());

    let clock = Arc::new(VirtualClock::new(0).at(100 * MS, Control::Pause).at(900 * MS, Control::Resume));
    let options = PlayOptions { start_delay_ns: 500 * MS, ..PlayOptions::default() };
    let (_, rec) = play(options, &mut sent_at(SENT), clock);
    assert_eq!(rec.sent[0].0, 900, "paused during the delay, the first message waits for the resume");

    // Progress says delayed until the delay is over, whatever came meanwhile.
    let seen = Arc::new(Mutex::new(Vec::<ProgressState>::new()));
    let log = seen.clone();
    let clock = Arc::new(VirtualClock::new(0).at(100 * MS, Control::Pause).at(900 * MS, Control::Resume));
    let options = PlayOptions {
        start_delay_ns: 500 * MS,
        progress: Some(ProgressHook::new(move |p| log.lock().unwrap().push(p.state))),
        ..PlayOptions::default()
    };
    play(options, &mut sent_at(SENT), clock);
    let states = seen.lock().unwrap().clone();
    assert_eq!(states[..3], [ProgressState::Delayed, ProgressState::Delayed, ProgressState::Paused], "{states:?}");
}

#[test]
fn burst_and_pause_show_in_the_progress_state() {
    let seen = Arc::new(Mutex::new(Vec::<ProgressState>::new()));
    let log = seen.clone();
    let hook = ProgressHook::new(move |p| log.lock().unwrap().push(p.state));
    let options = PlayOptions { immediate: true, progress: Some(hook.clone()), ..PlayOptions::default() };
    play(options, &mut sent_at(SENT), Arc::new(VirtualClock::new(0)));
    assert!(seen.lock().unwrap().contains(&ProgressState::Burst));
    seen.lock().unwrap().clear();
    let clock = Arc::new(VirtualClock::new(0).at(150 * MS, Control::Pause).at(400 * MS, Control::Resume));
    play(PlayOptions { progress: Some(hook), ..PlayOptions::default() }, &mut sent_at(SENT), clock);
    let states = seen.lock().unwrap().clone();
    let paused = states.iter().position(|s| *s == ProgressState::Paused).expect("a paused report");
    assert_eq!(states[paused + 1], ProgressState::Running);
}

#[test]
fn sent_times_outside_the_logged_range_still_play_unless_cut_by_until() {
    // Sent before the first log time (a message is sent before it is received) and after the
    // last (another machine's clock).
    let source = || {
        VecSource::new(vec![
            Message { connection: 0, log_time: BAG0, publish_time: BAG0 - 5 * MS, data: Bytes::from("a") },
            Message { connection: 0, log_time: BAG0 + 10 * MS, publish_time: BAG0 + 20 * MS, data: Bytes::from("b") },
        ])
    };
    let options = PlayOptions { immediate: true, ..sent_order(10) };
    let (_, rec) = play(options.clone(), &mut source(), Arc::new(VirtualClock::new(0)));
    assert_eq!(tags(&rec), ["a", "b"]);
    let (_, rec) =
        play(PlayOptions { until_ns: Some(BAG0 + 10 * MS), ..options }, &mut source(), Arc::new(VirtualClock::new(0)));
    assert_eq!(tags(&rec), ["a"]);
}

#[test]
fn a_read_ahead_of_zero_is_refused() {
    assert!(Player::new(PlayOptions { read_ahead: 0, ..PlayOptions::default() }).is_err());
}
