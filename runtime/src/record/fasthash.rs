//! A fast hasher for the thread's own lookup tables (child nodes by parent
//! and site): their keys are small integers and addresses that only this
//! process made, so the default hasher's resistance to chosen keys buys
//! nothing and costs most of a lookup. One multiply per word (FxHash).

use core::hash::{BuildHasherDefault, Hasher};
use std::collections::HashMap;

/// A `HashMap` hashed with [`FastHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// FxHash: rotate, xor, multiply by a large odd constant, per word.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_keys_map_to_distinct_entries() {
        let mut m: FastMap<(u32, usize), u32> = FastMap::default();
        for p in 0..64u32 {
            for s in 0..64usize {
                m.insert((p, 0x1000 + s * 64), p * 64 + s as u32);
            }
        }
        assert_eq!(m.len(), 64 * 64);
        assert_eq!(m[&(3, 0x1000 + 5 * 64)], 3 * 64 + 5);
        let mut h = FastHasher::default();
        h.write(b"abcdefghij");
        assert_ne!(h.finish(), 0);
    }
}
