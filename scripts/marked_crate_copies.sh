# Sourced by scripts/marked_crate_bench.sh and scripts/perf_compare.sh: a
# published crate's source, the rewriter that marks every fn, the release
# workloads, and the copies made of them. Not a script of its own.
#
# In:  tp (the tickprof checkout, absolute), crate (hashbrown, indexmap,
#      semver or pulldown-cmark), ver (empty: the default version), work
#      (the scratch directory).
#      TP_COPIES=unmarked (optional): the source, workloads and input only,
#      with no rewriter and no marked copies (scripts/after_inlining.sh).
# Out: ver, key (tp as a directory name), logs ($work/$key/logs), src (the
#      published source), rw (the rewriter), the functions workload and
#      make_copy, and the copies' paths: unmarked (shared by every
#      checkout), disabled and marked (per checkout), each made once
#      (a copy with .tp-ready is reused).

case "$crate" in
  hashbrown) def_ver=0.17.1 ;;
  indexmap) def_ver=2.14.2 ;;
  semver) def_ver=1.0.28 ;;
  pulldown-cmark) def_ver=0.12.2 ;;
  *) echo "no workload for crate $crate (hashbrown, indexmap, semver, pulldown-cmark)" >&2; exit 2 ;;
esac
ver=${ver:-$def_ver}
key=$(printf '%s' "$tp" | tr -c 'A-Za-z0-9' '_')
mkdir -p "$work/$key/logs"
logs=$work/$key/logs

# --- 1. the crate's source, via cargo itself --------------------------------
fetch=$work/fetch-$crate-$ver
mkdir -p "$fetch/src"
cat >"$fetch/Cargo.toml" <<EOF
[package]
name = "tp-fetch"
version = "0.0.0"
edition = "2021"
publish = false
[workspace]
[dependencies]
$crate = "=$ver"
EOF
: >"$fetch/src/lib.rs"
(cd "$fetch" && cargo fetch -q)
src=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 2 -type d -name "$crate-$ver" | head -1)
[ -d "$src" ] || { echo "could not find $crate-$ver in cargo's registry" >&2; exit 1; }

# --- 2. the rewriter ----------------------------------------------------------
rw=$work/rewriter
if [ "${TP_COPIES:-all}" != unmarked ]; then
mkdir -p "$rw/src"
cat >"$rw/Cargo.toml" <<'EOF'
[package]
name = "tp-rewriter"
version = "0.0.0"
edition = "2021"
publish = false
[workspace]
[dependencies]
syn = { version = "2", features = ["full", "visit"] }
proc-macro2 = { version = "1", features = ["span-locations"] }
EOF
cat >"$rw/src/main.rs" <<'EOF'
//! Adds `#[::tickprof::profile]` before every fn with a body in every .rs
//! file under a directory, in place, leaving all other text untouched.
//! Skips `const fn` and C-variadic fns, which #[profile] rejects.
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::visit::Visit;

#[derive(Default)]
struct Finder {
    /// (line, column) of each marked fn's first token after its outer attributes.
    at: Vec<(usize, usize)>,
    skipped: usize,
}

impl Finder {
    fn mark(&mut self, vis: Option<&syn::Visibility>, default: Option<Span>, sig: &syn::Signature) {
        if sig.constness.is_some() || sig.variadic.is_some() {
            self.skipped += 1;
            return;
        }
        let first = match vis {
            Some(syn::Visibility::Public(p)) => p.span,
            Some(syn::Visibility::Restricted(r)) => r.pub_token.span,
            _ => default.unwrap_or_else(|| {
                sig.asyncness
                    .map(|t| t.span)
                    .or(sig.unsafety.map(|t| t.span))
                    .or(sig.abi.as_ref().map(|a| a.extern_token.span))
                    .unwrap_or(sig.fn_token.span)
            }),
        };
        let lc = first.start();
        self.at.push((lc.line, lc.column));
    }
}

