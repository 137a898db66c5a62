//! Globs on function names: `*` matches any run of characters (`::`
//! included), `?` one character; everything else matches itself.

/// A parsed glob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Glob(Vec<char>);

impl Glob {
    /// The glob `pattern`.
    pub(crate) fn new(pattern: &str) -> Self {
        Glob(pattern.chars().collect())
    }

    /// Whether the whole of `name` matches.
    pub(crate) fn matches(&self, name: &str) -> bool {
        let name: Vec<char> = name.chars().collect();
        let (p, n) = (&self.0, &name);
        // Iterative matching with one backtrack point (the last `*`):
        // linear in practice, O(len(p) * len(n)) at worst.
        let (mut i, mut j) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while j < n.len() {
            match p.get(i) {
                Some('*') => {
                    star = Some((i, j));
                    i += 1;
                }
                Some(&c) if c == '?' || c == n[j] => {
                    i += 1;
                    j += 1;
                }
                _ => match star {
                    Some((si, sj)) => {
                        i = si + 1;
                        j = sj + 1;
                        star = Some((si, sj + 1));
                    }
                    None => return false,
                },
            }
        }
        p[i..].iter().all(|&c| c == '*')
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    #[test]
    fn globs() {
        let m = |p: &str, n: &str| Glob::new(p).matches(n);
        assert!(m("*", ""));
        assert!(m("*", "a::b"));
        assert!(m("app::*", "app::parser::Parser::next"));
        assert!(!m("app::*", "<app::X as T>::f"));
        assert!(m("*::parse*", "app::parser::parse_line"));
        assert!(m("a?c", "abc"));
        assert!(!m("a?c", "ac"));
        assert!(m("*a*b*", "xxaxxbxx"));
        assert!(!m("*a*b", "xxaxxbxx"));
        assert!(m("exact", "exact"));
        assert!(!m("exact", "exactly"));
        assert!(m("**", "x"));
    }
}
