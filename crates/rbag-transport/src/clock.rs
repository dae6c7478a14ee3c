//! The time source playback runs on: see [`crate::play`]'s clock. It lives beside the player
//! (its waits end on a player [`Control`](crate::play::Control)), and is re-exported here
//! under its long-standing path.

pub use crate::play::clock::{Clock, SystemClock, VirtualClock, Wait};
