//! A thread's table of program-counter samples (see `record::pcs`).

use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Distinct (node, program counter) pairs a thread's table holds; later
/// ones are counted as dropped.
pub(crate) const SLOTS: usize = 2048;

/// What delivers a thread's samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// A perf event's file descriptor (a software task-clock event of the
    /// thread, signalling on overflow).
    Perf(i32),
    /// A POSIX timer of the thread's CPU time (its kernel id, which may
    /// be 0).
    Timer(u32),
}

impl Source {
    /// As one non-zero word: the kind in the high half, the id in the low.
    fn word(self) -> u64 {
        match self {
            Source::Perf(fd) => 1 << 32 | u64::from(fd as u32),
            Source::Timer(id) => 2 << 32 | u64::from(id),
        }
    }

    /// The word back (0: nothing).
    fn from_word(w: u64) -> Option<Source> {
        match w >> 32 {
            1 => Some(Source::Perf(w as u32 as i32)),
            2 => Some(Source::Timer(w as u32)),
            _ => None,
        }
    }
}

/// One (node, program counter) pair and its samples.
struct Slot {
    /// The program counter (0: free).
    pc: AtomicUsize,
    /// The node's index in its thread's tree.
    node: AtomicU32,
    /// Samples; written last (release): a reader that sees it non-zero
    /// sees the pair.
    count: AtomicU64,
}

/// A thread's program-counter samples: written only by its own signal
/// handler, read by reports at any time (relaxed, a count may be one
/// short). In pages of its own, with the thread's arena.
pub(crate) struct Pcs {
    slots: [Slot; SLOTS],
    dropped: AtomicU64,
    /// What delivers the thread's samples ([`Source::word`]; 0: nothing).
    source: AtomicU64,
}

impl Pcs {
    /// An empty table (zeroed memory is one too: how threads get theirs).
    #[cfg(test)]
    pub(crate) const fn new() -> Pcs {
        Pcs {
            slots: [const {
                Slot {
                    pc: AtomicUsize::new(0),
                    node: AtomicU32::new(0),
                    count: AtomicU64::new(0),
                }
            }; SLOTS],
            dropped: AtomicU64::new(0),
            source: AtomicU64::new(0),
        }
    }

    /// Counts one sample of `pc` in node `node`: async-signal-safe (the
    /// owner thread's handler only: one writer).
    pub(crate) fn add(&self, node: u32, pc: usize) {
        if pc == 0 {
            return;
        }
        let h = (pc as u64 ^ u64::from(node).rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let start = (h >> 53) as usize % SLOTS;
        for k in 0..8 {
            let s = &self.slots[(start + k) % SLOTS];
            let held = s.pc.load(Ordering::Relaxed);
            if held == 0 {
                s.pc.store(pc, Ordering::Relaxed);
                s.node.store(node, Ordering::Relaxed);
                s.count.store(1, Ordering::Release);
                return;
            }
            if held == pc && s.node.load(Ordering::Relaxed) == node {
                let c = s.count.load(Ordering::Relaxed);
                s.count.store(c + 1, Ordering::Relaxed);
                return;
            }
        }
        let d = self.dropped.load(Ordering::Relaxed);
        self.dropped.store(d + 1, Ordering::Relaxed);
    }

    /// Every pair counted: (node index, program counter, samples).
    pub(crate) fn snapshot(&self) -> impl Iterator<Item = (u32, u64, u64)> + '_ {
        self.slots.iter().filter_map(|s| {
            let count = s.count.load(Ordering::Acquire);
            (count > 0).then(|| {
                (
                    s.node.load(Ordering::Relaxed),
                    s.pc.load(Ordering::Relaxed) as u64,
                    count,
                )
            })
        })
    }

    /// Samples that found the table full.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Sets what delivers the thread's samples.
    pub(crate) fn set_source(&self, source: Option<Source>) {
        self.source
            .store(source.map_or(0, Source::word), Ordering::Release);
    }

    /// Takes out what delivers the thread's samples.
    pub(crate) fn take_source(&self) -> Option<Source> {
        Source::from_word(self.source.swap(0, Ordering::AcqRel))
    }

    /// Back to no samples (the pairs are forgotten too).
    pub(crate) fn reset(&self) {
        for s in &self.slots {
            s.count.store(0, Ordering::Relaxed);
            s.pc.store(0, Ordering::Relaxed);
        }
        self.dropped.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_counted_and_a_full_neighbourhood_drops() {
        let t = Box::new(Pcs::new());
        for _ in 0..3 {
            t.add(1, 0x1000);
        }
        t.add(2, 0x1000);
        t.add(1, 0x2000);
        t.add(1, 0);
        let mut got: Vec<_> = t.snapshot().collect();
        got.sort();
        assert_eq!(got, [(1, 0x1000, 3), (1, 0x2000, 1), (2, 0x1000, 1)]);
        assert_eq!(t.dropped(), 0);
        // Far more pairs than slots: the rest is counted as dropped, and
        // every sample is either kept or dropped.
        for pc in 1..=(3 * SLOTS) {
            t.add(7, pc * 16);
        }
        let kept: u64 = t.snapshot().map(|x| x.2).sum();
        assert_eq!(kept + t.dropped(), 5 + 3 * SLOTS as u64);
        assert!(t.dropped() > 0);
        t.reset();
        assert_eq!(t.snapshot().count(), 0);
    }

    #[test]
    fn a_source_survives_its_word_a_timer_0_included() {
        let t = Pcs::new();
        for s in [
            Source::Perf(0),
            Source::Perf(i32::MAX),
            Source::Timer(0),
            Source::Timer(7),
        ] {
            t.set_source(Some(s));
            assert_eq!(t.take_source(), Some(s));
            assert_eq!(t.take_source(), None);
        }
        t.set_source(None);
        assert_eq!(t.take_source(), None);
    }
}
