//! Call sites: one `static` per mark, holding its metadata.

use crate::report::SiteKind;
#[cfg(feature = "enabled")]
use core::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

/// One marked function or scope: where it is and what it is called.
///
/// Generated code creates exactly one `static CallSite` per mark; generic
/// functions share theirs across instantiations. The time accumulators live
/// in per-thread calling-context trees that point back at the site, so this
/// value is read-only after construction apart from its registry link.
pub struct CallSite {
    path: fn() -> &'static str,
    label: Option<&'static str>,
    kind: SiteKind,
    file: &'static str,
    line: u32,
    column: u32,
    #[cfg(feature = "enabled")]
    next: AtomicPtr<CallSite>,
    #[cfg(feature = "enabled")]
    state: AtomicU8,
}

#[cfg(feature = "enabled")]
const UNREGISTERED: u8 = 0;
#[cfg(feature = "enabled")]
const REGISTERING: u8 = 1;
#[cfg(feature = "enabled")]
const REGISTERED: u8 = 2;

/// Returns a function that gives the type name of `f`'s type.
///
/// Generated code passes a nested `fn __tickprof_here() {}` so that the name
/// (`crate::module::Type::method::__tickprof_here`) carries the full path of
/// the enclosing function, computed only when the report is built.
pub const fn path_of<T>(f: T) -> fn() -> &'static str {
    core::mem::forget(f);
    core::any::type_name::<T>
}

impl core::fmt::Debug for CallSite {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CallSite")
            .field("kind", &self.kind)
            .field("file", &self.file)
            .field("line", &self.line)
            .finish_non_exhaustive()
    }
}

impl CallSite {
    /// A call site for a function marked `#[profile]`.
    ///
    /// `name` overrides the shown name (`#[profile(name = "...")]`).
    pub const fn function(
        path: fn() -> &'static str,
        name: Option<&'static str>,
        file: &'static str,
        line: u32,
    ) -> Self {
        Self::new(path, name, SiteKind::Function, file, line, 0)
    }

    /// A call site for an `async fn` marked `#[profile]`.
    pub const fn async_function(
        path: fn() -> &'static str,
        name: Option<&'static str>,
        file: &'static str,
        line: u32,
    ) -> Self {
        Self::new(path, name, SiteKind::AsyncFunction, file, line, 0)
    }

    /// A call site for `prof_scope!()` (unnamed) or `prof_scope!("name")`.
    pub const fn scope(
        path: fn() -> &'static str,
        name: Option<&'static str>,
        file: &'static str,
        line: u32,
        column: u32,
    ) -> Self {
        Self::new(path, name, SiteKind::Scope, file, line, column)
    }

    const fn new(
        path: fn() -> &'static str,
        label: Option<&'static str>,
        kind: SiteKind,
        file: &'static str,
        line: u32,
        column: u32,
    ) -> Self {
        CallSite {
            path,
            label,
            kind,
            file,
            line,
            column,
            #[cfg(feature = "enabled")]
            next: AtomicPtr::new(core::ptr::null_mut()),
            #[cfg(feature = "enabled")]
            state: AtomicU8::new(UNREGISTERED),
        }
    }

    /// Whether this is a function or a scope.
    pub fn kind(&self) -> SiteKind {
        self.kind
    }

    /// The source file of the mark.
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// The source line of the mark.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The source column of the mark (0 for functions).
    pub fn column(&self) -> u32 {
        self.column
    }

    /// The path of the enclosing function, as the user would write it,
    /// e.g. `myapp::parser::Parser::next_token`.
    pub fn function_path(&self) -> String {
        let path = crate::naming::clean_path((self.path)());
        match self.kind {
            // The marker of an async fn sits in the body's generated closure.
            SiteKind::AsyncFunction => path
                .strip_suffix("::{{closure}}")
                .map_or(path.clone(), str::to_owned),
            _ => path,
        }
    }

    /// The name shown in the report.
    ///
    /// Functions: the custom name if given, else the function path. Scopes:
    /// `function path::name` or `function path@line`.
    pub fn name(&self) -> String {
        match (self.kind, self.label) {
            (SiteKind::Function | SiteKind::AsyncFunction, Some(name)) => name.to_owned(),
            (SiteKind::Function | SiteKind::AsyncFunction, None) => self.function_path(),
            (SiteKind::Scope, Some(name)) => format!("{}::{}", self.function_path(), name),
            (SiteKind::Scope, None) => format!("{}@{}", self.function_path(), self.line),
        }
    }
}

#[cfg(feature = "enabled")]
static HEAD: AtomicPtr<CallSite> = AtomicPtr::new(core::ptr::null_mut());

#[cfg(feature = "enabled")]
impl CallSite {
    /// Links this site into the global registry, once. Off the hot path: called
    /// when a thread first creates a tree node for the site.
    pub(crate) fn register(&'static self) {
        if self.state.load(Ordering::Acquire) == REGISTERED {
            return;
        }
        if self
            .state
            .compare_exchange(
                UNREGISTERED,
                REGISTERING,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            // Another thread is registering it (or has); it will be listed.
            return;
        }
        let me = self as *const CallSite as *mut CallSite;
        let mut head = HEAD.load(Ordering::Acquire);
        loop {
            self.next.store(head, Ordering::Relaxed);
            match HEAD.compare_exchange_weak(head, me, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(actual) => head = actual,
            }
        }
        self.state.store(REGISTERED, Ordering::Release);
    }

    /// Every registered site, most recently registered first.
    #[cfg(test)]
    pub(crate) fn all() -> Vec<&'static CallSite> {
        let mut out = Vec::new();
        let mut p = HEAD.load(Ordering::Acquire);
        while !p.is_null() {
            // SAFETY: only `&'static CallSite`s are pushed onto the list and
            // they are never removed, so every non-null link is a valid static.
            let site: &'static CallSite = unsafe { &*p };
            out.push(site);
            p = site.next.load(Ordering::Acquire);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn here() {}

    #[test]
    fn names_follow_kind_and_label() {
        let f = CallSite::function(path_of(here), None, "a.rs", 3);
        assert!(f.name().ends_with("site::tests::here"), "{}", f.name());
        let g = CallSite::function(path_of(here), Some("custom"), "a.rs", 3);
        assert_eq!(g.name(), "custom");
        let s = CallSite::scope(path_of(here), None, "a.rs", 7, 5);
        assert!(s.name().ends_with("tests::here@7"), "{}", s.name());
        let n = CallSite::scope(path_of(here), Some("inner"), "a.rs", 7, 5);
        assert!(n.name().ends_with("tests::here::inner"), "{}", n.name());
    }

    #[cfg(feature = "enabled")]
    #[test]
    fn a_site_registers_once() {
        static SITE: CallSite = CallSite::function(path_of(here), Some("reg"), "a.rs", 1);
        let before = CallSite::all().len();
        SITE.register();
        SITE.register();
        let all = CallSite::all();
        assert_eq!(all.len(), before + 1);
        assert!(all.iter().any(|s| std::ptr::eq(*s, &SITE)));
    }
}
