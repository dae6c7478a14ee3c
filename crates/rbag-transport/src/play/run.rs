//! One playback run: the loop that waits for each message's due time, the next clock tick or a
//! control, whichever comes first, and applies controls to the schedule.

use std::sync::mpsc::Receiver;

use rbag_storage::Message;

use super::clock::Clock;
use super::lateness::Histogram;
use super::schedule::Schedule;
use super::{
    reorder, Control, MessageOrder, PlayError, PlayOptions, PlayReport, PlaySink, PlaySource, PlayState, Progress,
    ProgressState,
};

/// How handling one message (or idling after the end) ended.
enum Flow {
    Sent,
    Seek(u64),
    Quit,
}

pub(super) struct Run<'a> {
    opts: &'a PlayOptions,
    sink: &'a mut dyn PlaySink,
    clock: &'a dyn Clock,
    controls: &'a Receiver<Control>,
    sched: Schedule,
    /// The played range of bag time, inclusive.
    start: u64,
    end: u64,
    /// Whether a duration or an until time ends playback before the bag's end: only then is a
    /// message sent after the bag's last log time cut off.
    bounded: bool,
    /// Waiting out the start delay: progress says so whatever controls arrive meanwhile.
    delaying: bool,
    /// The whole bag's time range, for progress reports.
    range: (u64, u64),
    /// Bag time last reached (start, seek target, last message sent): skip-empty measures gaps
    /// from here.
    cursor: u64,
    pausing_on_topics: bool,
    /// Paused because the sink holds the next message back (not by a control).
    held: bool,
    tick_period: Option<u64>,
    next_tick: Option<u64>,
    last_clock: Option<u64>,
    lateness: Histogram,
    report: PlayReport,
}

impl<'a> Run<'a> {
    pub fn new(
        opts: &'a PlayOptions,
        sink: &'a mut dyn PlaySink,
        clock: &'a dyn Clock,
        controls: &'a Receiver<Control>,
    ) -> Self {
        Run {
            opts,
            sink,
            clock,
            controls,
            sched: Schedule::new(clock.now(), 0, opts.rate, opts.start_paused),
            start: 0,
            end: 0,
            bounded: false,
            delaying: false,
            range: (0, 0),
            cursor: 0,
            pausing_on_topics: !opts.pause_connections.is_empty(),
            held: false,
            tick_period: if opts.immediate { None } else { opts.tick_period_ns() },
            next_tick: None,
            last_clock: None,
            lateness: Histogram::new(),
            report: PlayReport::default(),
        }
    }

