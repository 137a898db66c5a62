//! The known variable names, from the settings table: a `TICKPROF_*`
//! variable in the environment that is none of them (a typo such as
//! `TICKPROF_TOPP`) gets one warning line naming it and the closest known
//! name.

use super::Config;
use std::ffi::OsString;

/// Variables of the `tickprof` commands rather than of the runtime
/// (`cargo tickprof`'s checkout path): set for the command, they reach the
/// program it runs, which must not warn about them.
pub(crate) const COMMANDS: &[&str] = &["TICKPROF_PATH"];

/// The prefix of tickprof's variables (compared in any case: a variable
/// in lower case is a typo too).
const PREFIX: &str = "TICKPROF_";

/// Every name tickprof reads: the settings table's rows, then [`COMMANDS`].
pub(crate) fn known() -> Vec<&'static str> {
    let mut rows = Vec::new();
    Config::rows(&mut rows);
    rows.iter()
        .map(|r| r.var)
        .chain(COMMANDS.iter().copied())
        .collect()
}

/// One warning line for each of `names` that starts with `TICKPROF_` (any
/// case) and is not a known name, in the order given.
pub(crate) fn unknown(names: impl IntoIterator<Item = OsString>) -> Vec<String> {
    let known = known();
    let mut warnings = Vec::new();
    for name in names {
        let name = name.to_string_lossy();
        let upper = name.to_ascii_uppercase();
        if !upper.starts_with(PREFIX) || known.contains(&&*name) {
            continue;
        }
        let shown = super::values::named(&name);
        warnings.push(match closest(&upper, &known) {
            Some(k) => format!(
                "tickprof: warning: {shown} is not a tickprof variable (ignored); did you mean {k}?"
            ),
            None => format!(
                "tickprof: warning: {shown} is not a tickprof variable (ignored); every variable is in tickprof's docs/configuration.md"
            ),
        });
    }
    warnings
}

/// The known name closest to `upper` (a name in upper case), if it is
/// close: at most a third of the part after the prefix (and at least 2)
/// edits away, or one part a prefix of the other (`TICKPROF_OUTPUT`).
/// Ties go to the name earlier in the table.
fn closest<'a>(upper: &str, known: &[&'a str]) -> Option<&'a str> {
    let tail = &upper[PREFIX.len().min(upper.len())..];
    let mut best: Option<(usize, &str)> = None;
    for &k in known {
        let d = distance(upper, k);
        match best {
            Some((b, _)) if b <= d => {}
            _ => best = Some((d, k)),
        }
    }
    let (d, k) = best?;
    let k_tail = k.strip_prefix(PREFIX).unwrap_or(k);
    let prefixed = tail.len() >= 3
        && k_tail.len() >= 3
        && (tail.starts_with(k_tail) || k_tail.starts_with(tail));
    (d <= (tail.len() / 3).max(2) || prefixed).then_some(k)
}

/// The optimal-string-alignment distance of `a` and `b`: insertions,
/// deletions, substitutions and swaps of neighbours, one edit each.
/// Names longer than 64 bytes are compared on their first 64.
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (
        &a.as_bytes()[..a.len().min(64)],
        &b.as_bytes()[..b.len().min(64)],
    );
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * w + j] = if i == 0 || j == 0 {
                i + j
            } else {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut v = (d[(i - 1) * w + j] + 1)
                    .min(d[i * w + j - 1] + 1)
                    .min(d[(i - 1) * w + j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    v = v.min(d[(i - 2) * w + j - 2] + 1);
                }
                v
            };
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warn(names: &[&str]) -> Vec<String> {
        unknown(names.iter().map(OsString::from))
    }

    #[test]
    fn a_typo_gets_one_line_with_the_closest_name() {
        assert_eq!(
            warn(&["TICKPROF_TOPP"]),
            ["tickprof: warning: TICKPROF_TOPP is not a tickprof variable (ignored); did you mean TICKPROF_TOP?"]
        );
        for (typo, meant) in [
            ("TICKPROF_OTU", "TICKPROF_OUT"),
            ("TICKPROF_OUTPUT", "TICKPROF_OUT"),
            ("TICKPROF_PUSH_INTERVALS", "TICKPROF_PUSH_INTERVAL"),
            ("TICKPROF_DUMP_INTERVALL", "TICKPROF_DUMP_INTERVAL"),
            ("tickprof_top", "TICKPROF_TOP"),
            ("TICKPROF_COMPENSTE", "TICKPROF_COMPENSATE"),
            ("TICKPROF_LOG_FILTERS", "TICKPROF_LOG_FILTER"),
        ] {
            let w = warn(&[typo]);
            assert_eq!(w.len(), 1, "{typo}");
            assert!(
                w[0].ends_with(&format!("did you mean {meant}?")),
                "{typo}: {}",
                w[0]
            );
        }
        let far = warn(&["TICKPROF_ZZZZZZZZZZZZ"]);
        assert_eq!(far.len(), 1);
        assert!(far[0].ends_with("every variable is in tickprof's docs/configuration.md"));
    }

    #[test]
    fn every_variable_of_the_table_and_other_names_pass() {
        let mut names = known();
        names.extend([
            "PATH",
            "HOME",
            "TICKPROF",
            "TICKPROFILE",
            "MY_TICKPROF_X",
            "TPTEST_CHILD",
        ]);
        assert_eq!(warn(&names), Vec::<String>::new());
    }

    #[test]
    fn a_long_name_is_cut_in_its_warning() {
        let long = format!("TICKPROF_{}", "X".repeat(100_000));
        let w = warn(&[&long]);
        assert_eq!(w.len(), 1);
        assert!(w[0].len() < 300, "{}", w[0].len());
    }
}
