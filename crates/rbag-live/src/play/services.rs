//! rosbag2's player services (`/rosbag2_player/pause` and the rest), with rosbag2_interfaces'
//! types, so scripts that drive `ros2 bag play` with `ros2 service call` drive rbag too. They
//! act through the same [`PlayHandle`] as the keyboard.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rbag_ros2::graph::GraphError;
use rbag_ros2::record::Log;
use rbag_ros2::service::{reply, Fields, Handler, ServiceHost};
use rbag_transport::play::{Control, PlayState};

use super::control::PlayHandle;
use crate::interfaces::is_lyrical;
use crate::services::{serve, Served};

/// The player's node name in rosbag2; its services are `/rosbag2_player/<name>`.
const PLAYER: &str = "/rosbag2_player";

/// The player's state as the services report it: paused, the rate, and how many messages it
/// has published. The sink updates it on every change the player reports; a service that
/// changes it updates it at once, so a `pause` followed by `is_paused` answers `true` even
/// before the player has acted.
#[derive(Clone)]
pub struct PlayerView(Arc<ViewState>);

struct ViewState {
    state: Mutex<(bool, f64)>,
    published: AtomicU64,
    stopped: std::sync::atomic::AtomicBool,
}

impl PlayerView {
    /// A view of a player starting `paused` at `rate`.
    pub fn new(paused: bool, rate: f64) -> PlayerView {
        PlayerView(Arc::new(ViewState {
            state: Mutex::new((paused, rate)),
            published: AtomicU64::new(0),
            stopped: Default::default(),
        }))
    }

    /// Takes the state the player reported.
    pub fn update(&self, s: &PlayState) {
        self.set(|v| *v = (s.paused, s.rate));
    }

    /// Counts one message handed to the sink.
    pub fn published_one(&self) {
        self.0.published.fetch_add(1, Ordering::SeqCst);
    }

    fn published(&self) -> u64 {
        self.0.published.load(Ordering::SeqCst)
    }

