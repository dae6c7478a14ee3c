//! Playback semantics, driven by a virtual clock: every time asserted is exact.

use std::sync::mpsc::{channel, Receiver, Sender};

use bytes::Bytes;
use rbag_storage::Message;
use rbag_transport::clock::{Clock, VirtualClock};
use rbag_transport::play::{
    Control, PlayError, PlayOptions, PlayReport, PlaySink, PlaySource, PlayState, Player, RateStep, VecSource,
};

const MS: u64 = 1_000_000;
/// Bag time of the first message; messages are written as milliseconds after it.
const BAG0: u64 = 1_700_000_000_000_000_000;

fn msg(conn: u32, ms: u64, tag: &str) -> Message {
    let t = BAG0 + ms * MS;
    Message { connection: conn, log_time: t, publish_time: t, data: Bytes::from(tag.to_owned()) }
}

/// Messages on connection 0 at these milliseconds, tagged with their index.
fn at_ms(times: &[u64]) -> VecSource {
    VecSource::new(times.iter().enumerate().map(|(i, &t)| msg(0, t, &format!("m{i}"))).collect())
}

fn bag(ms: u64) -> u64 {
    BAG0 + ms * MS
}

/// What the sink saw, with times in milliseconds when whole (virtual clock time, bag time
/// after `BAG0`).
#[derive(Debug, Clone, PartialEq)]
enum Ev {
    /// (clock ms, bag ms)
    Msg(u64, u64),
    Clock(u64, u64),
}

/// Records sends at the virtual time they happen; can cost time per publish and fail.
struct Rec<'c> {
    clock: &'c VirtualClock,
    events: Vec<Ev>,
    tags: Vec<String>,
    states: Vec<PlayState>,
    publish_cost: u64,
    fail_on: Option<usize>,
    /// Flow control: from clock ms A on, bag ms up to B may go (later entries win); with
    /// entries and none reached yet, everything is held.
    allow: Vec<(u64, u64)>,
}

impl<'c> Rec<'c> {
    fn new(clock: &'c VirtualClock) -> Self {
        Rec {
            clock,
            events: Vec::new(),
            tags: Vec::new(),
            states: Vec::new(),
            publish_cost: 0,
            fail_on: None,
            allow: Vec::new(),
        }
    }

    fn sent(&self) -> Vec<(u64, u64)> {
        self.events.iter().filter_map(|e| if let Ev::Msg(a, t) = e { Some((*a, *t)) } else { None }).collect()
    }
}

fn whole_ms(ns: u64) -> u64 {
    assert_eq!(ns % MS, 0, "{ns} ns is not a whole millisecond");
    ns / MS
}

impl PlaySink for Rec<'_> {
    fn publish(&mut self, m: &Message) -> Result<(), PlayError> {
        if self.fail_on == Some(self.tags.len()) {
            return Err(PlayError::sink("subscriber went away"));
        }
        self.events.push(Ev::Msg(whole_ms(self.clock.now()), whole_ms(m.log_time - BAG0)));
        self.tags.push(String::from_utf8(m.data.to_vec()).unwrap());
        self.clock.advance(self.publish_cost);
        Ok(())
    }

    fn clock(&mut self, t: u64) -> Result<(), PlayError> {
        self.events.push(Ev::Clock(whole_ms(self.clock.now()), whole_ms(t - BAG0)));
        Ok(())
    }

    fn hold(&mut self, t: u64) -> bool {
        if self.allow.is_empty() {
            return false;
        }
        let now = self.clock.now();
        let allowed = self.allow.iter().filter(|(at, _)| at * MS <= now).map(|(_, b)| bag(*b)).next_back();
        allowed.is_none_or(|a| t > a)
    }

    fn state(&mut self, s: &PlayState) {
        self.states.push(*s);
    }
}

