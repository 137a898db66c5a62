use super::*;
use crate::report::SiteKind;
use crate::site::path_of;

fn a() {}
fn b() {}

static A: CallSite = CallSite::function(path_of(a), None, "x.rs", 3);
static B: CallSite = CallSite::function(path_of(b), Some("bee"), "x.rs", 9);

#[test]
fn a_mark_without_calls_is_never_called() {
    let mut row = crate::export::test_site(&A.name(), SiteKind::Function);
    row.file = "x.rs".into();
    row.line = 3;
    let cov = of(&[&A, &B], &[row]);
    assert_eq!(cov.marked, 2);
    assert_eq!(cov.ran, 1);
    assert_eq!(cov.never_called.len(), 1);
    assert_eq!(cov.never_called[0].name, "bee");
    assert_eq!(cov.never_called[0].line, 9);
}
