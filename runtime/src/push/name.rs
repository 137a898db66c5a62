//! The application name pushed profiles carry: `TICKPROF_PUSH_NAME`, or
//! the executable's file name held to the same rule; and the `name` query
//! value, `app{labels}`.

use super::{client, Settings};
use crate::config::PushTarget;

/// The application name and, when it had to be mended, a warning line:
/// `TICKPROF_PUSH_NAME` (checked by the settings), else the executable's
/// file name.
pub(super) fn app(settings: &Settings) -> (String, Option<String>) {
    if let Some(name) = &settings.name {
        return (name.clone(), None);
    }
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()));
    default_app(exe, &settings.target)
}

/// The default application name: the executable's file name `exe`
/// checked as `TICKPROF_PUSH_NAME` is, with characters other than
/// letters, digits and `-._/:` (which Pyroscope's `name{labels}` syntax
/// would misread: `svc{x=1}`) each replaced by `_`, and then a warning
/// line saying so; `tickprof` without a name.
fn default_app(exe: Option<String>, target: &PushTarget) -> (String, Option<String>) {
    let exe = exe
        .filter(|f| !f.is_empty())
        .unwrap_or_else(|| "tickprof".to_owned());
    if crate::config::is_app_name(&exe) {
        return (exe, None);
    }
    let mended: String = exe
        .chars()
        .map(|c| if crate::config::app_char(c) { c } else { '_' })
        .collect();
    let warning = format!(
        "tickprof: warning: TICKPROF_PUSH={target}: the executable's file name {} is not a name of letters, digits and -._/:; pushing as {} (TICKPROF_PUSH_NAME sets the name)\n",
        crate::config::quoted(&exe),
        crate::config::quoted(&mended)
    );
    (mended, Some(warning))
}

/// The `name` query value: `app{k=v,…}`.
pub(super) fn query_name(app: &str, labels: &[(String, String)]) -> String {
    let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    client::query_value(&format!("{app}{{{}}}", labels.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_name_is_checked_as_the_setting_is() {
        let target = PushTarget {
            authority: "127.0.0.1:4040".into(),
            prefix: String::new(),
        };
        let app = |exe: Option<&str>| default_app(exe.map(str::to_owned), &target);
        assert_eq!(app(Some("my-svc.v2")), ("my-svc.v2".to_owned(), None));
        assert_eq!(app(None), ("tickprof".to_owned(), None));
        assert_eq!(app(Some("")), ("tickprof".to_owned(), None));
        let (name, warning) = app(Some("svc{x=1}"));
        assert_eq!(name, "svc_x_1_");
        assert_eq!(
            warning.as_deref(),
            Some("tickprof: warning: TICKPROF_PUSH=http://127.0.0.1:4040: the executable's file name \"svc{x=1}\" is not a name of letters, digits and -._/:; pushing as \"svc_x_1_\" (TICKPROF_PUSH_NAME sets the name)\n")
        );
        assert_eq!(app(Some("prog é")).0, "prog__");
        assert_eq!(
            query_name("svc_x_1_", &[("env".into(), "ci".into())]),
            "svc_x_1_%7Benv%3Dci%7D"
        );
    }
}
