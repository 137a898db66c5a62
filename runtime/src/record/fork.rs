//! `fork` safety: the handlers that `pthread_atfork` runs around a `fork`.
//!
//! Before the fork, the forking thread takes every tickprof lock a child
//! could need (the registry's, and its own trace buffer's: the other
//! threads' buffers are never touched in the child), so no lock is copied
//! held by a thread the child does not have. After it, the parent releases
//! them; the child releases them and starts a fresh profile: only the
//! forking thread exists in the child, its counters are zeroed, and the
//! parent's other threads, live and finished, are forgotten. Its child
//! caches are emptied, so that its next calls take the cold path that
//! starts its sampler.

use super::{registry, sampler, stack, trace};

/// The `fork` prepare handler.
pub(crate) fn prepare() {
    registry::fork_prepare();
    if let Some(arena) = stack::current().arena() {
        arena.trace.hold_for_fork();
    }
}

/// The `fork` handler in the parent.
pub(crate) fn parent() {
    trace::release_after_fork();
    registry::fork_parent();
}

/// The `fork` handler in the child: a fresh profile, still recording.
pub(crate) fn child() {
    trace::release_after_fork();
    let own = stack::current().arena();
    sampler::fork_child(stack::current().sampler_slot());
    registry::fork_child(own.map(|a| a as *const _));
    if let Some(arena) = own {
        arena.reset();
        #[cfg(all(feature = "inlined", target_os = "linux"))]
        if let Some(pcs) = arena.pcs() {
            super::pcs::fork_child(pcs);
        }
    }
    stack::current().forget_children();
}