/// Plays `source` with `options` under `clock`, keeping the control sender alive.
fn play<'c>(options: PlayOptions, source: &mut dyn PlaySource, clock: &'c VirtualClock) -> (PlayReport, Rec<'c>) {
    let (_tx, rx): (Sender<Control>, Receiver<Control>) = channel();
    let mut sink = Rec::new(clock);
    let report = Player::new(options).unwrap().run(source, &mut sink, clock, &rx).unwrap();
    (report, sink)
}

fn rate(r: f64) -> PlayOptions {
    PlayOptions { rate: r, ..PlayOptions::default() }
}

#[test]
fn a_sink_holding_messages_back_pauses_playback_until_it_lets_go() {
    // As `rosbag play --rate-control-topic`: nothing may go until 500 ms, then up to bag 150 ms,
    // then (at 2 s) everything. Held time shifts the schedule like a pause.
    let clock = VirtualClock::new(0);
    let (_tx, rx) = channel();
    let mut sink = Rec::new(&clock);
    sink.allow = vec![(500, 150), (2000, 1000)];
    let report = Player::new(rate(1.0)).unwrap().run(&mut at_ms(&[0, 100, 200, 300]), &mut sink, &clock, &rx).unwrap();
    assert_eq!(sink.sent(), [(500, 0), (600, 100), (2100, 200), (2200, 300)]);
    assert_eq!(report.lateness.max_ns, 0);
    let paused: Vec<bool> = sink.states.iter().map(|s| s.paused).collect();
    assert_eq!(paused, [true, false, true, false]);
}

#[test]
fn a_hand_pause_takes_over_from_a_hold() {
    // Held at the start; paused by hand at 100 ms, so the release at 300 ms does not resume;
    // resumed by hand at 1 s.
    let clock = VirtualClock::new(0).at(100 * MS, Control::Pause).at(1000 * MS, Control::Resume);
    let (_tx, rx) = channel();
    let mut sink = Rec::new(&clock);
    sink.allow = vec![(300, 1000)];
    Player::new(rate(1.0)).unwrap().run(&mut at_ms(&[0, 100]), &mut sink, &clock, &rx).unwrap();
    assert_eq!(sink.sent(), [(1000, 0), (1100, 100)]);
}

#[test]
fn rate_two_halves_the_gaps() {
    let clock = VirtualClock::new(0);
    let (report, sink) = play(rate(2.0), &mut at_ms(&[0, 100, 200, 300]), &clock);
    assert_eq!(sink.sent(), [(0, 0), (50, 100), (100, 200), (150, 300)]);
    assert_eq!((report.published, report.loops, report.quit), (4, 0, false));
    assert_eq!((report.lateness.count, report.lateness.max_ns), (4, 0));
}

#[test]
fn rate_half_doubles_the_gaps() {
    let clock = VirtualClock::new(7 * MS);
    let (_, sink) = play(rate(0.5), &mut at_ms(&[0, 100, 200, 300]), &clock);
    assert_eq!(sink.sent(), [(7, 0), (207, 100), (407, 200), (607, 300)]);
}

#[test]
fn pause_shifts_the_rest_of_the_schedule_without_a_burst() {
    let clock = VirtualClock::new(0).at(150 * MS, Control::Pause).at(1150 * MS, Control::TogglePause);
    let (report, sink) = play(rate(1.0), &mut at_ms(&[0, 100, 200, 300]), &clock);
    assert_eq!(sink.sent(), [(0, 0), (100, 100), (1200, 200), (1300, 300)]);
    assert_eq!(report.lateness.max_ns, 0);
    let paused: Vec<bool> = sink.states.iter().map(|s| s.paused).collect();
    assert_eq!(paused, [true, false]);
    assert_eq!(sink.states[0].bag_time_ns, bag(150));
}

#[test]
fn step_while_paused_sends_one_message_and_stays_paused() {
    let clock = VirtualClock::new(0)
        .at(500 * MS, Control::Step)
        .at(600 * MS, Control::Step)
        .at(1000 * MS, Control::Resume)
        .at(1150 * MS, Control::Step); // ignored while playing
    let options = PlayOptions { start_paused: true, ..PlayOptions::default() };
    let (report, sink) = play(options, &mut at_ms(&[0, 100, 200, 300]), &clock);
    // Resuming continues from the stepped message (bag 100): no burst.
    assert_eq!(sink.sent(), [(500, 0), (600, 100), (1100, 200), (1200, 300)]);
    // Steps are not scheduled sends.
    assert_eq!(report.lateness.count, 2);
}

