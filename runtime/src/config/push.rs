//! `TICKPROF_PUSH*` values: the receiver's URL, the application name and
//! the static labels of pushed profiles.

use super::values::{quoted, within, Value};

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

/// `http://host[:port][/prefix]`, the scheme in any case. The host is an
/// IPv4 address, an IPv6 address in brackets, or a name of dot-separated
/// labels (letters, digits, `-`, `_`; 63 bytes each, 253 in all).
pub(crate) struct PushUrl;

impl Value for PushUrl {
    type Out = PushTarget;
    fn parse(&self, s: &str) -> Result<PushTarget, String> {
        let s = s.trim();
        let scheme = |name: &str| {
            s.get(..name.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(name))
        };
        if scheme("https://") {
            return Err(
                "is HTTPS, which tickprof does not speak: push to a local relay \
                        (Grafana Alloy's pyroscope.receive_http) over http://"
                    .into(),
            );
        }
        let bad = || "is not a URL like http://127.0.0.1:4040".to_owned();
        if !scheme("http://") {
            return Err(bad());
        }
        let rest = &s["http://".len()..];
        let (authority, prefix) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let path_char = |c: char| c.is_ascii_alphanumeric() || "-._~/".contains(c);
        if !prefix.chars().all(path_char) {
            return Err("has a path with characters other than letters, digits and -._~/".into());
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (addr, rest) = v6.split_once(']').ok_or_else(bad)?;
                if addr.parse::<std::net::Ipv6Addr>().is_err() {
                    return Err(bad());
                }
                (&authority[..addr.len() + 2], port_of(rest)?)
            }
            None => {
                let (host, rest) =
                    authority.split_at(authority.find(':').unwrap_or(authority.len()));
                if !is_host_name(host) {
                    return Err(bad());
                }
                (host, port_of(rest)?)
            }
        };
        Ok(PushTarget {
            authority: format!("{host}:{port}"),
            prefix: prefix.trim_end_matches('/').to_owned(),
        })
    }
    fn show(&self, v: &PushTarget) -> Option<String> {
        Some(v.to_string())
    }
}

/// The port after the host: nothing (80) or `:N` with N from 1 to 65535.
fn port_of(rest: &str) -> Result<u16, String> {
    let port = match rest.strip_prefix(':') {
        None if rest.is_empty() => Some(80),
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok(),
        _ => None,
    };
    port.filter(|&p| p != 0)
        .ok_or_else(|| "is not a URL like http://127.0.0.1:4040 (the port: 1 to 65535)".to_owned())
}

/// Whether `host` is an IPv4 address or a host name: dot-separated labels
/// of letters, digits, `-` and `_`, none empty (a final dot aside) or
/// starting or ending with `-`, 63 bytes a label and 253 in all.
fn is_host_name(host: &str) -> bool {
    let name = host.strip_suffix('.').unwrap_or(host);
    let label_ok = |l: &str| {
        (1..=63).contains(&l.len())
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    !name.is_empty() && name.len() <= 253 && name.split('.').all(label_ok)
}

/// Whether `c` may be in an application name or a label value: what
/// Pyroscope's `name{k=v,…}` syntax leaves unambiguous.
pub(crate) fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._/:".contains(c)
}

/// Whether `s` is a valid application name (`TICKPROF_PUSH_NAME`): not
/// empty, of letters, digits and `-._/:` only.
pub(crate) fn is_app_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(plain)
}

/// An application name (`TICKPROF_PUSH_NAME`): letters, digits, `-._/:`.
pub(crate) struct AppName;

impl Value for AppName {
    type Out = String;
    fn parse(&self, s: &str) -> Result<String, String> {
        let s = s.trim();
        if is_app_name(s) {
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
                return Err(format!("has no `=`{}", within(pair, s)));
            };
            let (k, v) = (k.trim(), v.trim());
            let name_ok = k.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !name_ok || v.is_empty() || !v.chars().all(plain) {
                return Err(format!(
                    "is not name=value{}: the name of letters, digits and _, \
                     the value of letters, digits and -._/:",
                    within(pair, s)
                ));
            }
            if out.iter().any(|(o, _)| o == k) {
                return Err(format!("names {} twice", quoted(k)));
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
        assert_eq!(
            t("HTTP://Relay.example:4040/P"),
            Ok(("Relay.example:4040".into(), "/P".into()))
        );
        assert_eq!(t(" Http://x_y. "), Ok(("x_y.:80".into(), "".into())));
        assert!(PushUrl
            .parse("HTTPS://x")
            .unwrap_err()
            .starts_with("is HTTPS"));
        for bad in [
            "http://[]:4040",
            "http://[]",
            "http://[:::]:4040",
            "http://[1.2.3.4]:4040",
            "http://[::1]x",
            "http://[::1]:",
            "http://..:4040",
            "http://.x:4040",
            "http://-x:4040",
            "http://x-:4040",
            "http://x..y:4040",
            "http://x:+80",
            "http://x:4040:1",
            "ftp://x",
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
    fn host_names() {
        let long_label = "a".repeat(64);
        let long_name = vec!["a".repeat(63); 5].join(".");
        for (host, ok) in [
            ("127.0.0.1", true),
            ("pyroscope", true),
            ("pyro-scope.svc_1.cluster.local.", true),
            (&long_label[1..], true),
            (&long_label, false),
            (&long_name[..253], true),
            (&long_name[..255], false),
            ("", false),
            (".", false),
            ("a b", false),
            ("a@b", false),
        ] {
            assert_eq!(is_host_name(host), ok, "{host}");
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
