//! `TICKPROF_PUSH*` values: the receiver's URL, the application name and
//! the static labels of pushed profiles.

use super::values::Value;

/// Where profiles are pushed (`TICKPROF_PUSH=http://host:port[/prefix]`):
/// `POST {prefix}/ingest` on `host:port`, plain HTTP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushTarget {
    /// `host:port` (the port defaults to 80), resolved when pushing.
    pub authority: String,
    /// The path before `/ingest`, without a trailing `/` (empty: none).
    pub prefix: String,
}

impl std::fmt::Display for PushTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "http://{}{}", self.authority, self.prefix)
    }
}

/// `http://host[:port][/prefix]`.
pub(crate) struct PushUrl;

impl Value for PushUrl {
    type Out = PushTarget;
    fn parse(&self, s: &str) -> Result<PushTarget, String> {
        let s = s.trim();
        if s.starts_with("https://") {
            return Err(
                "is HTTPS, which tickprof does not speak: push to a local relay \
                        (Grafana Alloy's pyroscope.receive_http) over http://"
                    .into(),
            );
        }
        let bad = || "is not a URL like http://127.0.0.1:4040".to_owned();
        let rest = s.strip_prefix("http://").ok_or_else(bad)?;
        let (authority, prefix) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let ok_char = |c: char| c.is_ascii_alphanumeric() || "-._:[]".contains(c);
        if authority.is_empty() || !authority.chars().all(ok_char) {
            return Err(bad());
        }
        let path_char = |c: char| c.is_ascii_alphanumeric() || "-._~/".contains(c);
        if !prefix.chars().all(path_char) {
            return Err("has a path with characters other than letters, digits and -._~/".into());
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (addr, rest) = v6.split_once(']').ok_or_else(bad)?;
                (
                    &authority[..addr.len() + 2],
                    rest.strip_prefix(':').or(rest.is_empty().then_some("80")),
                )
            }
            None => match authority.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, Some("80")),
            },
        };
        let port = port.and_then(|p| p.parse::<u16>().ok()).filter(|&p| p != 0);
        let (Some(port), false) = (port, host.is_empty() || host[1..].contains('[')) else {
            return Err(bad());
        };
        if !host.starts_with('[') && host.contains([':', '[', ']']) {
            return Err(bad());
        }
        let authority = format!("{host}:{port}");
        Ok(PushTarget {
            authority,
            prefix: prefix.trim_end_matches('/').to_owned(),
        })
    }
    fn show(&self, v: &PushTarget) -> Option<String> {
        Some(v.to_string())
    }
}

/// Whether `c` may be in an application name or a label value: what
/// Pyroscope's `name{k=v,…}` syntax leaves unambiguous.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._/:".contains(c)
}

/// An application name (`TICKPROF_PUSH_NAME`): letters, digits, `-._/:`.
pub(crate) struct AppName;

impl Value for AppName {
    type Out = String;
    fn parse(&self, s: &str) -> Result<String, String> {
        let s = s.trim();
        if s.chars().all(plain) {
            Ok(s.to_owned())
        } else {
            Err("is not a name of letters, digits and -._/:".into())
        }
    }
    fn show(&self, v: &String) -> Option<String> {
        Some(v.clone())
    }
}

/// `key=value[,key=value…]`: Prometheus-style label names, values of
/// letters, digits and `-._/:`; at most [`MAX_LABELS`], no name twice.
pub(crate) struct Labels;

/// The most static labels.
pub const MAX_LABELS: usize = 16;

impl Value for Labels {
    type Out = Vec<(String, String)>;
    fn parse(&self, s: &str) -> Result<Self::Out, String> {
        let mut out: Vec<(String, String)> = Vec::new();
        for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((k, v)) = pair.split_once('=') else {
                return Err(format!("has `{}` without `=`", pair.escape_default()));
            };
            let (k, v) = (k.trim(), v.trim());
            let name_ok = k.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !name_ok || v.is_empty() || !v.chars().all(plain) {
                return Err(format!(
                    "has `{}`: want name=value, the name of letters, digits and _, \
                     the value of letters, digits and -._/:",
                    pair.escape_default()
                ));
            }
            if out.iter().any(|(o, _)| o == k) {
                return Err(format!("names `{k}` twice"));
            }
            out.push((k.to_owned(), v.to_owned()));
        }
        if out.len() > MAX_LABELS {
            return Err(format!("has more than {MAX_LABELS} labels"));
        }
        Ok(out)
    }
    fn show(&self, v: &Self::Out) -> Option<String> {
        (!v.is_empty()).then(|| {
            v.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_urls() {
        let t = |s: &str| PushUrl.parse(s).map(|t| (t.authority, t.prefix));
        assert_eq!(
            t("http://127.0.0.1:4040"),
            Ok(("127.0.0.1:4040".into(), "".into()))
        );
        assert_eq!(
            t("http://relay/pyroscope/"),
            Ok(("relay:80".into(), "/pyroscope".into()))
        );
        assert_eq!(t("http://[::1]:4040"), Ok(("[::1]:4040".into(), "".into())));
        assert_eq!(t("http://[::1]"), Ok(("[::1]:80".into(), "".into())));
        for bad in [
            "https://x:4040",
            "x:4040",
            "http://",
            "http://x:0",
            "http://x:99999",
            "http://x:",
            "http://a b",
            "http://x/a?b",
            "http://u@x",
            "http://::1:4040",
        ] {
            assert!(PushUrl.parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn labels() {
        assert_eq!(
            Labels.parse("service_name=api, env=prod"),
            Ok(vec![
                ("service_name".into(), "api".into()),
                ("env".into(), "prod".into())
            ])
        );
        assert_eq!(Labels.parse(" , "), Ok(vec![]));
        for bad in ["a", "1a=b", "a=", "a=b{", "a=b,a=c", "a b=c", "a=b c"] {
            assert!(Labels.parse(bad).is_err(), "{bad}");
        }
        assert!(AppName.parse("my-app.cpu").is_ok());
        assert!(AppName.parse("a{b}").is_err());
    }

    #[test]
    fn a_bad_value_is_one_warning_naming_the_variable_and_the_default() {
        use crate::config::Config;
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let (c, w) = Config::parse(env(&[("TICKPROF_PUSH", "https://p:4040")]));
        assert_eq!(c.push, None);
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("tickprof: warning: TICKPROF_PUSH=\"https://p:4040\" is HTTPS"));
        assert!(
            w[0].ends_with("using the default (unset, no push)"),
            "{}",
            w[0]
        );
        let (c, w) = Config::parse(env(&[
            ("TICKPROF_PUSH", "http://127.0.0.1:4040/p"),
            ("TICKPROF_PUSH_INTERVAL", "0s"),
            ("TICKPROF_PUSH_LABELS", "env=prod"),
        ]));
        assert_eq!(c.push.unwrap().to_string(), "http://127.0.0.1:4040/p");
        assert_eq!(c.push_interval, std::time::Duration::from_secs(15));
        assert_eq!(c.push_labels, [("env".to_owned(), "prod".to_owned())]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("TICKPROF_PUSH_INTERVAL=\"0s\""), "{}", w[0]);
    }
}
