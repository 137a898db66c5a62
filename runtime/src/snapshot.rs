//! Snapshots and differences: the profile of just one stretch of a run,
//! e.g. the iterations of one benchmark.

use crate::report::Report;
use core::ops::Sub;

/// A copy of everything recorded so far, taken by [`snapshot()`].
///
/// `later - earlier` (or [`Snapshot::since`]) is the [`Report`] of what
/// happened between the two: calls, totals, self times, rejections, callers
/// and callees, the tree and the per-thread breakdown are differences; `min`
/// and `max` remain those of the whole run up to the later snapshot, since
/// extremes cannot be subtracted. Taking a snapshot copies the calling-context
/// trees (cost proportional to the number of distinct call paths), and is
/// never done on the hot path.
///
/// # Examples
///
/// ```
/// // Through the facade: `tickprof::snapshot()`.
/// let before = tickprof_runtime::snapshot();
/// // ... the code to profile, e.g. one benchmark's iterations ...
/// let after = tickprof_runtime::snapshot();
/// let profile = &after - &before;
/// for site in &profile.sites {
///     println!("{}: {} calls, {} ns", site.name, site.calls, site.total_ns);
/// }
/// ```
#[derive(Clone)]
pub struct Snapshot {
    #[cfg(feature = "enabled")]
    capture: crate::record::Capture,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").finish_non_exhaustive()
    }
}

/// Copies everything recorded so far, to diff against a later snapshot.
pub fn snapshot() -> Snapshot {
    #[cfg(feature = "enabled")]
    {
        Snapshot {
            capture: crate::exit::capture(),
        }
    }
    #[cfg(not(feature = "enabled"))]
    {
        Snapshot {}
    }
}

impl Snapshot {
    /// The profile as it was when the snapshot was taken.
    pub fn report(&self) -> Report {
        #[cfg(feature = "enabled")]
        {
            crate::exit::report_of(&self.capture, None)
        }
        #[cfg(not(feature = "enabled"))]
        {
            Report::empty()
        }
    }

    /// The profile of what happened between `earlier` and this snapshot.
    pub fn since(&self, earlier: &Snapshot) -> Report {
        #[cfg(feature = "enabled")]
        {
            crate::exit::report_of(&self.capture, Some(&earlier.capture))
        }
        #[cfg(not(feature = "enabled"))]
        {
            let _ = earlier;
            Report::empty()
        }
    }
}

impl Sub<&Snapshot> for &Snapshot {
    type Output = Report;

    /// `later - earlier`: see [`Snapshot::since`].
    fn sub(self, earlier: &Snapshot) -> Report {
        self.since(earlier)
    }
}

impl Sub for Snapshot {
    type Output = Report;

    /// `later - earlier`: see [`Snapshot::since`].
    fn sub(self, earlier: Snapshot) -> Report {
        self.since(&earlier)
    }
}
