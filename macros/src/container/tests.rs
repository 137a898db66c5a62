//! Unit tests of container marks.
