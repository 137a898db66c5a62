//! The list of every mark where no link section can hold it: each mark
//! registers itself from a constructor that runs before `main`.
//!
//! wasm has no such section (linkme does not build there), and on
//! windows-gnu GNU ld's `--gc-sections` drops linkme's elements, which
//! nothing references (dtolnay/linkme#25: rustc's `#[used]` becomes an
//! `-include:` directive by symbol name, and an element's symbol is
//! local). A constructor is a function pointer in the section the C
//! runtime calls before `main` — `.CRT$XCT` on Windows (GNU ld keeps every
//! `.CRT$XC*` input), `.init_array` on wasm (wasm-ld makes those
//! `__wasm_call_ctors`, which WASI's `_start` calls) — that pushes the
//! mark's [`Registration`] on a lock-free list: no allocation, no lock,
//! nothing from std. Their priority (`.CRT$XCT`, before the `.CRT$XCU` of
//! ordinary constructors; `.init_array.00101`, before the default 500 and
//! 65535) puts them before tickprof's own start-up constructor, which
//! resolves `TICKPROF_FAIL`'s names against the list.
//!
//! The mechanism of the `ctor` crate, written out for these two sections:
//! its declarative form expands through a long chain of macros, once per
//! mark, for what is one `static` here.

use crate::site::CallSite;
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// One mark's entry in the list: a `static` beside its call site.
pub struct Registration {
    site: &'static CallSite,
    next: AtomicPtr<Registration>,
    registered: AtomicBool,
}

/// The last entry registered (the list runs from it to the first).
static HEAD: AtomicPtr<Registration> = AtomicPtr::new(core::ptr::null_mut());

impl Registration {
    /// An entry for `site`, not in the list yet.
    pub const fn new(site: &'static CallSite) -> Registration {
        Registration {
            site,
            next: AtomicPtr::new(core::ptr::null_mut()),
            registered: AtomicBool::new(false),
        }
    }

    /// Puts the entry in the list; a second call (a constructor run twice)
    /// does nothing.
    pub fn register(&'static self) {
        if self.registered.swap(true, Ordering::Relaxed) {
            return;
        }
        let me = (self as *const Registration).cast_mut();
        let mut head = HEAD.load(Ordering::Relaxed);
        loop {
            self.next.store(head, Ordering::Relaxed);
            // Release: a reader that acquires `me` sees `next`, and every
            // earlier entry's (the CAS chain is one release sequence).
            match HEAD.compare_exchange_weak(head, me, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }
}

/// Every mark registered so far (all of them, once `main` runs).
pub(crate) fn all() -> impl Iterator<Item = &'static CallSite> {
    let mut at = HEAD.load(Ordering::Acquire);
    core::iter::from_fn(move || {
        // SAFETY: the list holds only `&'static Registration`s (`register`
        // takes `&'static self`), never removed: `at` is null or valid for
        // the life of the program.
        let entry = unsafe { at.as_ref() }?;
        at = entry.next.load(Ordering::Relaxed);
        Some(entry.site)
    })
}

/// What `mark!` expands to names (used by generated code, not public API).
pub mod expansion {
    pub use super::Registration;
}

/// Puts the call site `$site` (a `static CallSite` in scope) in the list
/// of every mark: a [`Registration`] and the constructor that registers it.
#[doc(hidden)]
#[macro_export]
macro_rules! __tickprof_mark {
    ($site:ident) => {
        static __TICKPROF_MARK: $crate::__private::Registration =
            $crate::__private::Registration::new(&$site);
        #[used]
        #[cfg_attr(windows, link_section = ".CRT$XCT")]
        #[cfg_attr(target_family = "wasm", link_section = ".init_array.00101")]
        static __TICKPROF_REGISTER: extern "C" fn() = {
            extern "C" fn register() {
                __TICKPROF_MARK.register();
            }
            register
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::path_of;

    fn here() {}

    static SITE: CallSite = CallSite::function(path_of(here), Some("registered"), "r.rs", 1);
    static ENTRY: Registration = Registration::new(&SITE);

    #[test]
    fn an_entry_registered_twice_is_listed_once() {
        ENTRY.register();
        ENTRY.register();
        let n = all().filter(|s| core::ptr::eq(*s, &SITE)).count();
        assert_eq!(n, 1);
    }
}
