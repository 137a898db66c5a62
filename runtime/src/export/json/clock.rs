//! A clock source in the JSON: its name.

use super::schema::{At, Json};
use super::value::Value;
use super::writer::Writer;
use super::ParseError;
use crate::report::ClockSource;

/// A clock source's name in the JSON.
fn clock_name(c: ClockSource) -> &'static str {
    match c {
        ClockSource::Tsc => "tsc",
        ClockSource::Cntvct => "cntvct",
        ClockSource::Monotonic => "monotonic",
        ClockSource::Off => "off",
    }
}

impl Json for ClockSource {
    fn write(&self, w: &mut Writer<'_>) {
        w.str(clock_name(*self));
    }
    fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError> {
        let all = [
            ClockSource::Tsc,
            ClockSource::Cntvct,
            ClockSource::Monotonic,
            ClockSource::Off,
        ];
        all.into_iter()
            .find(|c| matches!(v, Value::String(s) if s == clock_name(*c)))
            .ok_or_else(|| at.not("tsc, cntvct, monotonic or off"))
    }
}
