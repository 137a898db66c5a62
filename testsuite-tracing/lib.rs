//! Empty: this package holds the tracing bridge's test (`tests/`) and bench
//! (`benches/`).
