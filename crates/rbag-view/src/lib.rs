//! Seeing a bag's data without a viewer: numeric fields as charts, image messages as files.
//!
//! - [`series`] reads numeric fields (`/imu.linear_acceleration.z`, `/array.data[0:3]`) as
//!   time series, through the same field paths `rbag echo` accepts.
//! - [`plot`] draws them as SVG, PNG (no display, no system fonts) or a self-contained HTML
//!   page with an interactive chart; long series are reduced per pixel column keeping each
//!   column's first, last, smallest and largest point, so spikes stay visible.
//! - [`image`] turns `sensor_msgs/Image` messages into PNG files and hands `CompressedImage`
//!   data back as it was recorded; [`export`] writes them as files or a video.
//! - [`density`] and [`fields`] answer a quick-look page: messages per topic over time, and
//!   the numeric fields a topic offers.

pub mod density;
pub mod downsample;
mod error;
pub mod export;
pub mod fields;
pub mod image;
pub mod plot;
pub mod series;

pub use error::{Error, Result};
