//! The sites' latency percentiles (`p50_ns`, `p90_ns`, `p99_ns`) of a
//! saved report, read from its JSON text only when a percentile is
//! compared or gated (the report's other figures come from the runtime's
//! reader).

use std::collections::HashMap;

/// The JSON fields of the percentiles, in [`crate::diff::Figures::pct`]
/// order.
pub const FIELDS: [&str; 3] = ["p50_ns", "p90_ns", "p99_ns"];

/// Each site's p50, p90, p99 by name.
pub type Sites = HashMap<String, [Option<f64>; 3]>;

/// Each site's percentiles by name (the first site of a name, as the
/// diff matches them). `Err` when no site carries `field` (a report
/// written without latency histograms): one line saying so.
pub fn read(text: &str, field: &str) -> Result<Sites, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let sites = v["sites"].as_array().map_or(&[][..], Vec::as_slice);
    let mut out = HashMap::with_capacity(sites.len());
    let mut any = false;
    for s in sites {
        let Some(name) = s["name"].as_str() else {
            continue;
        };
        let pct = FIELDS.map(|f| s[f].as_f64());
        any |= s[field].as_f64().is_some();
        out.entry(name.to_owned()).or_insert(pct);
    }
    if any || sites.is_empty() {
        Ok(out)
    } else {
        Err(format!(
            "no site has `{field}`: a report without latency percentiles \
             (written before they were added); compare it on total, self or mean"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::read;

    #[test]
    fn percentiles_are_read_or_missing_is_said() {
        let t = r#"{"sites": [{"name": "a", "p50_ns": 10, "p90_ns": 20.5, "p99_ns": 30},
                              {"name": "b"}, {"name": "a", "p99_ns": 1}]}"#;
        let p = read(t, "p99_ns").unwrap();
        assert_eq!(p["a"], [Some(10.0), Some(20.5), Some(30.0)]);
        assert_eq!(p["b"], [None; 3]);
        let old = r#"{"sites": [{"name": "a", "total_ns": 5}]}"#;
        assert!(read(old, "p99_ns")
            .unwrap_err()
            .contains("no site has `p99_ns`"));
    }
}
