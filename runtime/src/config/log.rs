//! The trace log's settings, `TICKPROF_LOG` and `TICKPROF_LOG_*`.

use crate::log::{parse_globs, LogOptions};

/// `TICKPROF_LOG`: `stderr`, or a path (`%p` and `%e` expand as in
/// `TICKPROF_OUT`); unset, empty, `0` or `off`: no log.
pub(super) fn target(get: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let v = get("TICKPROF_LOG")?;
    let v = v.trim();
    match v.to_ascii_lowercase().as_str() {
        "" | "0" | "off" | "false" | "no" => None,
        "stderr" | "1" | "on" => Some("stderr".to_owned()),
        _ => Some(v.to_owned()),
    }
}

/// Parses the `TICKPROF_LOG_*` variables through `get`; one warning line
/// per bad value (which is then ignored: its default applies).
pub(super) fn parse(get: &dyn Fn(&str) -> Option<String>) -> (LogOptions, Vec<String>) {
    let mut o = LogOptions::default();
    let mut warnings = Vec::new();
    let mut warn = |var: &str, value: &str, why: &str, default: &str| {
        warnings.push(format!(
            "tickprof: warning: {var}={value:?} {why}; using the default ({default})"
        ));
    };
    for (var, list) in [
        ("TICKPROF_LOG_FILTER", &mut o.filter),
        ("TICKPROF_LOG_NOTRACE", &mut o.notrace),
    ] {
        if let Some(v) = get(var) {
            match parse_globs(&v) {
                Ok(globs) => *list = globs,
                Err(why) => warn(var, &v, &why, "none"),
            }
        }
    }
    if let Some(v) = get("TICKPROF_LOG_DEPTH") {
        match v.trim().parse::<usize>() {
            Ok(n) => o.depth = n,
            Err(_) => warn(
                "TICKPROF_LOG_DEPTH",
                &v,
                "is not a whole number",
                "0, no limit",
            ),
        }
    }
    if let Some(v) = get("TICKPROF_LOG_THRESHOLD") {
        match super::parse_duration(&v) {
            Some(d) => o.threshold_ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            None => warn(
                "TICKPROF_LOG_THRESHOLD",
                &v,
                "is not a duration like 5us, 2ms or 1s",
                "0, every call",
            ),
        }
    }
    if let Some(v) = get("TICKPROF_LOG_TID") {
        let ids: Result<Vec<u64>, _> = v
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse::<u64>)
            .collect();
        match ids {
            Ok(ids) => o.tids = ids,
            Err(_) => warn(
                "TICKPROF_LOG_TID",
                &v,
                "is not a comma-separated list of thread numbers",
                "every thread",
            ),
        }
    }
    (o, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse_vars(vars: &[(&str, &str)]) -> (LogOptions, Vec<String>) {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        parse(&|k| map.get(k).cloned())
    }

    #[test]
    fn options_parse_and_each_bad_value_warns_once_naming_the_variable() {
        let (o, w) = parse_vars(&[
            ("TICKPROF_LOG_FILTER", "app::*, main"),
            ("TICKPROF_LOG_NOTRACE", "noisy"),
            ("TICKPROF_LOG_DEPTH", "3"),
            ("TICKPROF_LOG_THRESHOLD", "5us"),
            ("TICKPROF_LOG_TID", "1,3"),
        ]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(o.filter, ["app::*", "main"]);
        assert_eq!(o.notrace, ["noisy"]);
        assert_eq!(
            (o.depth, o.threshold_ns, o.tids.clone()),
            (3, 5000, vec![1, 3])
        );
        for (var, bad) in [
            ("TICKPROF_LOG_FILTER", "a,,b"),
            ("TICKPROF_LOG_FILTER", "[ab]"),
            ("TICKPROF_LOG_NOTRACE", "x{y}"),
            ("TICKPROF_LOG_DEPTH", "-1"),
            ("TICKPROF_LOG_THRESHOLD", "5"),
            ("TICKPROF_LOG_TID", "main"),
        ] {
            let (o, w) = parse_vars(&[(var, bad)]);
            assert_eq!(w.len(), 1, "{var}: {w:?}");
            assert!(w[0].contains(var) && w[0].contains("default"), "{}", w[0]);
            assert_eq!(o, LogOptions::default());
        }
    }
}
