//! The guard's frame: what a push or a cold entry hands the guard (a node
//! and its parent's word, sixteen bytes, so cold paths return it in
//! registers), and how the flags and the tags that route its exit are
//! packed into it.
//!
//! Written by the cold entry path ([`super::cold`]) and read back by the
//! cold exit path; the stack ([`super::stack`]) only hands out plain frames
//! and compares nodes. Shared by all three, imported by none of them in
//! turn: no cycle.
//!
//! | frame | node | parent word |
//! |---|---|---|
//! | none (off, re-entrant, not set up) | null | 0 |
//! | plain (the fast path) | the call's node | its parent node |
//! | counted (from a cold entry) | the node + [`COUNTED_TAG`] | its parent node |
//! | traced and/or hooked | the node + [`TAG`] | the parent node \| [`TRACED`] / [`HOOKED`] |
//! | hooked, profile off | the site | the hooks' depth above \| [`HOOKED`] \| [`UNRECORDED`] |
//! | detached (state torn down) | the site | [`DETACHED`] |

use super::node::Node;
use crate::site::CallSite;

/// What a push gives the guard: the call's node and its parent's word
/// (the parent node, with flags in its low bits: nodes are aligned to 64
/// bytes).
pub(super) type Frame = (*const Node, usize);

/// The frame of a call for which nothing was pushed.
pub(super) const NONE: Frame = (core::ptr::null(), 0);

/// The parent word of a guard created after its thread's profiler state
/// was gone.
pub(super) const DETACHED: usize = usize::MAX;
/// Bit set in the parent word of a guard whose call is also traced.
pub(super) const TRACED: usize = 1;
/// Bit set in the parent word of a guard whose exit runs the hooks.
pub(super) const HOOKED: usize = 2;
/// Bit set in the parent word of a hooked guard with no frame (profile
/// off): its `node` holds the site.
pub(super) const UNRECORDED: usize = 4;
/// The parent word's flag bits.
const FLAGS: usize = TRACED | HOOKED | UNRECORDED;
/// Set in the node address of a traced or hooked guard (nodes are aligned
/// to 64 bytes, so the bit is free): the exit's fast path compares the
/// guard's node with the node on top and nothing else, and a tagged
/// address never equals one.
pub(super) const TAG: usize = 1;
/// Set in the node address of a counted call's frame from a cold entry.
pub(super) const COUNTED_TAG: usize = 2;
/// The hooks' depth of an unrecorded frame is kept above this many low
/// bits of its word.
const DEPTH_SHIFT: u32 = 6;

/// The frame of a detached call: the site, and [`DETACHED`].
pub(super) fn detached(site: &'static CallSite) -> Frame {
    ((site as *const CallSite).cast(), DETACHED)
}

/// The frame of a hooked call with the profile off: the site, and the
/// hooks' own depth with [`HOOKED`] and [`UNRECORDED`].
pub(super) fn unrecorded(site: &'static CallSite, depth: usize) -> Frame {
    (
        (site as *const CallSite).cast(),
        (depth << DEPTH_SHIFT) | HOOKED | UNRECORDED,
    )
}

/// The frame of a pushed `node` whose parent is `parent`, traced and/or
/// hooked: tagged when either is set, so that the exit's fast path cannot
/// match it.
pub(super) fn pushed(node: *const Node, parent: *const Node, traced: bool, hooked: bool) -> Frame {
    let mut bits = 0;
    if traced {
        bits |= TRACED;
    }
    if hooked {
        bits |= HOOKED;
    }
    if bits == 0 {
        return (node, parent as usize);
    }
    (node.wrapping_byte_add(TAG), parent as usize | bits)
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
        /// Its parent.
        parent: *const Node,
        /// Whether the call is traced.
        traced: bool,
        /// Whether its exit runs the hooks.
        hooked: bool,
    },
}

/// Unpacks a frame (see the table in the module docs).
pub(super) fn decode((node, word): Frame) -> Decoded {
    if word == DETACHED {
        // SAFETY: a detached frame's node holds its `&'static CallSite`
        // (see `detached`).
        return Decoded::Detached(unsafe { &*node.cast::<CallSite>() });
    }
    if node.is_null() {
        return Decoded::None;
    }
    let bits = word & FLAGS;
    if bits & UNRECORDED != 0 {
        // SAFETY: an unrecorded frame's node holds its `&'static CallSite`
        // (see `unrecorded`).
        let site = unsafe { &*node.cast::<CallSite>() };
        return Decoded::Unrecorded {
            site,
            depth: word >> DEPTH_SHIFT,
        };
    }
    Decoded::Pushed {
        node: node.wrapping_byte_sub(node as usize & (TAG | COUNTED_TAG)),
        parent: (word & !FLAGS) as *const Node,
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
        let (node, parent) = (node_at(7), node_at(3));
        assert_eq!(pushed(node, parent, false, false), (node, parent as usize));
        assert!(matches!(
            decode((node, parent as usize)),
            Decoded::Pushed { node: n, parent: p, .. } if n == node && p == parent
        ));
    }

    #[test]
    fn a_traced_or_hooked_frame_never_equals_its_node() {
        let node = node_at(7);
        for (traced, hooked) in [(true, false), (false, true), (true, true)] {
            let (tagged, _) = pushed(node, node_at(1), traced, hooked);
            assert_ne!(tagged, node);
        }
    }

    proptest! {
        #[test]
        fn pushed_frames_round_trip(
            slot in 0usize..1 << 40,
            traced: bool,
            hooked: bool,
        ) {
            let node = node_at(slot);
            let parent = node_at(slot / 2);
            let back = decode(pushed(node, parent, traced, hooked));
            prop_assert!(
                matches!(
                    back,
                    Decoded::Pushed { node: n, parent: p, traced: t, hooked: h }
                        if n == node && p == parent && t == traced && h == hooked
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