    pub fn play(mut self, source: &mut dyn PlaySource) -> Result<PlayReport, PlayError> {
        let Some((first, last)) = source.time_range() else {
            return Ok(self.finish(false));
        };
        self.range = (first, last);
        self.start = first.saturating_add(self.opts.start_offset_ns);
        let duration_end = self.opts.duration_ns.map(|d| self.start.saturating_add(d));
        self.end = [Some(last), duration_end, self.opts.until_ns].into_iter().flatten().min().unwrap_or(last);
        self.bounded = duration_end.is_some() || self.opts.until_ns.is_some();
        if self.start > self.end {
            return Ok(self.finish(false));
        }
        let now = self.clock.now();
        self.sched = Schedule::new(now, self.start, self.opts.rate, self.opts.start_paused);
        self.cursor = self.start;

        let mut from = self.start;
        // `fresh`: the stream opens at the start point, not at a seek target. `anchor`: its
        // first message still has to anchor the schedule.
        let (mut fresh, mut anchor) = (true, true);
        if self.opts.start_delay_ns > 0 {
            match self.delay(now)? {
                Some(Flow::Seek(t)) => (from, fresh) = (t, false),
                Some(_) => return Ok(self.finish(true)),
                None => {}
            }
        }
        let now = self.clock.now();
        self.next_tick = self.tick_period.map(|_| now);
        self.report_progress();

        let (order, window) = (self.opts.message_order, self.opts.read_ahead);
        'open: loop {
            let mut stream = reorder(source.open(from)?, order, window);
            let mut any = false;
            while let Some(m) = stream.next().transpose()? {
                let t = order.time(&m);
                // Send times usually come a little before log times: from the bag's first
                // message on, nothing is left out for that.
                if t < from && !(fresh && from == first) {
                    continue;
                }
                if t > self.end && (self.bounded || order == MessageOrder::Received) {
                    break;
                }
                any = true;
                if anchor {
                    anchor = false;
                    let at = if self.opts.from_start_point { from } else { t };
                    let now = self.clock.now();
                    self.sched.jump(now, at);
                    self.report.anchored_at.get_or_insert(now);
                    self.cursor = at;
                }
                match self.advance(Some(&m))? {
                    Flow::Sent => {}
                    Flow::Seek(t) => {
                        (from, fresh, anchor) = (t, false, false);
                        continue 'open;
                    }
                    Flow::Quit => return Ok(self.finish(true)),
                }
            }
            drop(stream);
            // A pass from the start point that found nothing would find nothing forever.
            if self.opts.loop_ && (any || !fresh) {
                self.report.loops += 1;
                (from, fresh, anchor) = (self.start, true, true);
                continue;
            }
            if !self.opts.keep_alive {
                return Ok(self.finish(false));
            }
            match self.advance(None)? {
                Flow::Seek(t) => (from, fresh, anchor) = (t, false, false),
                Flow::Sent | Flow::Quit => return Ok(self.finish(true)),
            }
        }
    }

    /// Waits out the start delay from `now`, hearing controls: the schedule is set up again at
    /// its end, keeping a pause or rate given meanwhile. Returns a seek target or a quit.
    fn delay(&mut self, now: u64) -> Result<Option<Flow>, PlayError> {
        self.delaying = true;
        self.progress(ProgressState::Delayed, self.start);
        let until = now.saturating_add(self.opts.start_delay_ns);
        let mut seek = None;
        while let Some(c) = self.clock.wait_until(Some(until), self.controls) {
            match self.apply(c, None)? {
                Some(Flow::Quit) => return Ok(Some(Flow::Quit)),
                Some(Flow::Seek(t)) => seek = Some(Flow::Seek(t)),
                _ => {}
            }
            if self.clock.now() >= until {
                break;
            }
        }
        self.delaying = false;
        let at = match seek {
            Some(Flow::Seek(t)) => t,
            _ => self.start,
        };
        self.sched = Schedule::new(self.clock.now(), at, self.sched.rate(), self.sched.paused());
        self.cursor = at;
        Ok(seek)
    }

    /// The time of `m` playback follows.
    fn time(&self, m: &Message) -> u64 {
        self.opts.message_order.time(m)
    }

    /// Waits until `m` is due and sends it, sending clock ticks and applying controls meanwhile.
    /// With no message (keep-alive after the end) only ticks and controls happen.
    fn advance(&mut self, m: Option<&Message>) -> Result<Flow, PlayError> {
        if let Some(m) = m {
            if self.pausing_on_topics && !self.sched.paused() && self.opts.pause_connections.contains(&m.connection) {
                self.sched.pause(self.clock.now());
                self.notify();
            }
        }
        // Set once the message was pulled forward over an empty stretch: it is then sent
        // without a place in the schedule and not counted in the lateness.
        let mut skipped = false;
        loop {
            let now = self.clock.now();
            if let Some(m) = m {
                self.hold(self.time(m), now);
            }
            let due = match m {
                None => None,
                Some(_) if self.sched.paused() => None,
                Some(_) if self.opts.immediate => Some((now, false)),
                Some(m) if self.opts.skip_empty_ns.is_some_and(|s| self.time(m).saturating_sub(self.cursor) > s) => {
                    self.sched.jump(now, self.time(m));
                    self.cursor = self.time(m);
                    skipped = true;
                    Some((now, false))
                }
                Some(m) => self.sched.due(self.time(m)).map(|d| (d, !skipped)),
            };
            let tick = self.next_tick;
            let mut wake = match (due, tick) {
                (Some((d, _)), Some(t)) => Some(d.min(t)),
                (d, t) => d.map(|(d, _)| d).or(t),
            };
            if self.held {
                let poll = now.saturating_add(super::HOLD_POLL_NS);
                wake = Some(wake.map_or(poll, |w| w.min(poll)));
            }
            if let Some(c) = self.clock.wait_until(wake, self.controls) {
                match self.apply(c, m)? {
                    Some(flow) => return Ok(flow),
                    None => continue,
                }
            }
            let now = self.clock.now();
            if let Some(t) = tick {
                if t <= now && due.is_none_or(|(d, _)| t <= d) {
                    self.tick(t, now)?;
                    continue;
                }
            }
            if let (Some(m), Some((d, scheduled))) = (m, due) {
                if d <= now {
                    self.send(m, scheduled.then_some(d))?;
                    return Ok(Flow::Sent);
                }
            }
        }
    }

    /// Pauses while the sink holds the message logged at `bag_time` back, and resumes when it
    /// lets go. A pause or resume by hand takes over from a hold.
    fn hold(&mut self, bag_time: u64, now: u64) {
        let hold = self.sink.hold(bag_time);
        if hold && !self.held && !self.sched.paused() {
            self.sched.pause(now);
            self.held = true;
            self.notify();
        } else if !hold && self.held {
            self.held = false;
            self.sched.resume(now);
            self.notify();
        }
    }

    /// Applies a control; returns how `advance` ends when it ends it.
    fn apply(&mut self, c: Control, m: Option<&Message>) -> Result<Option<Flow>, PlayError> {
        let now = self.clock.now();
        if matches!(c, Control::Pause | Control::Resume | Control::TogglePause) {
            self.held = false;
        }
        match c {
            Control::Quit => return Ok(Some(Flow::Quit)),
            Control::TogglePause if self.sched.paused() => self.sched.resume(now),
            Control::TogglePause | Control::Pause => self.sched.pause(now),
            Control::Resume => self.sched.resume(now),
            Control::Step => match m {
                Some(m) if self.sched.paused() => {
                    self.sched.jump(now, self.time(m));
                    self.send(m, None)?;
                    return Ok(Some(Flow::Sent));
                }
                _ => return Ok(None),
            },
            Control::SetRate(r) => self.set_rate(now, r),
            Control::FasterRate => self.set_rate(now, self.opts.rate_step.faster(self.sched.rate())),
            Control::SlowerRate => self.set_rate(now, self.opts.rate_step.slower(self.sched.rate())),
            Control::TogglePauseTopics => self.pausing_on_topics = !self.pausing_on_topics,
            Control::Seek(t) => {
                let t = t.clamp(self.start, self.end);
                self.sched.jump(now, t);
                self.cursor = t;
                self.notify();
                return Ok(Some(Flow::Seek(t)));
            }
        }
        self.notify();
        Ok(None)
    }

    fn set_rate(&mut self, now: u64, rate: f64) {
        if rate.is_finite() && rate > 0.0 {
            self.sched.set_rate(now, rate);
        }
    }

    /// Sends `m`, preceded by its time on the clock; `due` is its scheduled time, if it had one.
    fn send(&mut self, m: &Message, due: Option<u64>) -> Result<(), PlayError> {
        let t = self.time(m);
        if self.opts.clock_hz.is_some() && self.last_clock != Some(t) {
            self.emit_clock(t)?;
        }
        if let Some(d) = due {
            self.lateness.record(self.clock.now().saturating_sub(d));
        }
        self.sink.publish(m)?;
        self.report.published += 1;
        self.cursor = t;
        self.progress(self.running_state(), t);
        Ok(())
    }

    /// Sends the tick due at `t`. A tick that fell a period or more behind is not caught up on.
    fn tick(&mut self, t: u64, now: u64) -> Result<(), PlayError> {
        self.emit_clock(self.sched.position(t))?;
        self.next_tick = self.tick_period.map(|p| t.saturating_add(p).max(now));
        Ok(())
    }

    fn emit_clock(&mut self, bag_time: u64) -> Result<(), PlayError> {
        self.sink.clock(bag_time)?;
        self.last_clock = Some(bag_time);
        self.report.clock_published += 1;
        Ok(())
    }

    fn notify(&mut self) {
        let state = PlayState {
            paused: self.sched.paused(),
            rate: self.sched.rate(),
            bag_time_ns: self.sched.position(self.clock.now()),
            pausing_on_topics: self.pausing_on_topics,
        };
        self.sink.state(&state);
        self.progress(self.running_state(), state.bag_time_ns);
    }

    /// Running, paused or bursting, by the schedule and the options.
    fn running_state(&self) -> ProgressState {
        if self.delaying {
            ProgressState::Delayed
        } else if self.sched.paused() {
            ProgressState::Paused
        } else if self.opts.immediate {
            ProgressState::Burst
        } else {
            ProgressState::Running
        }
    }

    /// Reports the current state at the schedule's position.
    fn report_progress(&mut self) {
        let at = self.sched.position(self.clock.now());
        self.progress(self.running_state(), at);
    }

    fn progress(&self, state: ProgressState, bag_time_ns: u64) {
        if let Some(hook) = &self.opts.progress {
            let (bag_start_ns, bag_end_ns) = self.range;
            hook.report(&Progress { state, bag_time_ns, bag_start_ns, bag_end_ns });
        }
    }

    fn finish(mut self, quit: bool) -> PlayReport {
        self.progress(ProgressState::Stopped, self.cursor);
        self.report.quit = quit;
        self.report.lateness = self.lateness.stats();
        self.report
    }
}