impl<'a> Visit<'a> for Finder {
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        self.mark(Some(&f.vis), None, &f.sig);
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        self.mark(Some(&f.vis), f.defaultness.map(|d| d.span()), &f.sig);
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'a syn::TraitItemFn) {
        if f.default.is_some() {
            self.mark(None, None, &f.sig);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

fn rewrite(path: &std::path::Path, total: &mut (usize, usize)) {
    let src = std::fs::read_to_string(path).expect("read");
    let file = match syn::parse_file(&src) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("left unmarked (syn: {e}): {}", path.display());
            return;
        }
    };
    let mut finder = Finder::default();
    finder.visit_file(&file);
    let mut line_starts = vec![0usize];
    line_starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
    // proc-macro2 columns count chars: convert to byte offsets.
    let mut offsets: Vec<usize> = finder
        .at
        .iter()
        .map(|&(line, col)| {
            let ls = line_starts[line - 1];
            ls + src[ls..].char_indices().nth(col).map_or(0, |(i, _)| i)
        })
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    let mut out = String::with_capacity(src.len() + offsets.len() * 24);
    let mut last = 0;
    for &o in &offsets {
        out.push_str(&src[last..o]);
        out.push_str("#[::tickprof::profile] ");
        last = o;
    }
    out.push_str(&src[last..]);
    std::fs::write(path, out).expect("write");
    total.0 += offsets.len();
    total.1 += finder.skipped;
}

fn walk(dir: &std::path::Path, total: &mut (usize, usize)) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, total);
        } else if p.extension().is_some_and(|x| x == "rs") {
            rewrite(&p, total);
        }
    }
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: tp-rewriter <dir>");
    let mut total = (0, 0);
    walk(std::path::Path::new(&dir), &mut total);
    println!("marked {} fns; left {} const/variadic fns unmarked", total.0, total.1);
}
EOF
(cd "$rw" && cargo build -q --release)
fi

# --- 3. the copies ------------------------------------------------------------
workload() {
  case "$crate" in
    hashbrown) cat <<'EOF'
//! Release workload: insert, look up, iterate and remove 1M keys, 3 rounds.
use std::hint::black_box;
fn main() {
    let n: u64 = 1 << 20;
    let mut sum = 0u64;
    for round in 0..3u64 {
        let mut m = hashbrown::HashMap::new();
        for i in 0..n {
            m.insert(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ round, i);
        }
        for i in 0..2 * n {
            if let Some(v) = m.get(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ round)) {
                sum = sum.wrapping_add(*v);
            }
        }
        sum = sum.wrapping_add(m.values().copied().sum::<u64>());
        for i in (0..n).step_by(2) {
            m.remove(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ round));
        }
        sum = sum.wrapping_add(m.len() as u64);
    }
    black_box(sum);
}
EOF
    ;;
    indexmap) cat <<'EOF'
//! Release workload: insert, look up and remove 1M keys, 2 rounds.
use std::hint::black_box;
fn main() {
    let n: u64 = 1 << 20;
    let mut sum = 0u64;
    for round in 0..2u64 {
        let mut m = indexmap::IndexMap::new();
        for i in 0..n {
            m.insert(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ round, i);
        }
        for i in 0..2 * n {
            if let Some(v) = m.get(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ round)) {
                sum = sum.wrapping_add(*v);
            }
        }
        for i in (0..n).step_by(2) {
            m.swap_remove(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ round));
        }
        sum = sum.wrapping_add(m.len() as u64);
    }
    black_box(sum);
}
EOF
    ;;
    pulldown-cmark) cat <<'EOF'
//! Release workload: the crate's HTML rendering of a Markdown file
//! (TP_INPUT), with tables, strikethrough, task lists and footnotes on (its
//! binary's -T -S -L -F).
use pulldown_cmark::{html, Options, Parser};
use std::hint::black_box;
fn main() {
    let path = std::env::var("TP_INPUT").expect("TP_INPUT: a Markdown file");
    let text = std::fs::read_to_string(path).expect("TP_INPUT is readable");
    let opts = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut out = String::with_capacity(text.len() * 3 / 2);
    html::push_html(&mut out, Parser::new_ext(&text, opts));
    black_box(out.len());
}
EOF
    ;;
    semver) cat <<'EOF'
//! Release workload: parse and compare 1M versions and requirements.
use std::hint::black_box;
fn main() {
    let mut hits = 0u64;
    for i in 0..1_000_000u64 {
        let v = semver::Version::parse(&format!("{}.{}.{}-alpha.{}", i % 7, i % 13, i % 101, i % 5)).unwrap();
        let r = semver::VersionReq::parse(&format!(">={}.{}, <{}", i % 7, i % 11, i % 7 + 1)).unwrap();
        hits += u64::from(r.matches(&v));
    }
    black_box(hits);
}
EOF
    ;;
  esac
}

