use super::*;
use quote::quote;

/// Parses and validates, returning the error messages on failure.
fn args(tokens: TokenStream2) -> std::result::Result<Args, Vec<String>> {
    parse_args(tokens).map_err(|e| e.into_iter().map(|e| e.to_string()).collect())
}

fn errors(tokens: TokenStream2) -> Vec<String> {
    match args(tokens) {
        Ok(_) => panic!("expected an error"),
        Err(messages) => messages,
    }
}

#[test]
fn empty_args() {
    let parsed = args(quote!()).unwrap();
    assert!(parsed.name.is_none());
    assert!(parsed.krate.is_none());
}

#[test]
fn name_and_crate() {
    let parsed = args(quote!(name = "tokenize", crate = my::tick,)).unwrap();
    assert_eq!(parsed.name.unwrap().value(), "tokenize");
    let krate = parsed.krate.unwrap();
    assert_eq!(quote!(#krate).to_string(), quote!(my::tick).to_string());
}

#[test]
fn crate_with_leading_colons_and_raw_key() {
    let parsed = args(quote!(crate = ::tickprof, r#name = "x")).unwrap();
    let krate = parsed.krate.unwrap();
    assert!(krate.leading_colon.is_some());
    assert_eq!(parsed.name.unwrap().value(), "x");
}

#[test]
fn raw_string_name() {
    let parsed: Args = syn::parse_str::<RawArgs>("name = r\"a 'b'\"")
        .and_then(validate)
        .unwrap();
    assert_eq!(parsed.name.unwrap().value(), "a 'b'");
}

#[test]
fn always_is_a_flag() {
    let parsed = args(quote!(always, crate = ::tp)).unwrap();
    assert!(parsed.always.is_some());
    assert_eq!(
        errors(quote!(always = true)),
        ["`always` takes no value; write `#[profile(always)]`"]
    );
    assert_eq!(
        errors(quote!(always, always)),
        ["`always` is given more than once; keep only one"]
    );
}

#[test]
fn unknown_key() {
    let messages = errors(quote!(label = "x"));
    assert_eq!(
        messages,
        ["unknown option `label`; valid options are `name = \"...\"`, `crate = path`, `fail`, `skip`, `always` and `once`"]
    );
}

#[test]
fn duplicate_keys() {
    assert_eq!(
        errors(quote!(name = "a", name = "b")),
        ["`name` is given more than once; keep only one"]
    );
    assert_eq!(
        errors(quote!(crate = a, crate = b)),
        ["`crate` is given more than once; keep only one"]
    );
    // A repeat of an invalid entry is still a duplicate.
    assert_eq!(
        errors(quote!(name = 1, name = "b")),
        [
            "`name` must be a string literal: write `name = \"1\"`",
            "`name` is given more than once; keep only one"
        ]
    );
}

#[test]
fn name_not_string() {
    assert_eq!(
        errors(quote!(name = 5)),
        ["`name` must be a string literal: write `name = \"5\"`"]
    );
    assert_eq!(
        errors(quote!(name = parse)),
        ["`name` must be a string literal: write `name = \"parse\"`"]
    );
    assert_eq!(
        errors(quote!(name = concat!("a", "b"))),
        ["`name` must be a string literal: write `name = \"...\"`"]
    );
}

#[test]
fn name_empty_or_blank() {
    for tokens in [quote!(name = ""), quote!(name = "  ")] {
        let messages = errors(tokens);
        assert_eq!(messages.len(), 1);
        assert!(
            messages[0].starts_with("`name` must not be empty"),
            "{messages:?}"
        );
    }
}

#[test]
fn key_without_value() {
    assert_eq!(
        errors(quote!(name)),
        ["`name` needs a value: write `name = \"...\"`, or remove it to use the function's path"]
    );
    assert_eq!(
        errors(quote!(crate)),
        ["`crate` needs a value: write `crate = path::to::tickprof`"]
    );
    assert_eq!(errors(quote!(name =)), ["expected a value after `name =`"]);
}

#[test]
fn crate_not_a_path() {
    assert_eq!(
        errors(quote!(crate = "tickprof")),
        ["`crate` takes a path, not a string: write `crate = tickprof`"]
    );
    assert_eq!(
        errors(quote!(crate = "not a path")),
        ["`crate` takes a path, not a string: write `crate = path::to::tickprof`"]
    );
    assert_eq!(
        errors(quote!(crate = a::<u8>::b)),
        ["`crate` takes a path: write `crate = path::to::tickprof`"]
    );
    assert_eq!(
        errors(quote!(crate = 1 + 2)),
        ["`crate` takes a path: write `crate = path::to::tickprof`"]
    );
}

#[test]
fn bare_literal_and_garbage() {
    assert_eq!(
        errors(quote!("x")),
        ["a bare string is not an option; write `name = \"x\"` to name the call site"]
    );
    assert_eq!(
        errors(quote!(5)),
        ["expected an option of the form `key = value`; valid options are `name = \"...\"`, `crate = path`, `fail`, `skip`, `always` and `once`"]
    );
    assert_eq!(
        errors(quote!(name = "a" "b")),
        ["expected `,` between options"]
    );
}

fn scope_error(tokens: TokenStream2) -> String {
    match scope_name(tokens) {
        Ok(lit) => panic!("accepted {}", lit.value()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn scope_names() {
    assert_eq!(
        scope_name(quote!(prof_scope, "step")).unwrap().value(),
        "step"
    );
    assert_eq!(
        scope_error(quote!(prof_scope, 42)),
        "prof_scope! takes a string literal as the name: write `prof_scope!(\"42\")`"
    );
    assert_eq!(
        scope_error(quote!(prof_guard, b"bytes")),
        "prof_guard! takes a string literal as the name: write `prof_guard!(\"bytes\")`"
    );
    assert_eq!(
        scope_error(quote!(prof_scope, 'c')),
        "prof_scope! takes a string literal as the name: write `prof_scope!(\"c\")`"
    );
    assert_eq!(
        scope_error(quote!(prof_scope, -1)),
        "prof_scope! takes a string literal as the name: write `prof_scope!(\"...\")`"
    );
    assert!(scope_error(quote!(prof_guard, " ")).starts_with("the name must not be empty"));
}

#[test]
fn errors_are_combined() {
    let messages = errors(quote!(foo = 1, name = 3, name = "b", crate, crate = ""));
    assert_eq!(messages.len(), 5, "{messages:?}");
    assert!(messages[0].starts_with("unknown option `foo`"));
    assert!(messages[1].starts_with("`name` must be a string literal"));
    assert!(messages[2].starts_with("`name` is given more than once"));
    assert!(messages[3].starts_with("`crate` needs a value"));
    assert!(messages[4].starts_with("`crate` is given more than once"));
}
