//! A small call tree for `scripts/ci_uftrace.sh`: the same calls seen by
//! tickprof's trace log (`TICKPROF_LOG`) and by `uftrace record`.

use std::hint::black_box;

#[inline(never)]
#[tickprof::profile]
fn tree_leaf(i: u32) -> u32 {
    black_box(i) + 1
}

#[inline(never)]
#[tickprof::profile]
fn tree_middle(n: u32) -> u32 {
    (0..n).map(tree_leaf).sum()
}

#[inline(never)]
#[tickprof::profile]
fn tree_root() -> u32 {
    let mut s = tree_leaf(0);
    for n in 1..4 {
        s += tree_middle(n);
    }
    s
}

fn main() {
    let s = tree_root() + tree_middle(2);
    println!("{s}");
}
