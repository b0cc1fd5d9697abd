//! mechgen