#[test]
fn rate_change_reanchors_at_the_current_position() {
    let clock = VirtualClock::new(0).at(150 * MS, Control::SetRate(2.0)).at(160 * MS, Control::SetRate(-1.0));
    let (_, sink) = play(rate(1.0), &mut at_ms(&[0, 100, 200, 300]), &clock);
    assert_eq!(sink.sent(), [(0, 0), (100, 100), (175, 200), (225, 300)]);
    assert_eq!(sink.states.iter().map(|s| s.rate).collect::<Vec<_>>(), [2.0, 2.0]);

    let clock = VirtualClock::new(0).at(150 * MS, Control::FasterRate);
    let options = PlayOptions { rate_step: RateStep::Rosbag, ..PlayOptions::default() };
    let (_, sink) = play(options, &mut at_ms(&[0, 100, 200, 300]), &clock);
    assert_eq!(sink.sent(), [(0, 0), (100, 100), (175, 200), (225, 300)]);
}

#[test]
fn rate_steps_follow_each_tool() {
    assert_eq!(RateStep::Rosbag.faster(1.0), 2.0);
    assert_eq!(RateStep::Rosbag.faster(10.0), 10.0);
    assert!((RateStep::Rosbag.faster(0.5) - 0.6).abs() < 1e-12);
    assert_eq!(RateStep::Rosbag.slower(3.0), 2.0);
    assert!((RateStep::Rosbag.slower(1.0) - 0.9).abs() < 1e-12);
    assert_eq!(RateStep::Rosbag.slower(0.1), 0.1);
    assert!((RateStep::Factor.faster(1.0) - 1.1).abs() < 1e-12);
    assert!((RateStep::Factor.slower(1.1) - 1.0).abs() < 1e-12);
}

#[test]
fn seek_forward_and_back() {
    let clock = VirtualClock::new(0).at(250 * MS, Control::Seek(bag(700))).at(300 * MS, Control::Seek(bag(100)));
    let times: Vec<u64> = (0..10).map(|i| i * 100).collect();
    let (report, sink) = play(rate(1.0), &mut at_ms(&times), &clock);
    let mut expected = vec![(0, 0), (100, 100), (200, 200), (250, 700)];
    expected.extend((1..10).map(|i| (200 + i * 100, i * 100)));
    assert_eq!(sink.sent(), expected);
    assert_eq!(report.published, 13);
}

#[test]
fn seek_is_clamped_to_the_played_range() {
    let clock = VirtualClock::new(0).at(50 * MS, Control::Seek(0)).at(160 * MS, Control::Seek(u64::MAX));
    let times: Vec<u64> = (0..10).map(|i| i * 100).collect();
    let options = PlayOptions { start_offset_ns: 200 * MS, ..PlayOptions::default() };
    let (_, sink) = play(options, &mut at_ms(&times), &clock);
    assert_eq!(sink.sent(), [(0, 200), (50, 200), (150, 300), (160, 900)]);
}

#[test]
fn seek_while_paused_stays_paused() {
    let clock = VirtualClock::new(0)
        .at(50 * MS, Control::Pause)
        .at(60 * MS, Control::Seek(bag(200)))
        .at(500 * MS, Control::Resume);
    let (_, sink) = play(rate(1.0), &mut at_ms(&[0, 100, 200, 300]), &clock);
    assert_eq!(sink.sent(), [(0, 0), (500, 200), (600, 300)]);
}

#[test]
fn loop_restarts_at_once_and_counts_loops() {
    let clock = VirtualClock::new(0).at(450 * MS, Control::Quit);
    let options = PlayOptions { loop_: true, ..PlayOptions::default() };
    let (report, sink) = play(options, &mut at_ms(&[0, 100, 200]), &clock);
    assert_eq!(sink.sent(), [(0, 0), (100, 100), (200, 200), (200, 0), (300, 100), (400, 200), (400, 0)]);
    assert_eq!((report.published, report.loops, report.quit), (7, 2, true));
}

