//! Recording and playback logic with no network code.
//!
//! Middlewares (`rbag-ros1`, later `rbag-ros2`) deliver raw messages to a [`Recorder`]-side
//! API and take scheduled messages from the player; everything that decides *what* is stored
//! and *when* something is sent lives here, so it is the same for every middleware and can be
//! tested with a virtual clock.

pub mod clock;
pub mod play;
