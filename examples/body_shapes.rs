//! What one marked call adds to its caller, by the shape of the body:
//! dependent chains (each call's argument is the previous call's result)
//! and overlapping calls (independent arguments, results summed), with
//! bodies from empty to ~130 ns. Prints, per shape, the marked and unmarked
//! loop's time per call (medians of 15 interleaved rounds), their
//! difference (the marginal cost of the instrumentation), and the leaf's
//! raw mean as recorded: what the sampler's instrumentation figure stands
//! for is this marginal cost (see docs/accuracy.md).
//!
//! Run: `cargo run --release --example body_shapes`

use std::hint::black_box;
use std::time::Instant;
use tickprof::profile;

#[inline(always)]
fn chain<const R: u32>(x: u64) -> u64 {
    let mut h = black_box(x);
    for _ in 0..R {
        h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(7) ^ x;
    }
    h
}
#[inline(always)]
fn small<const R: u32>(x: u64) -> u64 {
    let mut h = black_box(x);
    for _ in 0..R {
        h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (h >> 29);
    }
    h
}

/// One step of the calling loop: a dependent chain (the argument is the
/// last result) or overlapping calls (results summed).
macro_rules! dep {
    ($a:ident, $i:ident, $f:ident) => {
        $f($a ^ $i)
    };
}

macro_rules! ovl {
    ($a:ident, $i:ident, $f:ident) => {
        $a.wrapping_add($f($i))
    };
}

/// A marked and an unmarked leaf with `$body`, and a loop over each, whose
/// step is `$step` (`dep` or `ovl`).
macro_rules! case {
    ($m:ident, $u:ident, $pm:ident, $pu:ident, $body:expr, $step:ident) => {
        #[inline(never)]
        #[profile]
        fn $m(x: u64) -> u64 {
            $body(x)
        }
        #[inline(never)]
        fn $u(x: u64) -> u64 {
            $body(x)
        }
        #[inline(never)]
        fn $pm(n: u64) -> u64 {
            let mut a = 0u64;
            for i in 0..n {
                a = $step!(a, i, $m);
            }
            a
        }
        #[inline(never)]
        fn $pu(n: u64) -> u64 {
            let mut a = 0u64;
            for i in 0..n {
                a = $step!(a, i, $u);
            }
            a
        }
    };
}
case!(m_d0, u_d0, pm_d0, pu_d0, chain::<0>, dep);
case!(m_d4, u_d4, pm_d4, pu_d4, chain::<4>, dep);
case!(m_d12, u_d12, pm_d12, pu_d12, chain::<12>, dep);
case!(m_d28, u_d28, pm_d28, pu_d28, chain::<28>, dep);
case!(m_d80, u_d80, pm_d80, pu_d80, chain::<80>, dep);
case!(m_o0, u_o0, pm_o0, pu_o0, small::<0>, ovl);
case!(m_o3, u_o3, pm_o3, pu_o3, small::<3>, ovl);
case!(m_o8, u_o8, pm_o8, pu_o8, chain::<8>, ovl);
case!(m_o28, u_o28, pm_o28, pu_o28, chain::<28>, ovl);

fn t(f: fn(u64) -> u64, n: u64) -> f64 {
    let s = Instant::now();
    black_box(f(black_box(n)));
    s.elapsed().as_nanos() as f64 / n as f64
}
fn med(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Name, marked loop, unmarked loop, marked leaf's name suffix.
type Case = (&'static str, fn(u64) -> u64, fn(u64) -> u64, &'static str);

fn main() {
    let n = 200_000;
    let cases: [Case; 9] = [
        ("dep0", pm_d0, pu_d0, "m_d0"),
        ("dep4", pm_d4, pu_d4, "m_d4"),
        ("dep12", pm_d12, pu_d12, "m_d12"),
        ("dep28", pm_d28, pu_d28, "m_d28"),
        ("dep80", pm_d80, pu_d80, "m_d80"),
        ("ovl0", pm_o0, pu_o0, "m_o0"),
        ("ovl3", pm_o3, pu_o3, "m_o3"),
        ("ovl8c", pm_o8, pu_o8, "m_o8"),
        ("ovl28c", pm_o28, pu_o28, "m_o28"),
    ];
    let mut res = vec![(vec![], vec![]); cases.len()];
    for _ in 0..15 {
        for (k, c) in cases.iter().enumerate() {
            res[k].0.push(t(c.1, n));
            res[k].1.push(t(c.2, n));
        }
    }
    let r = tickprof::report();
    println!(
        "calib inner {:.1} ns call {:.1} ns",
        r.run.overhead_inner_ns, r.run.overhead_call_ns
    );
    println!(
        "{:8} {:>8} {:>8} {:>8} {:>10} {:>10}",
        "case", "marked", "unmarked", "marginal", "raw_mean", "raw-true"
    );
    for (k, c) in cases.iter().enumerate() {
        let m = med(res[k].0.clone());
        let u = med(res[k].1.clone());
        let s = r.sites.iter().find(|s| s.name.ends_with(c.3)).unwrap();
        let raw_mean = s.raw_total_ns as f64 / s.calls as f64;
        println!(
            "{:8} {:8.1} {:8.1} {:8.1} {:10.1} {:10.1}",
            c.0,
            m,
            u,
            m - u,
            raw_mean,
            raw_mean - u
        );
    }
}
