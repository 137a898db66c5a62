//! The guard's frame: what a push or a cold entry hands the guard (a node
//! and a depth, sixteen bytes, so cold paths return it in registers), and
//! how the flags and the tag that route its exit are packed into it.
//!
//! Written by the cold entry path ([`super::cold`]) and read back by the
//! cold exit path; the shadow stack ([`super::stack`]) only hands out plain
//! frames and compares nodes. Shared by all three, imported by none of them
//! in turn: no cycle.
//!
//! | frame | node | depth |
//! |---|---|---|
//! | none (off, re-entrant, no room) | null | 0 |
//! | plain (the fast path) | a stacked node | its depth |
//! | traced and/or hooked | the node + [`TAG`] | its depth \| [`TRACED`] / [`HOOKED`] |
//! | hooked, profile off | the site | the hooks' depth \| [`HOOKED`] \| [`UNRECORDED`] |
//! | detached (state torn down) | the site | [`DETACHED`] |

use super::node::Node;
use crate::site::CallSite;

/// What a push gives the guard: the node and the frame's depth.
pub(super) type Frame = (*const Node, usize);

/// The frame of a call for which nothing was pushed.
pub(super) const NONE: Frame = (core::ptr::null(), 0);

/// Depth of a guard created after its thread's profiler state was gone.
pub(super) const DETACHED: usize = usize::MAX;
/// Bit set in the depth of a guard whose call is also traced.
pub(super) const TRACED: usize = 1 << (usize::BITS - 2);
/// Bit set in the depth of a guard whose exit runs the hooks.
pub(super) const HOOKED: usize = 1 << (usize::BITS - 3);
/// Bit set in the depth of a hooked guard with no frame (profile off):
/// its `node` holds the site.
pub(super) const UNRECORDED: usize = 1 << (usize::BITS - 4);
/// The depth bits that are not the depth.
pub(super) const FLAGS: usize = TRACED | HOOKED | UNRECORDED;
/// Set in the node address of a traced or hooked guard (nodes are aligned
/// to 64 bytes, so the bit is free): the drop's fast path compares the
/// guard's node with the node on top of the stack and nothing else, and a
/// tagged address never equals a stacked one.
pub(super) const TAG: usize = 1;

/// The frame of a detached call: the site, and depth [`DETACHED`].
pub(super) fn detached(site: &'static CallSite) -> Frame {
    ((site as *const CallSite).cast(), DETACHED)
}

/// The frame of a hooked call with the profile off: the site, and the
/// hooks' own depth with [`HOOKED`] and [`UNRECORDED`].
pub(super) fn unrecorded(site: &'static CallSite, depth: usize) -> Frame {
    (
        (site as *const CallSite).cast(),
        (depth & !FLAGS) | HOOKED | UNRECORDED,
    )
}

/// The frame of a pushed `node` at `depth`, traced and/or hooked: tagged
/// when either is set, so that the exit's fast path cannot match it.
pub(super) fn pushed(node: *const Node, depth: usize, traced: bool, hooked: bool) -> Frame {
    let mut bits = 0;
    if traced {
        bits |= TRACED;
    }
    if hooked {
        bits |= HOOKED;
    }
    if bits == 0 {
        return (node, depth);
    }
    (
        node.cast::<u8>().wrapping_add(TAG).cast::<Node>(),
        depth | bits,
    )
}

/// A frame read back by the cold exit path.
#[derive(Debug)]
pub(super) enum Decoded {
    /// Nothing was pushed: nothing to do.
    None,
    /// Begun after the thread's state was torn down.
    Detached(&'static CallSite),
    /// Hooked with the profile off, at the hooks' `depth`.
    Unrecorded {
        /// The call's site.
        site: &'static CallSite,
        /// The hooks' depth.
        depth: usize,
    },
    /// A pushed frame.
    Pushed {
        /// The node, untagged.
        node: *const Node,
        /// The depth, without flags.
        depth: usize,
        /// Whether the call is traced.
        traced: bool,
        /// Whether its exit runs the hooks.
        hooked: bool,
    },
}

/// Unpacks a frame (see the table in the module docs).
pub(super) fn decode((node, depth): Frame) -> Decoded {
    if depth == DETACHED {
        // SAFETY: a detached frame's node holds its `&'static CallSite`
        // (see `detached`).
        return Decoded::Detached(unsafe { &*node.cast::<CallSite>() });
    }
    if node.is_null() {
        return Decoded::None;
    }
    let bits = depth & FLAGS;
    let depth = depth & !FLAGS;
    if bits & UNRECORDED != 0 {
        // SAFETY: an unrecorded frame's node holds its `&'static CallSite`
        // (see `unrecorded`).
        let site = unsafe { &*node.cast::<CallSite>() };
        return Decoded::Unrecorded { site, depth };
    }
    Decoded::Pushed {
        node: node
            .cast::<u8>()
            .wrapping_sub(node as usize & TAG)
            .cast::<Node>(),
        depth,
        traced: bits & TRACED != 0,
        hooked: bits & HOOKED != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn m() {}
    static SITE: CallSite = CallSite::function(crate::site::path_of(m), None, "f.rs", 1);

    /// A 64-byte aligned address, as arena nodes have.
    fn node_at(slot: usize) -> *const Node {
        (64 * (slot + 1)) as *const Node
    }

    fn is_site(site: &CallSite) -> bool {
        core::ptr::eq(site, &SITE)
    }

    #[test]
    fn none_detached_and_unrecorded_decode_to_themselves() {
        assert!(matches!(decode(NONE), Decoded::None));
        assert!(matches!(decode(detached(&SITE)), Decoded::Detached(s) if is_site(s)));
        assert!(matches!(
            decode(unrecorded(&SITE, 3)),
            Decoded::Unrecorded { site, depth: 3 } if is_site(site)
        ));
    }

    #[test]
    fn a_plain_frame_is_untouched() {
        let node = node_at(7);
        assert_eq!(pushed(node, 5, false, false), (node, 5));
    }

    #[test]
    fn a_traced_or_hooked_frame_never_equals_its_node() {
        let node = node_at(7);
        for (traced, hooked) in [(true, false), (false, true), (true, true)] {
            let (tagged, _) = pushed(node, 5, traced, hooked);
            assert_ne!(tagged, node);
        }
    }

    proptest! {
        #[test]
        fn pushed_frames_round_trip(
            slot in 0usize..1 << 40,
            depth in 1usize..1 << 40,
            traced: bool,
            hooked: bool,
        ) {
            let node = node_at(slot);
            let back = decode(pushed(node, depth, traced, hooked));
            prop_assert!(
                matches!(
                    back,
                    Decoded::Pushed { node: n, depth: d, traced: t, hooked: h }
                        if n == node && d == depth && t == traced && h == hooked
                ),
                "{:?}",
                back
            );
        }

        #[test]
        fn unrecorded_frames_round_trip(depth in 0usize..1 << 40) {
            let back = decode(unrecorded(&SITE, depth));
            prop_assert!(
                matches!(back, Decoded::Unrecorded { site, depth: d } if is_site(site) && d == depth),
                "{:?}",
                back
            );
        }
    }
}
