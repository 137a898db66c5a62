//! A recursive-descent reader of `type_name` output (see the parent
//! module for the form it produces).

use super::{is_ident_char, is_placeholder, MAX_DEPTH, STD_CRATES};

/// A type as printed in canonical form, and whether it is a plain path
/// (which can stand before `::method` without angle brackets).
pub(super) struct Shown {
    text: String,
    is_path: bool,
}

/// A recursive-descent reader of the paths and types that rustc's
/// `type_name` prints. Every method returns `None` on input it does not
/// recognise; the cursor only moves over ASCII tokens and whole
/// identifiers, so it always sits on a char boundary.
pub(super) struct Parser<'a> {
    src: &'a str,
    pos: usize,
    /// Nesting of `path`/`ty` calls, bounded by [`MAX_DEPTH`].
    depth: usize,
    /// How many generic argument lists enclose the cursor.
    args_depth: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn new(src: &'a str) -> Self {
        Parser {
            src,
            pos: 0,
            depth: 0,
            args_depth: 0,
        }
    }

    fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn eat(&mut self, token: &str) -> bool {
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Option<()> {
        self.eat(token).then_some(())
    }

    /// Runs `f` one nesting level deeper, failing past [`MAX_DEPTH`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let out = f(self);
        self.depth -= 1;
        out
    }

    /// The whole input as one path, or `None` if anything is left over.
    pub(super) fn whole_path(mut self) -> Option<String> {
        let path = self.path()?;
        self.rest().is_empty().then_some(path)
    }

    /// Reads identifier characters (anything but the ASCII punctuation and
    /// spaces that separate tokens in `type_name` output).
    fn ident(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let len = rest
            .char_indices()
            .find(|&(_, c)| !is_ident_char(c))
            .map_or(rest.len(), |(i, _)| i);
        if len == 0 {
            return None;
        }
        self.pos += len;
        rest.get(..len)
    }

    /// Reads a balanced `{…}` verbatim (`{{closure}}`, const blocks).
    fn braces(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let mut depth = 0usize;
        for (i, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        self.pos += i + 1;
                        return rest.get(..=i);
                    }
                }
                _ if depth == 0 => return None,
                _ => {}
            }
        }
        None
    }

    /// A path: segments joined by `::`, each an identifier with optional
    /// generic arguments or `Fn(..) -> ..` sugar, a `{{closure}}`, a
    /// qualified `<Type as Trait>` or an `<impl …>` segment.
    fn path(&mut self) -> Option<String> {
        self.nested(|p| {
            let mut out = String::new();
            // Where the last segment starts in `out`, and whether the path
            // so far is rooted in a standard library crate.
            let mut last_start = 0;
            let mut std_rooted = false;
            let mut segments = 0usize;
            loop {
                if p.eat("<impl ") {
                    let first = p.ty()?;
                    out = if p.eat(" for ") {
                        let self_ty = p.ty()?;
                        format!("<{} as {}>", self_ty.text, first.text)
                    } else if first.is_path {
                        first.text
                    } else {
                        format!("<{}>", first.text)
                    };
                    p.expect(">")?;
                    std_rooted = false;
                } else if p.eat("<") {
                    let self_ty = p.ty()?;
                    out = if p.eat(" as ") {
                        format!("<{} as {}>", self_ty.text, p.path()?)
                    } else if self_ty.is_path {
                        self_ty.text
                    } else {
                        format!("<{}>", self_ty.text)
                    };
                    p.expect(">")?;
                    std_rooted = false;
                } else {
                    if segments > 0 {
                        out.push_str("::");
                    }
                    last_start = out.len();
                    if p.peek() == Some('{') {
                        out.push_str(p.braces()?);
                    } else {
                        let name = p.ident()?;
                        if segments == 0 {
                            std_rooted = STD_CRATES.contains(&name);
                        }
                        out.push_str(name);
                        if p.peek() == Some('<') {
                            out.push_str(&p.generic_args()?);
                        } else if p.peek() == Some('(') {
                            out.push_str(&p.paren_sugar()?);
                        }
                    }
                }
                segments += 1;
                if !p.eat("::") {
                    break;
                }
            }
            if std_rooted && segments > 1 {
                out.replace_range(..last_start, "");
            }
            Some(out)
        })
    }

    /// `<arg, arg, …>` after a path segment, in canonical form: lifetimes
    /// left out, and the whole list left out if nothing remains or, outside
    /// any other argument list, only placeholders remain.
    fn generic_args(&mut self) -> Option<String> {
        self.expect("<")?;
        let outermost = self.args_depth == 0;
        self.args_depth += 1;
        let kept = self.generic_arg_list();
        self.args_depth -= 1;
        let kept = kept?;
        let informative = kept.iter().any(|arg| !is_placeholder(arg));
        Some(if kept.is_empty() || (outermost && !informative) {
            String::new()
        } else {
            format!("<{}>", kept.join(", "))
        })
    }

    /// The arguments after `<` up to and including `>`, lifetimes left out.
    fn generic_arg_list(&mut self) -> Option<Vec<String>> {
        let mut kept = Vec::new();
        loop {
            if let Some(arg) = self.generic_arg()? {
                kept.push(arg);
            }
            if self.eat(">") {
                return Some(kept);
            }
            self.expect(", ")?;
        }
    }

    /// One generic argument; `Some(None)` for a lifetime (left out).
    fn generic_arg(&mut self) -> Option<Option<String>> {
        match self.peek()? {
            '\'' => {
                let lifetime_or_char = self.quoted()?;
                Some(
                    lifetime_or_char
                        .ends_with('\'')
                        .then(|| lifetime_or_char.to_owned()),
                )
            }
            '{' => Some(Some(self.braces()?.to_owned())),
            c if c == '-' || c.is_ascii_digit() => Some(Some(self.literal()?.to_owned())),
            _ => {
                // An associated type binding `Item = u8` (in `dyn` bounds).
                let save = self.pos;
                if let Some(name) = self.ident() {
                    if self.eat(" = ") {
                        return Some(Some(format!("{name} = {}", self.ty()?.text)));
                    }
                }
                self.pos = save;
                Some(Some(self.ty()?.text))
            }
        }
    }

    /// A lifetime (`'_`, `'a`) or a char literal (`'x'`), verbatim.
    fn quoted(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let mut end = rest.len();
        for (i, c) in rest.char_indices().skip(1) {
            if c == '\'' {
                end = i + 1;
                break;
            }
            if !is_ident_char(c) && c != '\\' {
                end = i;
                break;
            }
        }
        if end <= 1 {
            return None;
        }
        self.pos += end;
        rest.get(..end)
    }

    /// A numeric literal (a const argument or an array length).
    fn literal(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let len = rest
            .char_indices()
            .skip(1)
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .map_or(rest.len(), |(i, _)| i);
        self.pos += len;
        rest.get(..len)
    }

    /// `(A, B) -> R` after `Fn`, `FnMut`, `FnOnce` in bounds.
    fn paren_sugar(&mut self) -> Option<String> {
        let mut out = self.ty_list("(", ")")?;
        if self.eat(" -> ") {
            out.push_str(" -> ");
            out.push_str(&self.ty()?.text);
        }
        Some(out)
    }

    /// `open ty, ty, … close`, allowing the trailing comma of a 1-tuple.
    fn ty_list(&mut self, open: &str, close: &str) -> Option<String> {
        self.expect(open)?;
        let mut items = Vec::new();
        let mut trailing_comma = false;
        if !self.eat(close) {
            loop {
                items.push(self.ty()?.text);
                if self.eat(close) {
                    break;
                }
                if self.eat(",") && self.eat(close) {
                    trailing_comma = true;
                    break;
                }
                self.expect(" ")?;
            }
        }
        let comma = if trailing_comma { "," } else { "" };
        Some(format!("{open}{}{comma}{close}", items.join(", ")))
    }

    /// A type, in canonical form.
    fn ty(&mut self) -> Option<Shown> {
        self.nested(|p| {
            let not_path = |text: String| {
                Some(Shown {
                    text,
                    is_path: false,
                })
            };
            if p.eat("&") {
                if p.peek() == Some('\'') {
                    p.quoted()?;
                    p.expect(" ")?;
                }
                let mutability = if p.eat("mut ") { "mut " } else { "" };
                return not_path(format!("&{mutability}{}", p.ty()?.text));
            }
            for prefix in ["*const ", "*mut ", "unsafe ", "dyn ", "impl "] {
                if p.eat(prefix) {
                    let inner = if matches!(prefix, "dyn " | "impl ") {
                        p.bounds()?
                    } else {
                        p.ty()?.text
                    };
                    return not_path(format!("{prefix}{inner}"));
                }
            }
            if p.eat("extern \"") {
                let abi = p.rest().split('"').next()?;
                p.pos += abi.len();
                p.expect("\" ")?;
                return not_path(format!("extern \"{abi}\" {}", p.ty()?.text));
            }
            if p.eat("for<") {
                // A higher-ranked binder: lifetimes only, left out.
                loop {
                    p.quoted()?;
                    if p.eat("> ") {
                        break;
                    }
                    p.expect(", ")?;
                }
                return p.ty();
            }
            if p.rest().starts_with("fn(") {
                p.pos += "fn".len();
                return not_path(format!("fn{}", p.paren_sugar()?));
            }
            if p.eat("[") {
                let elem = p.ty()?.text;
                let text = if p.eat("; ") {
                    let len = match p.peek()? {
                        '{' => p.braces()?,
                        c if c == '-' || c.is_ascii_digit() => p.literal()?,
                        _ => p.ident()?,
                    };
                    format!("[{elem}; {len}]")
                } else {
                    format!("[{elem}]")
                };
                p.expect("]")?;
                return not_path(text);
            }
            if p.peek() == Some('(') {
                return not_path(p.ty_list("(", ")")?);
            }
            if p.eat("!") {
                return not_path("!".to_owned());
            }
            let text = p.path()?;
            let is_path = !text.starts_with('<');
            Some(Shown { text, is_path })
        })
    }

    /// `Bound + Bound + …` after `dyn`/`impl`; lifetime bounds left out.
    fn bounds(&mut self) -> Option<String> {
        let mut kept = Vec::new();
        loop {
            if self.peek() == Some('\'') {
                self.quoted()?;
            } else {
                kept.push(self.ty()?.text);
            }
            if !self.eat(" + ") {
                break;
            }
        }
        (!kept.is_empty()).then(|| kept.join(" + "))
    }
}
