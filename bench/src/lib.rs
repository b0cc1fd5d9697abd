//! mechgen's benchmark suite: the mechanisms it measures and the measurements.

pub mod families;