#[test]
fn loop_over_an_empty_selection_ends_instead_of_spinning() {
    let clock = VirtualClock::new(0);
    let mut source = at_ms(&[0, 100, 200]).with_time_range(bag(0), bag(1000));
    let options = PlayOptions { loop_: true, start_offset_ns: 500 * MS, ..PlayOptions::default() };
    let (report, sink) = play(options, &mut source, &clock);
    assert!(sink.events.is_empty());
    assert_eq!((report.published, report.loops, report.quit), (0, 0, false));
    assert!(clock.waits().is_empty());
}

#[test]
fn start_offset_counts_from_the_bag_start() {
    let times: Vec<u64> = (0..10).map(|i| i * 100).collect();
    let clock = VirtualClock::new(0);
    let options = PlayOptions { start_offset_ns: 250 * MS, ..PlayOptions::default() };
    let (_, sink) = play(options.clone(), &mut at_ms(&times), &clock);
    assert_eq!(sink.sent()[..2], [(0, 300), (100, 400)]);
    assert_eq!(sink.sent().len(), 7);

    // The bag starts before the first selected message: the offset counts from the bag.
    let clock = VirtualClock::new(0);
    let mut source = at_ms(&times).with_time_range(bag(0) - 500 * MS, bag(900));
    let (_, sink) = play(PlayOptions { start_offset_ns: 600 * MS, ..PlayOptions::default() }, &mut source, &clock);
    assert_eq!(sink.sent()[0], (0, 100));

    // ros2 bag play's way: the stretch from the start point to the first message is waited out.
    let clock = VirtualClock::new(0);
    let (_, sink) = play(PlayOptions { from_start_point: true, ..options }, &mut at_ms(&times), &clock);
    assert_eq!(sink.sent()[..2], [(50, 300), (150, 400)]);
}

#[test]
fn duration_is_inclusive_from_the_start_point() {
    let times: Vec<u64> = (0..10).map(|i| i * 100).collect();
    let clock = VirtualClock::new(0);
    let options = PlayOptions { start_offset_ns: 100 * MS, duration_ns: Some(300 * MS), ..PlayOptions::default() };
    let (_, sink) = play(options, &mut at_ms(&times), &clock);
    assert_eq!(sink.sent(), [(0, 100), (100, 200), (200, 300), (300, 400)]);
    assert!(Player::new(PlayOptions { duration_ns: Some(0), ..PlayOptions::default() }).is_err());
}

#[test]
fn until_is_an_inclusive_bag_time() {
    let clock = VirtualClock::new(0);
    let options = PlayOptions { until_ns: Some(bag(200)), ..PlayOptions::default() };
    let (report, sink) = play(options, &mut at_ms(&[0, 100, 200, 300]), &clock);
    assert_eq!(sink.sent(), [(0, 0), (100, 100), (200, 200)]);
    assert!(!report.quit);
}

#[test]
fn skip_empty_sends_the_message_after_a_long_gap_at_once() {
    let clock = VirtualClock::new(0);
    let options = PlayOptions { skip_empty_ns: Some(1000 * MS), ..PlayOptions::default() };
    let (report, sink) = play(options, &mut at_ms(&[0, 100, 1100, 5100, 5200, 5250]), &clock);
    // 100 → 1100 is exactly the limit and is waited; 1100 → 5100 is longer and skipped.
    assert_eq!(sink.sent(), [(0, 0), (100, 100), (1100, 1100), (1100, 5100), (1200, 5200), (1250, 5250)]);
    assert_eq!(report.lateness.count, 5);
}