    fn get(&self) -> (bool, f64) {
        *self.0.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self, f: impl FnOnce(&mut (bool, f64))) {
        f(&mut self.0.state.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

/// Serves the player's services, which drive the player through `controls`, in the layout
/// each client's type hash names (Lyrical's `resume` and `stop` answer return codes). `range`
/// is the played bag time range (`seek` outside it fails, as in rosbag2). `play` is refused
/// (the one playback is running), `stop` ends it. Serving stops when the returned servers drop.
pub fn player(
    host: &dyn ServiceHost,
    controls: &PlayHandle,
    view: &PlayerView,
    range: Option<(u64, u64)>,
    log: &Log,
) -> Result<Served, GraphError> {
    // Each handler gets its own sender and view.
    let send = |make: fn(&Fields) -> Option<Control>, answer: fn(bool, &PlayerView) -> Vec<u8>| -> Handler {
        let (tx, view) = (controls.clone(), view.clone());
        Box::new(move |f: &Fields| {
            let control = make(f);
            let sent = control.is_some_and(|c| {
                apply(&view, &c);
                tx.send(c)
            });
            answer(sent, &view)
        })
    };
    let (v1, v2) = (view.clone(), view.clone());
    let services: Vec<(&str, &str, Handler)> = vec![
        ("pause", "Pause", send(|_| Some(Control::Pause), |_, _| reply::empty())),
        ("resume", "Resume", {
            let (tx, view) = (controls.clone(), view.clone());
            Box::new(move |f: &Fields| {
                let lyrical = is_lyrical("Resume", f.type_hash());
                // Lyrical's player takes no resume time (rosbag2: "shall be set to zero").
                if lyrical && f.time_ns_at(0).is_some_and(|t| t != 0) {
                    return reply::code(3, "the player resumes now only: resume_time must be zero");
                }
                apply(&view, &Control::Resume);
                tx.send(Control::Resume);
                if lyrical {
                    reply::code(0, "")
                } else {
                    reply::empty()
                }
            })
        }),
        // rbag plays once, from start to end (as `ros2 bag play` does): a play request always
        // comes during that playback, and rosbag2 refuses it then.
        ("play", "Play", {
            let log = log.clone();
            Box::new(move |_: &Fields| {
                log("warning: Trying to play() while in playback, dismissing request.".into());
                reply::bool(false)
            })
        }),
        ("stop", "Stop", {
            let (tx, view) = (controls.clone(), view.clone());
            Box::new(move |f: &Fields| {
                let was = view.0.stopped.swap(true, Ordering::SeqCst);
                if !was {
                    tx.send(Control::Quit);
                }
                match (is_lyrical("Stop", f.type_hash()), was) {
                    (false, _) => reply::empty(),
                    (true, false) => reply::code(0, ""),
                    (true, true) => reply::code(1, "Player is already stopped."),
                }
            })
        }),
        ("toggle_paused", "TogglePaused", send(|_| Some(Control::TogglePause), |_, _| reply::empty())),
        ("is_paused", "IsPaused", Box::new(move |_: &Fields| reply::bool(v1.get().0))),
        ("get_rate", "GetRate", Box::new(move |_: &Fields| reply::f64(v2.get().1))),
        (
            "set_rate",
            "SetRate",
            send(|f| f.f64().filter(|r| r.is_finite() && *r > 0.0).map(Control::SetRate), |sent, _| reply::bool(sent)),
        ),
        // rosbag2 plays the next message only while paused, and says whether it did.
        ("play_next", "PlayNext", {
            let (tx, view) = (controls.clone(), view.clone());
            Box::new(move |_: &Fields| reply::bool(view.get().0 && tx.send(Control::Step)))
        }),
        ("burst", "Burst", {
            let (tx, view) = (controls.clone(), view.clone());
            Box::new(move |f: &Fields| reply::u64(burst(&tx, &view, f.u64().unwrap_or(0))))
        }),
        ("seek", "Seek", {
            let tx = controls.clone();
            Box::new(move |f: &Fields| {
                let inside = |t: u64| range.is_some_and(|(first, last)| (first..=last).contains(&t));
                reply::bool(f.time_ns().filter(|t| inside(*t)).is_some_and(|t| tx.send(Control::Seek(t))))
            })
        }),
    ];
    serve(host, PLAYER, services, log)
}

/// How long a burst waits for the player to publish its next message before it takes the
/// bag (or the selection) as ended.
const BURST_IDLE: Duration = Duration::from_secs(2);

/// rosbag2's burst: while paused, publishes the next `n` messages (0: the rest of the bag) as
/// fast as possible, by stepping; returns how many went out. Playing, it does nothing.
fn burst(tx: &PlayHandle, view: &PlayerView, n: u64) -> u64 {
    if !view.get().0 {
        return 0;
    }
    let start = view.published();
    let want = if n == 0 { u64::MAX } else { n };
    let mut asked = 0u64;
    while asked < want {
        // Steps go out in batches, so that a burst of the whole bag does not queue millions.
        let batch = (want - asked).min(1000);
        for _ in 0..batch {
            if !tx.send(Control::Step) {
                return view.published() - start;
            }
        }
        asked += batch;
        let (mut last, mut since) = (view.published(), Instant::now());
        while view.published() - start < asked {
            std::thread::sleep(Duration::from_millis(1));
            let now = view.published();
            if now != last {
                (last, since) = (now, Instant::now());
            } else if since.elapsed() > BURST_IDLE {
                return now - start;
            }
        }
    }
    view.published() - start
}

/// What a control does to the view, ahead of the player.
fn apply(view: &PlayerView, c: &Control) {
    view.set(|v| match c {
        Control::Pause => v.0 = true,
        Control::Resume => v.0 = false,
        Control::TogglePause => v.0 = !v.0,
        Control::SetRate(r) => v.1 = *r,
        _ => {}
    });
}