# make_copy DIR MODE   (MODE: unmarked | disabled | marked)
make_copy() {
  local dir=$1 mode=$2
  if [ -f "$dir/.tp-ready" ]; then
    # The workload may have changed since the copy was made (copies are
    # shared between checkouts): rewritten when it differs, so that every
    # copy runs this checkout's workload.
    workload >"$dir/.tp-workload.new"
    if [ "$mode" != unmarked ]; then
      mkdir -p "$dir/.tp-cmp" && cp "$dir/.tp-workload.new" "$dir/.tp-cmp/w.rs"
      "$rw/target/release/tp-rewriter" "$dir/.tp-cmp" >/dev/null
      mv "$dir/.tp-cmp/w.rs" "$dir/.tp-workload.new"
      rm -rf "$dir/.tp-cmp"
    fi
    if cmp -s "$dir/.tp-workload.new" "$dir/examples/tp_workload.rs"; then
      rm -f "$dir/.tp-workload.new"
    else
      mv "$dir/.tp-workload.new" "$dir/examples/tp_workload.rs"
    fi
    return
  fi
  rm -rf "$dir"
  cp -r "$src" "$dir"
  chmod -R u+w "$dir"
  mkdir -p "$dir/examples"
  workload >"$dir/examples/tp_workload.rs"
  {
    printf '\n[[example]]\nname = "tp_workload"\npath = "examples/tp_workload.rs"\n'
    case "$mode" in
      disabled) printf '\n[dependencies.tickprof]\npath = "%s"\ndefault-features = false\n' "$tp" ;;
      marked) printf '\n[dependencies.tickprof]\npath = "%s"\n' "$tp" ;;
    esac
    printf '\n[workspace]\n'
  } >>"$dir/Cargo.toml"
  if [ "$mode" != unmarked ]; then
    "$rw/target/release/tp-rewriter" "$dir/src" | tee "$dir/.tp-marked"
    # The workload's main too, so that the report's top-level total is
    # the whole program's (scripts/whole_run.sh compares it with the
    # unmarked run's wall time; perf_compare.py leaves it out).
    "$rw/target/release/tp-rewriter" "$dir/examples" >/dev/null
  fi
  # The published lockfile does not list tickprof's dependencies.
  rm -f "$dir/Cargo.lock"
  touch "$dir/.tp-ready"
}

# pulldown-cmark's input: every Markdown file in cargo's registry, sorted,
# concatenated to at least $TP_INPUT_MB MiB (default 6): deterministic for
# a given registry.
if [ "$crate" = pulldown-cmark ]; then
  export TP_INPUT=${TP_INPUT:-$work/pulldown-input.md}
  if [ ! -s "$TP_INPUT" ]; then
    want=$(( ${TP_INPUT_MB:-6} * 1024 * 1024 ))
    : >"$TP_INPUT"
    files=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -name '*.md' -size -2M | LC_ALL=C sort)
    while [ "$(stat -c %s "$TP_INPUT")" -lt "$want" ]; do
      for f in $files; do cat "$f" >>"$TP_INPUT"; printf '\n' >>"$TP_INPUT"; done
    done
    echo "pulldown-cmark input: $TP_INPUT, $(stat -c %s "$TP_INPUT") bytes from $(echo "$files" | wc -l) Markdown files of the cargo registry" >&2
  fi
fi

unmarked=$work/unmarked-$crate-$ver
disabled=$work/$key/disabled-$crate-$ver
marked=$work/$key/marked-$crate-$ver
make_copy "$unmarked" unmarked
if [ "${TP_COPIES:-all}" != unmarked ]; then
  make_copy "$disabled" disabled
  make_copy "$marked" marked
fi

# perf_runs OUT RUNS FREQ REPEAT BINARY: RUNS runs of `perf record -e
# cpu-clock -F FREQ --call-graph dwarf` of REPEAT back-to-back BINARY
# processes each, written as OUT/perf.I.txt.gz (`perf script --no-inline
# --no-demangle -F comm,ip,sym,symoff,dso`), the logs as OUT/perf.I.log;
# the perf.data files kept with KEEP=1.
perf_runs() {
  local o=$1 n=$2 f=$3 r=$4 bin=$5 i
  for ((i = 0; i < n; i++)); do
    echo "perf run $((i + 1))/$n ($r x workload)" >&2
    perf record -q -m 2048 -e cpu-clock -F "$f" --call-graph dwarf,16384 -o "$o/perf.$i.data" -- \
      sh -c 'i=0; while [ $i -lt "$1" ]; do "$2" || exit 1; i=$((i + 1)); done' sh "$r" "$bin" \
      >"$o/perf.$i.log" 2>&1
    perf script -i "$o/perf.$i.data" --no-inline --no-demangle -F comm,ip,sym,symoff,dso \
      2>>"$o/perf.$i.log" | gzip -1 >"$o/perf.$i.txt.gz"
    [ "${KEEP:-0}" = 1 ] || rm -f "$o/perf.$i.data"
  done
}
