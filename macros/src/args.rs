//! Arguments of `#[profile(...)]`: parsed into raw syntax, then validated.

use crate::push_error;
use proc_macro2::TokenStream as TokenStream2;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Error, Expr, Ident, Lit, LitStr, Path, Result, Token};

/// Valid option keys, as listed in error messages.
const VALID_KEYS: &str = "`name = \"...\"`, `crate = path`, `fail`, `skip`, `always` and `once`";

/// Validated arguments of `#[profile(...)]`.
#[derive(Default)]
pub(crate) struct Args {
    /// `name = "..."`: the report name, non-empty.
    pub(crate) name: Option<LitStr>,
    /// `crate = path`: path of the `tickprof` crate.
    pub(crate) krate: Option<Path>,
    /// `fail`: a failpoint's `return` makes the function return
    /// `Err(Injected.into())` (the key, for error spans).
    pub(crate) fail: Option<Ident>,
    /// `skip`: on a function or container inside a marked container,
    /// leave it unmarked (the key, for error spans).
    pub(crate) skip: Option<Ident>,
    /// `always`: the function is in a build that records (`cargo
    /// tickprof`): one body under a guard, no plain copy for the off
    /// path (the key, for error spans).
    pub(crate) always: Option<Ident>,
    /// `once`: the body emitted once, in the function, the guard's entry
    /// and exit inline around it (the key, for error spans).
    pub(crate) once: Option<Ident>,
}

/// Syntax of `#[profile(...)]`: comma-separated `key` or `key = value`,
/// not yet validated.
struct RawArgs {
    /// The entries in the order written.
    entries: Punctuated<RawArg, Token![,]>,
}

/// One `key = value` (or bare `key`) entry, not yet validated.
struct RawArg {
    /// The key; any identifier or keyword (`crate`).
    key: Ident,
    /// `= value`, if written.
    value: Option<(Token![=], Expr)>,
}

impl Parse for RawArgs {
    fn parse(input: ParseStream) -> Result<Self> {
        let mut entries = Punctuated::new();
        while !input.is_empty() {
            entries.push_value(input.parse()?);
            if input.is_empty() {
                break;
            }
            if !input.peek(Token![,]) {
                return Err(input.error("expected `,` between options"));
            }
            entries.push_punct(input.parse()?);
        }
        Ok(Self { entries })
    }
}

impl Parse for RawArg {
    fn parse(input: ParseStream) -> Result<Self> {
        if input.peek(LitStr) {
            let lit: LitStr = input.parse()?;
            return Err(Error::new(
                lit.span(),
                format!(
                    "a bare string is not an option; write `name = {}` to name the call site",
                    lit.to_token_stream()
                ),
            ));
        }
        if !input.peek(Ident::peek_any) {
            return Err(input.error(format!(
                "expected an option of the form `key = value`; valid options are {VALID_KEYS}"
            )));
        }
        let key = input.call(Ident::parse_any)?;
        let value = if input.peek(Token![=]) {
            let eq: Token![=] = input.parse()?;
            if input.is_empty() || input.peek(Token![,]) {
                return Err(Error::new(
                    eq.span,
                    format!("expected a value after `{key} =`"),
                ));
            }
            Some((eq, input.parse()?))
        } else {
            None
        };
        Ok(Self { key, value })
    }
}

/// Parses and validates the attribute arguments.
pub(crate) fn parse_args(tokens: TokenStream2) -> Result<Args> {
    validate(syn::parse2(tokens)?)
}

/// Checks keys and values, turning the raw syntax into [`Args`].
///
/// Every problem is reported, combined into one [`Error`].
fn validate(raw: RawArgs) -> Result<Args> {
    let mut args = Args::default();
    let mut errors = None;
    // Keys already given, valid or not, so a repeat is always a duplicate.
    let (mut seen_name, mut seen_crate) = (false, false);
    let (mut seen_fail, mut seen_skip, mut seen_always) = (false, false, false);
    let mut seen_once = false;
    for RawArg { key, value } in raw.entries {
        let key_name = key.unraw().to_string();
        let checked = match key_name.as_str() {
            "name" => check_name(&key, value, std::mem::replace(&mut seen_name, true))
                .map(|lit| args.name = Some(lit)),
            "crate" => check_crate(&key, value, std::mem::replace(&mut seen_crate, true))
                .map(|path| args.krate = Some(path)),
            "fail" => check_flag(&key, value, std::mem::replace(&mut seen_fail, true))
                .map(|()| args.fail = Some(key.clone())),
            "skip" => check_flag(&key, value, std::mem::replace(&mut seen_skip, true))
                .map(|()| args.skip = Some(key.clone())),
            "always" => check_flag(&key, value, std::mem::replace(&mut seen_always, true))
                .map(|()| args.always = Some(key.clone())),
            "once" => check_flag(&key, value, std::mem::replace(&mut seen_once, true))
                .map(|()| args.once = Some(key.clone())),
            _ => Err(Error::new(
                key.span(),
                format!("unknown option `{key}`; valid options are {VALID_KEYS}"),
            )),
        };
        if let Err(error) = checked {
            push_error(&mut errors, error);
        }
    }
    errors.map_or(Ok(args), Err)
}

