//! Fault injection: marks double as failpoints.
//!
//! A table in the `fail` crate's syntax arms them: `TICKPROF_FAIL` for
//! every thread (read at start-up), or [`cfg()`] for the calling thread.
//! Names are site names: the full path (`myapp::db::query`), or a suffix
//! of it at a `::` boundary (`db::query`, `query`) that only one mark's
//! name ends with. Actions: `off`, `return[(msg)]`, `sleep(ms)`,
//! `delay(ms)` (busy-wait), `panic[(msg)]`, `print[(msg)]`, `yield`, each
//! with optional `p%` (probability) and `n*` (count) prefixes, chained
//! with `->` (the next is tried when one does not fire).
//!
//! Every mark (functions and scopes) supports the delays, `print` and
//! `panic`, evaluated when the call enters, before its body. `return`
//! needs a function marked `#[profile(fail)]`, whose return type is
//! `Result<_, E>` with `E: From<Injected>`: it returns `Err(Injected{..}
//! .into())` without running its body. An `async fn` mark is evaluated at
//! its first poll, a function returning a future when it is called
//! (`return` is not supported there: `#[profile(fail)]` is a compile
//! error on them).
//!
//! Cost: when no table is armed, nothing (the `FAIL` bit of the mode is
//! clear, and the fast path compares the mode once, as it always does);
//! when one is, every marked call takes the cold path and looks its site
//! up by address. Failpoints fire whether or not profiling records
//! (`TICKPROF=off` leaves them on): fault tests do not depend on
//! profiling. The probabilities draw from one stream seeded with
//! `TICKPROF_FAIL_SEED` (or [`seed`]), so a single-threaded run is
//! reproducible. The `failpoints` cargo feature (on by default) compiles
//! all of it out: the API below then arms nothing.

#[cfg(feature = "enabled")]
pub(crate) mod check;
#[cfg(feature = "failpoints")]
mod eval;
#[cfg(feature = "failpoints")]
mod parse;
#[cfg(feature = "failpoints")]
pub(crate) mod state;

/// The error a failpoint's `return` injects into a function marked
/// `#[profile(fail)]`; the function's error type converts it with `From`.
///
/// # Examples
///
/// ```
/// #[derive(Debug)]
/// enum MyError {
///     Injected(tickprof_runtime::fail::Injected),
/// }
///
/// impl From<tickprof_runtime::fail::Injected> for MyError {
///     fn from(e: tickprof_runtime::fail::Injected) -> Self {
///         MyError::Injected(e)
///     }
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Injected {
    /// The name of the site whose failpoint fired.
    pub failpoint: String,
    /// The argument of `return(...)`, if any.
    pub message: Option<String>,
}

impl Injected {
    /// The fault a failpoint named `failpoint` injects with `return(message)`
    /// (`None`: a bare `return`): to compare against in tests.
    ///
    /// # Examples
    ///
    /// ```
    /// use tickprof_runtime::fail::Injected;
    /// let e = Injected::new("app::save", Some("disk full"));
    /// assert_eq!(e.to_string(), "fault injected at app::save: disk full");
    /// ```
    pub fn new(failpoint: impl Into<String>, message: Option<&str>) -> Injected {
        Injected {
            failpoint: failpoint.into(),
            message: message.map(str::to_owned),
        }
    }
}

impl core::fmt::Display for Injected {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match &self.message {
            Some(m) => write!(f, "fault injected at {}: {m}", self.failpoint),
            None => write!(f, "fault injected at {}", self.failpoint),
        }
    }
}

impl std::error::Error for Injected {}

/// Sets the actions of the failpoint `name` on the calling thread (other
/// threads are not affected; `TICKPROF_FAIL` arms every thread). Replaces
/// what this thread had for the same name.
///
/// # Errors
/// Bad `actions` syntax, or `name` matching no mark or several: the
/// message says what is wrong, and nothing is armed. With the
/// `failpoints` feature off, always an error.
///
/// # Examples
///
/// ```
/// // Names a mark of the program, e.g. `myapp::db::query` or `db::query`.
/// let _ = tickprof_runtime::fail::cfg("db::query", "1*return(timeout)->off");
/// ```
pub fn cfg(name: &str, actions: &str) -> Result<(), String> {
    #[cfg(feature = "failpoints")]
    {
        state::cfg(name, actions)
    }
    #[cfg(not(feature = "failpoints"))]
    {
        let _ = (name, actions);
        Err("failpoints are compiled out (the `failpoints` feature is off)".to_owned())
    }
}

/// Removes the failpoint `name` from the calling thread's table.
pub fn remove(name: &str) {
    #[cfg(feature = "failpoints")]
    state::remove(name);
    #[cfg(not(feature = "failpoints"))]
    let _ = name;
}

/// Restarts the random stream of the probability prefixes from `seed`
/// (as `TICKPROF_FAIL_SEED` does at start-up).
pub fn seed(seed: u64) {
    #[cfg(feature = "failpoints")]
    state::set_seed(seed);
    #[cfg(not(feature = "failpoints"))]
    let _ = seed;
}

/// A test's failpoints: [`FailScenario::setup`] empties the calling
/// thread's table, and dropping the scenario restores the table it had.
///
/// Scoped per thread, so tests running in parallel threads (as
/// `cargo test` runs them) do not see each other's failpoints; a fault
/// set in a scenario fires only on its thread.
///
/// # Examples
///
/// ```
/// let scenario = tickprof_runtime::fail::FailScenario::setup();
/// // tickprof_runtime::fail::cfg("parse", "panic").unwrap();
/// drop(scenario); // the thread's previous table is back
/// ```
#[must_use = "the scenario restores the previous table when dropped"]
pub struct FailScenario {
    #[cfg(feature = "failpoints")]
    saved: Vec<state::LocalEntry>,
    _not_send: core::marker::PhantomData<*const ()>,
}

impl FailScenario {
    /// Saves and empties this thread's table.
    pub fn setup() -> FailScenario {
        FailScenario {
            #[cfg(feature = "failpoints")]
            saved: state::replace(Vec::new()),
            _not_send: core::marker::PhantomData,
        }
    }
}

impl Drop for FailScenario {
    fn drop(&mut self) {
        #[cfg(feature = "failpoints")]
        state::replace(core::mem::take(&mut self.saved));
    }
}

impl core::fmt::Debug for FailScenario {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FailScenario").finish_non_exhaustive()
    }
}
