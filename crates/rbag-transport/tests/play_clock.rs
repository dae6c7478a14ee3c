//! The clocks playback runs on. No assertion here depends on how fast the machine is.

use std::sync::mpsc::channel;
use std::time::Duration;

use rbag_transport::clock::{Clock, SystemClock, VirtualClock, Wait};
use rbag_transport::play::Control;

#[test]
fn virtual_time_moves_only_when_waited_on() {
    let clock = VirtualClock::new(100).at(500, Control::Pause).at(500, Control::Resume).at(900, Control::Step);
    let (tx, rx) = channel();
    assert_eq!(clock.now(), 100);
    assert_eq!(clock.wait_until(Some(300), &rx), None);
    // Scripted at the deadline: arrives first, in scripted order.
    assert_eq!(clock.wait_until(Some(500), &rx), Some(Control::Pause));
    assert_eq!(clock.wait_until(Some(500), &rx), Some(Control::Resume));
    assert_eq!(clock.wait_until(Some(500), &rx), None);
    // A deadline already passed does not move time back.
    assert_eq!(clock.wait_until(Some(50), &rx), None);
    clock.advance(100);
    // Sent on the channel: arrives at the next wait, before anything scripted.
    tx.send(Control::Quit).unwrap();
    assert_eq!(clock.wait_until(None, &rx), Some(Control::Quit));
    assert_eq!(clock.wait_until(None, &rx), Some(Control::Step));
    // Nothing left to wake an endless wait.
    assert_eq!(clock.wait_until(None, &rx), Some(Control::Quit));
    let waits = clock.waits();
    assert_eq!(waits.len(), 8);
    assert_eq!(waits[0], Wait { at: 100, deadline: Some(300), woke: 300, control: None });
    assert_eq!(waits[5], Wait { at: 600, deadline: None, woke: 600, control: Some(Control::Quit) });
    assert_eq!(waits[6], Wait { at: 600, deadline: None, woke: 900, control: Some(Control::Step) });
}

#[test]
fn system_clock_reaches_its_deadline() {
    let clock = SystemClock::new();
    let (_tx, rx) = channel();
    let deadline = clock.now() + 2_000_000;
    assert_eq!(clock.wait_until(Some(deadline), &rx), None);
    assert!(clock.now() >= deadline);
    // A sleep-only clock too, even with the channel closed.
    let clock = SystemClock::with_spin_margin(Duration::ZERO);
    let (tx, rx) = channel::<Control>();
    drop(tx);
    let deadline = clock.now() + 1_000_000;
    assert_eq!(clock.wait_until(Some(deadline), &rx), None);
    assert!(clock.now() >= deadline);
}

#[test]
fn system_clock_wakes_on_a_control() {
    let clock = SystemClock::new();
    let (tx, rx) = channel();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(5));
        tx.send(Control::TogglePause).unwrap();
    });
    // Far in the future: only the control can end this wait.
    assert_eq!(clock.wait_until(Some(clock.now() + 3_600_000_000_000), &rx), Some(Control::TogglePause));
    sender.join().unwrap();
    // A pending control is returned even when the deadline has passed.
    let (tx, rx) = channel();
    tx.send(Control::Step).unwrap();
    assert_eq!(clock.wait_until(Some(0), &rx), Some(Control::Step));
    // With every sender gone, an endless wait can only quit.
    drop(tx);
    assert_eq!(clock.wait_until(None, &rx), Some(Control::Quit));
}

/// How late 10 kHz playback sends on this machine; prints, asserts nothing about speed.
/// `cargo test -p rbag-transport --test play_clock -- --ignored --nocapture`
#[test]
#[ignore]
fn system_clock_lateness_at_10_khz() {
    use bytes::Bytes;
    use rbag_storage::Message;
    use rbag_transport::play::{PlayError, PlayOptions, PlaySink, Player, VecSource};

    struct Null;
    impl PlaySink for Null {
        fn publish(&mut self, _: &Message) -> Result<(), PlayError> {
            Ok(())
        }
    }
    let messages = (0..20_000u64)
        .map(|i| Message { connection: 0, log_time: i * 100_000, publish_time: i * 100_000, data: Bytes::new() })
        .collect();
    let (_tx, rx) = channel();
    let report = Player::new(PlayOptions::default())
        .unwrap()
        .run(&mut VecSource::new(messages), &mut Null, &SystemClock::new(), &rx)
        .unwrap();
    assert_eq!(report.published, 20_000);
    println!("{:?}", report.lateness);
}
