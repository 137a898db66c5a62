//! Nothing: this package holds tickprof's trybuild ui tests (`ui.rs`,
//! cases in `tests/ui/`), apart from the test package's heavy
//! dev-dependencies, which trybuild would otherwise build into every ui
//! project.