#[test]
fn immediate_sends_without_waiting() {
    let clock = VirtualClock::new(3 * MS);
    let options = PlayOptions { immediate: true, clock_hz: Some(100.0), ..PlayOptions::default() };
    let (report, sink) = play(options, &mut at_ms(&[0, 100, 100, 300]), &clock);
    assert_eq!(
        sink.events,
        [
            Ev::Clock(3, 0),
            Ev::Msg(3, 0),
            Ev::Clock(3, 100),
            Ev::Msg(3, 100),
            Ev::Msg(3, 100),
            Ev::Clock(3, 300),
            Ev::Msg(3, 300)
        ]
    );
    assert_eq!((report.published, report.clock_published, report.lateness.count), (4, 3, 0));
}

#[test]
fn clock_ticks_at_hz_in_real_time_and_before_each_message() {
    let clock = VirtualClock::new(0);
    let options = PlayOptions { rate: 2.0, clock_hz: Some(40.0), ..PlayOptions::default() };
    let (report, sink) = play(options, &mut at_ms(&[0, 100, 130, 300]), &clock);
    use Ev::{Clock as C, Msg as M};
    assert_eq!(
        sink.events,
        [
            C(0, 0),
            M(0, 0),
            C(25, 50),
            C(50, 100),
            M(50, 100),
            C(65, 130),
            M(65, 130),
            C(75, 150),
            C(100, 200),
            C(125, 250),
            C(150, 300),
            M(150, 300)
        ]
    );
    assert_eq!(report.clock_published, 8);
}

#[test]
fn clock_repeats_the_paused_time_while_paused() {
    let clock = VirtualClock::new(0).at(150 * MS, Control::Pause).at(450 * MS, Control::Resume);
    let options = PlayOptions { clock_hz: Some(10.0), ..PlayOptions::default() };
    let (_, sink) = play(options, &mut at_ms(&[0, 300]), &clock);
    use Ev::{Clock as C, Msg as M};
    assert_eq!(
        sink.events,
        [C(0, 0), M(0, 0), C(100, 100), C(200, 150), C(300, 150), C(400, 150), C(500, 200), C(600, 300), M(600, 300)]
    );
}

#[test]
fn keep_alive_keeps_the_clock_running_after_the_end() {
    let clock = VirtualClock::new(0).at(350 * MS, Control::Quit);
    let options = PlayOptions { keep_alive: true, clock_hz: Some(10.0), ..PlayOptions::default() };
    let (report, sink) = play(options, &mut at_ms(&[0, 100]), &clock);
    use Ev::{Clock as C, Msg as M};
    assert_eq!(sink.events, [C(0, 0), M(0, 0), C(100, 100), M(100, 100), C(200, 200), C(300, 300)]);
    assert!(report.quit);
}

#[test]
fn pause_topics_pause_before_their_messages() {
    // As in rosbag, the pause starts once the previous message is sent: the bag time stops
    // there, and the gap up to the pausing message is still waited after resuming.
    let clock = VirtualClock::new(0).at(500 * MS, Control::Resume);
    let mut source = VecSource::new(vec![msg(1, 0, "a"), msg(2, 100, "b"), msg(1, 200, "c")]);
    let options = PlayOptions { pause_connections: [2].into(), ..PlayOptions::default() };
    let (_, sink) = play(options.clone(), &mut source, &clock);
    assert_eq!(sink.sent(), [(0, 0), (600, 100), (700, 200)]);
    assert!(sink.states[0].paused && sink.states[0].bag_time_ns == bag(0));

    // Turned off with `t`, they no longer pause.
    let clock = VirtualClock::new(0).at(0, Control::TogglePauseTopics);
    let (_, sink) = play(options, &mut source, &clock);
    assert_eq!(sink.sent(), [(0, 0), (100, 100), (200, 200)]);
}

#[test]
fn equal_times_keep_the_source_order_on_every_run() {
    let messages = vec![msg(3, 0, "c"), msg(1, 100, "x"), msg(1, 100, "a"), msg(2, 100, "b"), msg(1, 100, "z")];
    let mut runs = Vec::new();
    for _ in 0..3 {
        let clock = VirtualClock::new(0);
        let (_, sink) = play(rate(1.0), &mut VecSource::new(messages.clone()), &clock);
        runs.push((sink.events.clone(), sink.tags.clone()));
    }
    assert_eq!(runs[0].1, ["c", "x", "a", "b", "z"]);
    assert!(runs.iter().all(|r| *r == runs[0]));
}

