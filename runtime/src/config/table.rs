//! The `settings!` macro: one row per environment variable (variable,
//! field, parser, default, help) generates the struct's fields and their
//! docs, its `Default`, the reader with its warnings, and the docs rows.

use super::values::Value;
use std::ffi::OsString;

/// One row of the docs table.
pub(crate) struct Row {
    /// The variable.
    pub var: &'static str,
    /// What it takes and does (markdown).
    pub help: &'static str,
    /// The default, as the docs show it (markdown).
    pub default: String,
}

/// The default as text: the value as its parser shows it, then the note;
/// `unset` for a value that shows as nothing.
fn default_text<P: Value>(parser: &P, default: &P::Out, note: &str, code: bool) -> String {
    let value = match parser.show(default) {
        Some(v) if code => format!("`{v}`"),
        Some(v) => v,
        None => "unset".to_owned(),
    };
    match (note.is_empty(), code) {
        (true, _) => value,
        (false, true) => format!("{value} ({note})"),
        (false, false) => format!("{value}, {note}"),
    }
}

/// The docs table's default cell of a row.
pub(super) fn doc_default<P: Value>(parser: &P, default: &P::Out, note: &str) -> String {
    default_text(parser, default, note, true)
}

/// Reads `var` through `get` with `parser`. Unset, or set to blanks:
/// `None` (the default stays). A bad value: `None` and one warning line
/// naming the variable, the value and the default.
pub(super) fn read<P: Value>(
    get: &dyn Fn(&str) -> Option<OsString>,
    var: &str,
    parser: &P,
    default: &P::Out,
    note: &str,
    warnings: &mut Vec<String>,
) -> Option<P::Out> {
    let raw = get(var)?;
    let value = raw.to_string_lossy();
    if value.trim().is_empty() {
        return None;
    }
    match parser.parse_os(&raw) {
        Ok(v) => Some(v),
        Err(why) => {
            let default = default_text(parser, default, note, false);
            let value = super::values::quoted(&value);
            warnings.push(format!(
                "tickprof: warning: {var}={value} {why}; using the default ({default})"
            ));
            None
        }
    }
}

/// Declares a settings struct from its table. Each row:
///
/// ```text
/// /// Field docs.
/// field: Type { var: "TICKPROF_X", parse: PARSER, default: EXPR,
///               [note: "shown after the default",] help: "docs table text" },
/// ```
///
/// then optionally `; /// docs  field: Nested` for a struct declared the
/// same way, whose rows follow. `PARSER` is a [`Value`] whose `Out` is
/// `Type`.
macro_rules! settings {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident: $ty:ty {
                    var: $var:literal,
                    parse: $parser:expr,
                    default: $default:expr,
                    $(note: $note:literal,)?
                    help: $help:literal $(,)?
                }
            ),* $(,)?
            $(
                ;
                $(#[$nmeta:meta])*
                $nfield:ident: $nty:ty
            )?
        }
    ) => {
        $(#[$meta])*
        #[non_exhaustive]
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            $(
                $(#[$fmeta])*
                #[doc = ""]
                #[doc = concat!("Set by `", $var, "`.")]
                pub $field: $ty,
            )*
            $(
                $(#[$nmeta])*
                pub $nfield: $nty,
            )?
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $($field: $default,)*
                    $($nfield: <$nty>::default(),)?
                }
            }
        }

        impl $name {
            /// Reads each row's variable through `get` into `self`; one
            /// warning line per bad value, which leaves the field as it was.
            pub(crate) fn read(
                &mut self,
                get: &dyn Fn(&str) -> Option<::std::ffi::OsString>,
                warnings: &mut Vec<String>,
            ) {
                let defaults = Self::default();
                $(
                    if let Some(v) = $crate::config::table::read(
                        get,
                        $var,
                        &$parser,
                        &defaults.$field,
                        settings!(@note $($note)?),
                        warnings,
                    ) {
                        self.$field = v;
                    }
                )*
                $(self.$nfield.read(get, warnings);)?
            }

            /// Appends the docs table's rows, in table order.
            pub(crate) fn rows(rows: &mut Vec<$crate::config::table::Row>) {
                let defaults = Self::default();
                $(
                    rows.push($crate::config::table::Row {
                        var: $var,
                        help: $help,
                        default: $crate::config::table::doc_default(
                            &$parser,
                            &defaults.$field,
                            settings!(@note $($note)?),
                        ),
                    });
                )*
                $(<$nty>::rows(rows);)?
            }
        }
    };
    (@note) => {
        ""
    };
    (@note $note:literal) => {
        $note
    };
}
pub(super) use settings;
