//! Classifies every byte of a pseudo-random buffer through a lookup
//! table, in functions kept out of line: about 3 calls a byte, 16 MiB by
//! default (`lookup MIB`).

use std::hint::black_box;

/// A byte's class: 0 space, 1 digit, 2 letter, 3 punctuation, 4 other.
static CLASS: [u8; 256] = {
    let mut t = [4u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b == b' ' || b == b'\n' || b == b'\t' {
            0
        } else if b.is_ascii_digit() {
            1
        } else if b.is_ascii_alphabetic() {
            2
        } else if b.is_ascii_punctuation() {
            3
        } else {
            4
        };
        i += 1;
    }
    t
};

#[inline(never)]
fn class_of(b: u8) -> u8 {
    CLASS[b as usize]
}

#[inline(never)]
fn weight(class: u8) -> u32 {
    [1, 3, 2, 5, 7][class as usize & 3]
}

#[inline(never)]
fn is_boundary(prev: u8, class: u8) -> bool {
    (prev == 0) != (class == 0)
}

/// A buffer of `n` pseudo-random bytes (xorshift), mostly text.
fn buffer(n: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b" etaoinshrdlu0123456789,.;:\n"[(x % 28) as usize]
        })
        .collect()
}

/// Sums the weights and counts the word boundaries.
fn scan(buf: &[u8]) -> (u64, u64) {
    let (mut sum, mut words, mut prev) = (0u64, 0u64, 0u8);
    for &b in buf {
        let c = class_of(b);
        sum += u64::from(weight(c));
        if is_boundary(prev, c) {
            words += 1;
        }
        prev = c;
    }
    (sum, words)
}

fn main() {
    let mib: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(16);
    let buf = buffer(mib << 20);
    let (sum, words) = scan(black_box(&buf));
    println!("{} bytes: weight {sum}, {words} boundaries", buf.len());
}
