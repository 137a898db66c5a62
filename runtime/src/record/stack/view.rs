//! What tickprof's sampler reads of a thread's state, and how the owner
//! writes it: the shadow stack's slots and words (relaxed atomics: plain
//! moves on the owner's side), and the instrumentation word the guard sets
//! around a call's entry and exit ([`ThreadState::inst_on`]).

use super::ThreadState;
use crate::record::node::Node;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// One slot of the shadow stack: a node, written by the owner thread and
/// read by tickprof's sampler thread (relaxed: plain moves on the owner's
/// side).
pub(crate) type Slot = AtomicPtr<Node>;

/// The node in slot `i` of `stack`.
///
/// # Safety
///
/// `stack` holds at least `i + 1` initialised slots.
#[inline(always)]
pub(crate) unsafe fn slot(stack: *const Slot, i: usize) -> *const Node {
    // SAFETY: per the contract.
    unsafe { (*stack.add(i)).load(Ordering::Relaxed) }
}

/// Writes `node` into slot `i` of `stack` (owner thread only).
///
/// # Safety
///
/// `stack` holds at least `i + 1` initialised slots.
#[inline(always)]
pub(super) unsafe fn set_slot(stack: *const Slot, i: usize, node: *const Node) {
    // SAFETY: per the contract.
    unsafe { (*stack.add(i)).store(node.cast_mut(), Ordering::Relaxed) }
}

/// A word of the owner thread's that tickprof's sampler thread reads: a
/// relaxed atomic, so that the owner's loads and stores stay plain moves.
pub(super) struct Word(AtomicUsize);

impl Word {
    pub(super) const fn new(v: usize) -> Word {
        Word(AtomicUsize::new(v))
    }

    #[inline(always)]
    pub(in crate::record) fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    #[inline(always)]
    pub(in crate::record) fn set(&self, v: usize) {
        self.0.store(v, Ordering::Relaxed);
    }
}

/// The instrumentation word's value inside the call on top (see
/// [`ThreadState::inst_inside`]): above every frame's depth, so that it
/// reads as [`Sampled::Calls`] of the node on top.
pub(in crate::record) const INSIDE: usize = usize::MAX - 1;

/// What the sampler found a thread doing, with a node on top of its stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sampled {
    /// The program's own code (the node's `sampled` time).
    Program,
    /// The instrumentation of a marked call the node makes, on the
    /// node's side of its push and pop, or tickprof's own work
    /// (`sampled_inst`: inside the node's calls' time).
    Calls,
    /// The node's own call's instrumentation, after its push or before
    /// its pop (`sampled_own`: outside its call's time).
    Own,
    /// tickprof's own work outside any marked call
    /// ([`ThreadState::while_busy`]: capturing and writing reports, the
    /// exit, a server's answer): neither the program's nor a call's
    /// instrumentation, and credited to nothing. (Counted as the
    /// instrumentation, the exit report's last period read as a
    /// millisecond of instrumentation spread over the run's calls: 50 µs a
    /// call in a run of 20.)
    Tool,
}

impl ThreadState {
    /// Marks the start of instrumentation entering (`frame` = the depth
    /// the new frame will have: the top's + 1) or leaving (`frame` = the
    /// frame's depth) a marked call: the sampler counts what it finds now
    /// as instrumentation (see [`Sampled`]). One store; the compiler keeps
    /// it in place (a signal fence: no instruction).
    #[inline(always)]
    pub(in crate::record) fn inst_on(&self, frame: usize) {
        self.inst.set(frame);
        core::sync::atomic::compiler_fence(Ordering::SeqCst);
    }

    /// [`ThreadState::inst_on`] for entering a call: the frame above the
    /// top. Returns the depth on top, for [`ThreadState::push_at`].
    #[inline(always)]
    pub(in crate::record) fn inst_on_entry(&self) -> usize {
        let depth = self.depth.get();
        self.inst_on(depth + 1);
        depth
    }

    /// Marks the instrumentation inside the call on top: the sampler
    /// counts what it finds now as that call's (inside its time, as
    /// [`Sampled::Calls`]). One store of a constant.
    #[inline(always)]
    pub(in crate::record) fn inst_inside(&self) {
        self.inst.set(INSIDE);
        core::sync::atomic::compiler_fence(Ordering::SeqCst);
    }

    /// Marks the end of instrumentation: back in the program's code.
    #[inline(always)]
    pub(in crate::record) fn inst_off(&self) {
        core::sync::atomic::compiler_fence(Ordering::SeqCst);
        self.inst.set(0);
    }

    /// What the sampler sees of this thread: the node on top of its
    /// stack and what the thread is doing there. `None` before set-up.
    /// Only the sampler thread calls it, while this state is in its table
    /// (see [`super::sampler`]): the stack it reads is not freed
    /// meanwhile.
    pub(in crate::record) fn sampled(&self) -> Option<(&Node, Sampled)> {
        // The length before the pointer (see `set_stack`).
        let len = self.stack_len.load(Ordering::Acquire);
        let stack = self.stack.load(Ordering::Acquire);
        if len == 0 || stack.is_null() {
            return None;
        }
        let inst = self.inst.get();
        let top = self.depth.get();
        // SAFETY: `stack` holds at least `len` slots (published in that
        // order) and is not freed while the sampler reads this state.
        let node = unsafe { slot(stack, top.min(len - 1)) };
        let what = match inst {
            0 => Sampled::Program,
            usize::MAX => Sampled::Tool,
            f if top >= f => Sampled::Own,
            _ => Sampled::Calls,
        };
        // SAFETY: a slot holds null or a node of this thread's arena,
        // which the thread frees only after leaving the sampler's table.
        unsafe { node.as_ref() }.map(|n| (n, what))
    }
}
