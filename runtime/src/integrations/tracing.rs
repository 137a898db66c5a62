//! A `tracing` bridge: spans (`#[tracing::instrument]`, `info_span!`) as
//! tickprof call sites, in the same trees as the `#[profile]` marks.
//!
//! Add [`Layer`] to a `tracing_subscriber` registry; every span then gets a
//! tickprof site named `target::name` (for `#[tracing::instrument]` on
//! `fn work` in `myapp::jobs`, `myapp::jobs::work`: the name `#[profile]`
//! gives the same function), of kind
//! [`SiteKind::TracingSpan`](crate::SiteKind::TracingSpan). Spans and marked
//! calls nest in one calling-context tree per thread, and every report and
//! format shows them.
//!
//! # Timing rules
//!
//! A span is timed as a `#[profile] async fn` is: each enter pushes a frame
//! on the entering thread's stack (marked calls and spans entered meanwhile
//! are its children) and each exit pops it, adding the time to the span's
//! total and self time; the call is counted once, when the span closes,
//! with the summed time (min/max) and its wall time (first enter to close),
//! on the closing thread's current path. So a span entered once (a plain
//! `#[instrument]`ed function) is one call timed from enter to exit, and an
//! instrumented future is one call whose time is its polls.
//!
//! Exits out of order are resynchronised as guards dropped out of order
//! are (counted in the out-of-order note). An exit on another thread than
//! its enter finds no frame there and is ignored; the frame left on the
//! entering thread is popped with its enclosing frame. A span closed on
//! another path than it ran on (a clone kept alive elsewhere) is counted
//! on that path, with no time.
//!
//! One site is made (and leaked, since sites are `'static`) per tracing
//! callsite, whatever the number of spans or layers: the map from callsite
//! to site is shared, and written by every thread that creates spans.
//!
//! # Examples
//!
//! ```ignore
//! // Cargo.toml: tickprof = { version = "0.1", features = ["tracing"] }
//! use tracing_subscriber::prelude::*;
//! tracing_subscriber::registry()
//!     .with(tickprof::tracing::Layer::new())
//!     .init();
//! ```

#[cfg(feature = "enabled")]
mod imp;

/// A `tracing_subscriber` layer feeding spans into tickprof's trees (see
/// the [module docs](self)). With the `enabled` feature off it does nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Layer {
    _private: (),
}

impl Layer {
    /// The layer. All layers share one set of sites.
    pub fn new() -> Layer {
        Layer::default()
    }
}

#[cfg(not(feature = "enabled"))]
impl<S: tracing_core::Subscriber> tracing_subscriber::Layer<S> for Layer {}