#[test]
fn quit_stops_promptly() {
    let clock = VirtualClock::new(0).at(150 * MS, Control::Quit);
    let (report, sink) = play(rate(1.0), &mut at_ms(&[0, 100, 200, 300]), &clock);
    assert_eq!(sink.sent(), [(0, 0), (100, 100)]);
    assert!(report.quit);
    assert_eq!(clock.now(), 150 * MS);

    // From the channel, before anything is sent.
    let clock = VirtualClock::new(0);
    let (tx, rx) = channel();
    tx.send(Control::Quit).unwrap();
    let mut sink = Rec::new(&clock);
    let report =
        Player::new(PlayOptions::default()).unwrap().run(&mut at_ms(&[0, 100]), &mut sink, &clock, &rx).unwrap();
    assert_eq!((report.published, report.quit), (0, true));
}

#[test]
fn paused_with_nothing_left_to_resume_it_quits() {
    let clock = VirtualClock::new(0);
    let (tx, rx) = channel::<Control>();
    drop(tx);
    let mut sink = Rec::new(&clock);
    let options = PlayOptions { start_paused: true, ..PlayOptions::default() };
    let report = Player::new(options).unwrap().run(&mut at_ms(&[0, 100]), &mut sink, &clock, &rx).unwrap();
    assert_eq!((report.published, report.quit), (0, true));
}

#[test]
fn sink_error_stops_with_that_error() {
    let clock = VirtualClock::new(0);
    let (_tx, rx) = channel();
    let mut sink = Rec::new(&clock);
    sink.fail_on = Some(2);
    let err = Player::new(PlayOptions::default())
        .unwrap()
        .run(&mut at_ms(&[0, 100, 200, 300]), &mut sink, &clock, &rx)
        .unwrap_err();
    assert!(matches!(&err, PlayError::Sink(e) if e.to_string() == "subscriber went away"), "{err}");
    assert_eq!(sink.sent(), [(0, 0), (100, 100)]);
    assert_eq!(clock.now(), 200 * MS);
}

#[test]
fn lateness_is_measured_at_the_send() {
    let clock = VirtualClock::new(0);
    let (_tx, rx) = channel();
    let mut sink = Rec::new(&clock);
    sink.publish_cost = 30 * MS;
    let report =
        Player::new(PlayOptions::default()).unwrap().run(&mut at_ms(&[0, 10, 20, 30]), &mut sink, &clock, &rx).unwrap();
    assert_eq!(sink.sent(), [(0, 0), (30, 10), (60, 20), (90, 30)]);
    let l = report.lateness;
    assert_eq!((l.count, l.max_ns), (4, 60 * MS));
    // Nearest rank: p50 is the 2nd of 0, 20, 40, 60 ms, p99 the 4th; within the 1/64 buckets.
    assert!(l.p50_ns <= 20 * MS && l.p50_ns >= 20 * MS - 20 * MS / 64, "{l:?}");
    assert!(l.p99_ns <= l.max_ns && l.p99_ns >= 60 * MS - 60 * MS / 64, "{l:?}");
}

#[test]
fn invalid_options_are_refused() {
    for options in [rate(0.0), rate(f64::NAN), PlayOptions { clock_hz: Some(0.0), ..PlayOptions::default() }] {
        assert!(matches!(Player::new(options), Err(PlayError::Options(_))));
    }
}

#[test]
fn an_empty_source_plays_nothing() {
    let clock = VirtualClock::new(0);
    let options = PlayOptions { loop_: true, keep_alive: true, ..PlayOptions::default() };
    let (report, sink) = play(options, &mut VecSource::new(Vec::new()), &clock);
    assert_eq!((report.published, report.quit), (0, false));
    assert!(sink.events.is_empty() && clock.waits().is_empty());
}
