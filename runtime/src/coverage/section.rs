//! The list of every mark as a link section: each mark's `static` is put
//! in one section by the linker ([`linkme`]'s distributed slices), read as
//! a slice with no code run before `main`. linkme rather than `inventory`
//! because it needs no constructor per mark (inventory runs one per
//! element) and a missing platform is a link error, never a silently
//! empty list. Used on Linux, Android, macOS/iOS, Windows (msvc), illumos,
//! the BSDs and bare-metal ELF; not on wasm (no such section) nor on
//! windows-gnu, where GNU ld's `--gc-sections` empties it
//! (dtolnay/linkme#25): those register their marks by constructor
//! (`constructors.rs`).

use crate::site::CallSite;

/// Every mark of the program (generic functions: one per function, not per
/// instantiation).
#[linkme::distributed_slice]
pub static SITES: [&'static CallSite];

/// Every mark the linker put in the list.
pub(crate) fn all() -> impl Iterator<Item = &'static CallSite> {
    SITES.iter().copied()
}

/// What `mark!` expands to names (used by generated code, not public API).
pub mod expansion {
    pub use super::SITES;
    pub use linkme;
}

/// Puts the call site `$site` (a `static CallSite` in scope) in the list
/// of every mark: an element of [`SITES`].
#[doc(hidden)]
#[macro_export]
macro_rules! __tickprof_mark {
    ($site:ident) => {
        #[$crate::__private::linkme::distributed_slice($crate::__private::SITES)]
        #[linkme(crate = $crate::__private::linkme)]
        static __TICKPROF_MARK: &$crate::__private::CallSite = &$site;
    };
}
