//! `docs/configuration.md` holds the settings table that the runtime's
//! settings table generates: a variable, default or help text added or
//! changed in code without its docs row fails here. `TICKPROF_BLESS=1`
//! rewrites the page's table instead.

const PAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/configuration.md");
const BEGIN: &str = "<!-- settings:begin -->\n";
const END: &str = "<!-- settings:end -->";

#[test]
fn the_configuration_page_holds_the_generated_settings_table() {
    let page = std::fs::read_to_string(PAGE).expect("docs/configuration.md is readable");
    let (head, rest) = page
        .split_once(BEGIN)
        .expect("docs/configuration.md has a <!-- settings:begin --> line");
    let (table, tail) = rest
        .split_once(END)
        .expect("docs/configuration.md has a <!-- settings:end --> line");
    let generated = tickprof::__private::settings_markdown();
    if table == generated {
        return;
    }
    if std::env::var_os("TICKPROF_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(PAGE, format!("{head}{BEGIN}{generated}{END}{tail}"))
            .expect("docs/configuration.md is writable");
        return;
    }
    panic!(
        "docs/configuration.md's settings table differs from the generated one \
         (rerun with TICKPROF_BLESS=1 to rewrite it). Generated:\n{generated}"
    );
}