/// Validates a bare flag (`fail`, `skip`, `always`, `once`): no value.
fn check_flag(key: &Ident, value: Option<(Token![=], Expr)>, seen: bool) -> Result<()> {
    if seen {
        return Err(duplicate(key));
    }
    match value {
        None => Ok(()),
        Some((eq, _)) => Err(Error::new(
            eq.span,
            format!("`{key}` takes no value; write `#[profile({key})]`"),
        )),
    }
}

/// Error for a key given twice.
fn duplicate(key: &Ident) -> Error {
    Error::new(
        key.span(),
        format!("`{key}` is given more than once; keep only one"),
    )
}

/// Validates `name = "..."`.
fn check_name(key: &Ident, value: Option<(Token![=], Expr)>, seen: bool) -> Result<LitStr> {
    if seen {
        return Err(duplicate(key));
    }
    let Some((_, value)) = value else {
        return Err(Error::new(
            key.span(),
            "`name` needs a value: write `name = \"...\"`, or remove it to use the function's path",
        ));
    };
    let value = strip_groups(value);
    let Expr::Lit(syn::ExprLit {
        lit: Lit::Str(lit), ..
    }) = value
    else {
        let instead = match &value {
            Expr::Lit(syn::ExprLit {
                lit: lit @ (Lit::Int(_) | Lit::Float(_) | Lit::Bool(_)),
                ..
            }) => format!("name = \"{}\"", lit.to_token_stream()),
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                format!("name = \"{}\"", p.to_token_stream())
            }
            _ => "name = \"...\"".to_owned(),
        };
        return Err(Error::new_spanned(
            value,
            format!("`name` must be a string literal: write `{instead}`"),
        ));
    };
    if lit.value().trim().is_empty() {
        return Err(Error::new(
            lit.span(),
            "`name` must not be empty: write a label such as `name = \"parse\"`, \
             or remove `name` to use the function's path",
        ));
    }
    Ok(lit)
}

/// Validates `crate = path`.
fn check_crate(key: &Ident, value: Option<(Token![=], Expr)>, seen: bool) -> Result<Path> {
    if seen {
        return Err(duplicate(key));
    }
    let Some((_, value)) = value else {
        return Err(Error::new(
            key.span(),
            "`crate` needs a value: write `crate = path::to::tickprof`",
        ));
    };
    match strip_groups(value) {
        Expr::Path(p)
            if p.qself.is_none()
                && p.attrs.is_empty()
                && p.path.segments.iter().all(|s| s.arguments.is_none()) =>
        {
            Ok(p.path)
        }
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => {
            let instead = syn::parse_str::<Path>(&s.value())
                .map_or_else(|_| "path::to::tickprof".to_owned(), |_| s.value());
            Err(Error::new(
                s.span(),
                format!("`crate` takes a path, not a string: write `crate = {instead}`"),
            ))
        }
        other => Err(Error::new_spanned(
            other,
            "`crate` takes a path: write `crate = path::to::tickprof`",
        )),
    }
}

/// Removes invisible groups (from `macro_rules!` fragments) around a value.
fn strip_groups(mut value: Expr) -> Expr {
    while let Expr::Group(group) = value {
        value = *group.expr;
    }
    value
}

/// Input of `scope_name!`: the calling macro's name, then its argument.
struct ScopeName {
    /// `prof_scope` or `prof_guard`, for the message.
    caller: Ident,
    /// The argument, any expression (a `literal` fragment, possibly `-1`).
    value: Expr,
}

impl Parse for ScopeName {
    fn parse(input: ParseStream) -> Result<Self> {
        let caller = input.parse()?;
        let _: Token![,] = input.parse()?;
        let value = input.parse()?;
        Ok(Self { caller, value })
    }
}

/// Checks the name given to `prof_scope!`/`prof_guard!`: a non-empty string
/// literal.
pub(crate) fn scope_name(tokens: TokenStream2) -> Result<LitStr> {
    let ScopeName { caller, value } = syn::parse2(tokens)?;
    let value = strip_groups(value);
    let instead = match &value {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) if lit.value().trim().is_empty() => {
            return Err(Error::new(
                lit.span(),
                format!(
                    "the name must not be empty: write a label such as `{caller}!(\"step\")`, \
                     or `{caller}!()` to name it after the line"
                ),
            ));
        }
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => return Ok(lit.clone()),
        Expr::Lit(syn::ExprLit {
            lit: Lit::ByteStr(lit),
            ..
        }) => String::from_utf8(lit.value())
            .map_or_else(|_| "...".to_owned(), |text| format!("{text:?}")),
        Expr::Lit(syn::ExprLit {
            lit: lit @ (Lit::Int(_) | Lit::Float(_) | Lit::Bool(_)),
            ..
        }) => format!("\"{}\"", lit.to_token_stream()),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Char(c), ..
        }) => format!("{:?}", c.value().to_string()),
        _ => "\"...\"".to_owned(),
    };
    Err(Error::new_spanned(
        value,
        format!("{caller}! takes a string literal as the name: write `{caller}!({instead})`"),
    ))
}

#[cfg(test)]
mod tests;
