//! `docs/configuration.md` holds the settings table that the runtime's
//! settings table generates: a variable, default or help text added or
//! changed in code without its docs row fails here. `TPTEST_BLESS=1`
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
    if std::env::var_os("TPTEST_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(PAGE, format!("{head}{BEGIN}{generated}{END}{tail}"))
            .expect("docs/configuration.md is writable");
        return;
    }
    panic!(
        "docs/configuration.md's settings table differs from the generated one \
         (rerun with TPTEST_BLESS=1 to rewrite it). Generated:\n{generated}"
    );
}

/// The first and last cells of each `| `TICKPROF…` | … |` row of `text`.
fn variable_rows(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| l.starts_with("| `TICKPROF"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").collect();
            let name = cells[0].trim().trim_matches('`').to_owned();
            let default = cells[cells.len() - 1].trim().to_owned();
            (name, default)
        })
        .collect()
}

#[test]
fn the_readme_lists_common_variables_with_their_generated_defaults() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md is readable");
    let generated = variable_rows(&tickprof::__private::settings_markdown());
    let rows = variable_rows(&readme);
    assert!(rows.len() >= 5, "the README's variables table: {rows:?}");
    for (name, default) in &rows {
        let Some((_, want)) = generated.iter().find(|(n, _)| n == name) else {
            panic!("README.md lists {name}, which is not a setting");
        };
        assert_eq!(
            default, want,
            "README.md's default for {name} differs from the settings table's"
        );
    }
    assert!(
        readme.contains("docs/configuration.md"),
        "README.md links to the full table"
    );
}
