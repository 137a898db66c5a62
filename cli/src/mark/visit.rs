//! Finds the functions of a parsed file, their names, and where each
//! mark goes (the first token after the function's outer attributes).

use super::future::{future_block, returned_future};
use super::names::{self, Uses};
use super::{Function, Options, Reason};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Attribute, Signature, Stmt, Type, Visibility};

/// What [`find`] found.
pub(super) struct Found {
    /// (line, char column) of each mark to insert, and whether the mark
    /// emits the body once ([`super::Built::once`]).
    pub(super) insert_at: Vec<(usize, usize, bool)>,
    /// Every function seen.
    pub(super) functions: Vec<Function>,
}

/// The functions of `file`, whose module path (crate name first) is `path`.
pub(super) fn find(file: &syn::File, path: Vec<String>, opts: &Options) -> Found {
    let mut finder = Finder {
        opts,
        path,
        uses: vec![names::uses_of(&file.items)],
        owner: Vec::new(),
        in_marked: 0,
        in_test: 0,
        found: Found {
            insert_at: Vec::new(),
            functions: Vec::new(),
        },
    };
    finder.visit_file(file);
    finder.found
}

/// The declarations of `built` that are the function whose first token
/// is on line `first`: on a line from there to its name, under its name
/// or, for an `async fn`, its body's `{async_fn#N}`; a function returning
/// one `async` block is that block's `{async_block#N}` too.
fn ours<'b>(
    built: &'b [super::Built],
    first: usize,
    sig: &Signature,
    body: &[Stmt],
) -> impl Iterator<Item = &'b super::Built> {
    let ident = sig.ident.to_string();
    let ident = ident.strip_prefix("r#").unwrap_or(&ident).to_owned();
    let last = sig.ident.span().start().line;
    let block = returned_future(&sig.output)
        .and(future_block(body))
        .map(|b| b.async_token.span.start().line);
    built.iter().filter(move |b| {
        let line = usize::try_from(b.line).unwrap_or(usize::MAX);
        ((first..=last).contains(&line) && (b.name == ident || b.name.starts_with("{async_fn#")))
            || (Some(line) == block && b.name.starts_with("{async_block#"))
    })
}

/// The `impl` or `trait` a method belongs to.
enum Owner {
    /// `impl Type` (`traits` `None`) or `impl Trait for Type`: the
    /// candidate full names of the type and the trait, and the type's
    /// last segment.
    Impl {
        types: Vec<String>,
        traits: Option<Vec<String>>,
        plain: String,
    },
    /// A trait's default methods.
    Trait(String),
}

struct Finder<'o> {
    opts: &'o Options,
    /// Crate, modules and enclosing functions.
    path: Vec<String>,
    /// The `use` maps of the enclosing modules, innermost last.
    uses: Vec<Uses>,
    owner: Vec<Owner>,
    /// How many enclosing containers carry a mark.
    in_marked: usize,
    /// How many enclosing items are compiled only under `cfg(test)`.
    in_test: usize,
    found: Found,
}

impl Finder<'_> {
    /// Records one function with a body, and marks it unless `why_not`.
    fn function(&mut self, attrs: &[Attribute], first: Span, sig: &Signature, body: &[Stmt]) {
        let prefix = self.path.join("::");
        let name = &sig.ident;
        let names = match self.owner.last() {
            None => vec![format!("{prefix}::{name}")],
            Some(Owner::Trait(t)) => vec![format!("{prefix}::{t}::{name}")],
            Some(Owner::Impl {
                types,
                traits,
                plain,
            }) => {
                let mut names: Vec<String> = match traits {
                    None => types.iter().map(|t| format!("{t}::{name}")).collect(),
                    Some(traits) => types
                        .iter()
                        .flat_map(|t| traits.iter().map(move |r| format!("<{t} as {r}>::{name}")))
                        .collect(),
                };
                names.push(format!("{prefix}::{plain}::{name}"));
                names.dedup();
                names
            }
        };
        let skipped = if self.in_marked > 0 || attrs.iter().any(|a| self.is_mark(a)) {
            Some(Reason::AlreadyMarked)
        } else if sig.constness.is_some() {
            Some(Reason::Const)
        } else if attrs.iter().any(expects_dead) {
            Some(Reason::ExpectedDead)
        } else if sig.variadic.is_some() {
            Some(Reason::Variadic)
        } else if sig.asyncness.is_none()
            && returned_future(&sig.output).is_some()
            && future_block(body).is_none()
        {
            Some(Reason::FutureBody)
        } else if !self.opts.wanted(&names) {
            Some(Reason::Glob)
        } else {
            self.not_kept(first.start().line, sig, body)
        };
        if skipped.is_none() {
            let at = first.start();
            let once = self.once(first.start().line, sig, body);
            self.found.insert_at.push((at.line, at.column, once));
        }
        self.found.functions.push(Function {
            name: names.into_iter().next().unwrap_or_default(),
            line: sig.ident.span().start().line,
            skipped,
            test_only: self.in_test > 0 || attrs.iter().any(test_only),
        });
    }

    /// Marks after inlining: why the function is left unmarked, when the
    /// unmarked build keeps no instance of it. Its declaration there is
    /// on a line from its first token (`first`) to its name, under its
    /// name or, for an `async fn`, its body's `{async_fn#N}`; a function
    /// returning one `async` block is that block's `{async_block#N}` too.
    /// A function `--mark` names is marked all the same.
    fn not_kept(&self, first: usize, sig: &Signature, body: &[Stmt]) -> Option<Reason> {
        let built = self.opts.built.as_ref()?;
        if !self.opts.mark.is_empty() {
            return None;
        }
        let (mut seen, mut small) = (false, false);
        for b in ours(built, first, sig, body) {
            if b.kept && !b.small {
                return None;
            }
            seen = true;
            small |= b.small;
        }
        Some(if small {
            Reason::Small
        } else if seen {
            Reason::Inlined
        } else {
            Reason::NotBuilt
        })
    }

    /// Marks after inlining: whether the mark emits the body once (a kept
    /// instance holds a large inlined function: see [`super::Built::once`]).
    fn once(&self, first: usize, sig: &Signature, body: &[Stmt]) -> bool {
        self.opts
            .built
            .as_ref()
            .is_some_and(|built| ours(built, first, sig, body).any(|b| b.kept && b.once))
    }

    /// Records a function left unmarked for `reason` (no body to look at).
    fn unmarked(&mut self, name: String, line: usize, reason: Reason) {
        self.found.functions.push(Function {
            name,
            line,
            skipped: Some(reason),
            test_only: self.in_test > 0,
        });
    }

    /// Whether `attr` is a tickprof mark: `#[profile…]`, `#[tickprof::profile…]`,
    /// `#[::tickprof::profile…]` or through the dependency's own name.
    fn is_mark(&self, attr: &Attribute) -> bool {
        let segments: Vec<String> = attr
            .path()
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        match segments.as_slice() {
            [last] => last == "profile",
            [first, .., last] => {
                last == "profile" && (first == "tickprof" || *first == self.opts.dep)
            }
            [] => false,
        }
    }

    /// Visits a container's items with `pushed` set up around them.
    fn container(&mut self, attrs: &[Attribute], inner: impl FnOnce(&mut Self)) {
        let marked = attrs.iter().any(|a| self.is_mark(a));
        let test = attrs.iter().any(test_only);
        self.in_marked += usize::from(marked);
        self.in_test += usize::from(test);
        inner(self);
        self.in_marked -= usize::from(marked);
        self.in_test -= usize::from(test);
    }

    /// Visits a function's body with its name on the path.
    /// A test function's body is test code too; a mark on the function
    /// does not reach the functions nested in it.
    fn body(&mut self, attrs: &[Attribute], name: &syn::Ident, block: &syn::Block) {
        let test = attrs.iter().any(test_only);
        self.in_test += usize::from(test);
        self.path.push(name.to_string());
        let owners = std::mem::take(&mut self.owner);
        self.visit_block(block);
        self.owner = owners;
        self.path.pop();
        self.in_test -= usize::from(test);
    }

    /// Counts the functions a macro would define: each `fn NAME` (or
    /// `fn $name`) in an item macro's tokens, in a `macro_rules!`
    /// definition only in its transcribers.
    fn macro_fns(&mut self, mac: &syn::Macro) {
        let macro_name = mac.path.to_token_stream().to_string().replace(' ', "");
        let mut names = Vec::new();
        if mac.path.is_ident("macro_rules") {
            let mut arrow = (false, false);
            for token in mac.tokens.clone() {
                if let (TokenTree::Group(g), (_, true)) = (&token, arrow) {
                    fns_in(g.stream(), &mut names);
                }
                arrow = match &token {
                    TokenTree::Punct(p) if p.as_char() == '=' => (true, false),
                    TokenTree::Punct(p) if p.as_char() == '>' && arrow.0 => (false, true),
                    _ => (false, false),
                };
            }
        } else {
            fns_in(mac.tokens.clone(), &mut names);
        }
        let prefix = self.path.join("::");
        for (name, line) in names {
            self.unmarked(
                format!("{prefix}::{name} ({macro_name}!)"),
                line,
                Reason::Macro,
            );
        }
    }
}

/// Whether `attr` is `#[expect(dead_code)]` or `#[expect(unused)]`, also
/// under `cfg_attr`.
fn expects_dead(attr: &Attribute) -> bool {
    let path = attr.path();
    if !(path.is_ident("expect") || path.is_ident("cfg_attr")) {
        return false;
    }
    let text = attr.meta.to_token_stream().to_string();
    text.contains("expect") && (text.contains("dead_code") || text.contains("unused"))
}

/// Whether `attr` makes its item compiled under `cfg(test)` only:
/// `#[cfg(test)]`, `#[cfg(all(.., test, ..))]`, or a test attribute
/// (`#[test]`, `#[tokio::test]`: a path ending in `test`).
fn test_only(attr: &Attribute) -> bool {
    fn requires_test(meta: &syn::Meta) -> bool {
        match meta {
            syn::Meta::Path(p) => p.is_ident("test"),
            syn::Meta::List(l) if l.path.is_ident("all") => l
                .parse_args_with(
                    syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
                )
                .is_ok_and(|all| all.iter().any(requires_test)),
            _ => false,
        }
    }
    let path = attr.path();
    if path.segments.last().is_some_and(|s| s.ident == "test") {
        return true;
    }
    path.is_ident("cfg")
        && attr
            .parse_args::<syn::Meta>()
            .is_ok_and(|m| requires_test(&m))
}

/// Each `fn NAME` / `fn $NAME` in `tokens`, with its line.
fn fns_in(tokens: TokenStream, out: &mut Vec<(String, usize)>) {
    let mut after_fn: Option<Span> = None;
    let mut dollar = false;
    for token in tokens {
        match (&token, after_fn) {
            (TokenTree::Ident(id), Some(at)) => {
                let name = if dollar {
                    format!("${id}")
                } else {
                    id.to_string()
                };
                out.push((name, at.start().line));
                after_fn = None;
                dollar = false;
                continue;
            }
            (TokenTree::Punct(p), Some(_)) if p.as_char() == '$' && !dollar => {
                dollar = true;
                continue;
            }
            _ => {}
        }
        after_fn = None;
        dollar = false;
        match token {
            TokenTree::Ident(id) if id == "fn" => after_fn = Some(id.span()),
            TokenTree::Group(g) => fns_in(g.stream(), out),
            _ => {}
        }
    }
}

/// The first token of a function after its attributes.
fn first_token(vis: Option<&Visibility>, default: Option<Span>, sig: &Signature) -> Span {
    match vis {
        Some(Visibility::Public(p)) => p.span,
        Some(Visibility::Restricted(r)) => r.pub_token.span,
        _ => default.unwrap_or_else(|| {
            sig.constness
                .map(|t| t.span)
                .or(sig.asyncness.map(|t| t.span))
                .or(sig.unsafety.map(|t| t.span))
                .or(sig.abi.as_ref().map(|a| a.extern_token.span))
                .unwrap_or(sig.fn_token.span)
        }),
    }
}

/// A type as the name of an `impl`: a path's segments without generic
/// arguments, anything else as written.
fn type_name(ty: &Type) -> String {
    match ty {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .map_or_else(String::new, |s| s.ident.to_string()),
        Type::Group(g) => type_name(&g.elem),
        Type::Paren(p) => type_name(&p.elem),
        other => other.to_token_stream().to_string().replace(' ', ""),
    }
}

impl<'a> Visit<'a> for Finder<'_> {
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        let first = first_token(Some(&f.vis), None, &f.sig);
        self.function(&f.attrs, first, &f.sig, &f.block.stmts);
        self.body(&f.attrs, &f.sig.ident, &f.block);
    }

    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        let first = first_token(Some(&f.vis), f.defaultness.map(|d| d.span()), &f.sig);
        if f.defaultness.is_some() {
            let name = format!("{}::{}", self.path.join("::"), f.sig.ident);
            self.unmarked(name, f.sig.ident.span().start().line, Reason::Default);
        } else {
            self.function(&f.attrs, first, &f.sig, &f.block.stmts);
        }
        self.body(&f.attrs, &f.sig.ident, &f.block);
    }

    fn visit_trait_item_fn(&mut self, f: &'a syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.function(
                &f.attrs,
                first_token(None, None, &f.sig),
                &f.sig,
                &block.stmts,
            );
            self.body(&f.attrs, &f.sig.ident, block);
        }
    }

    fn visit_item_impl(&mut self, i: &'a syn::ItemImpl) {
        let types = match names::segments(&i.self_ty) {
            Some(path) => names::resolve(&path, &self.path, &self.uses, false),
            None => vec![type_name(&i.self_ty)],
        };
        let traits = i.trait_.as_ref().map(|(_, path, _)| {
            let mut segments: Vec<String> =
                path.segments.iter().map(|s| s.ident.to_string()).collect();
            if path.leading_colon.is_some() {
                segments.insert(0, String::new());
            }
            names::resolve(&segments, &self.path, &self.uses, true)
        });
        self.owner.push(Owner::Impl {
            types,
            traits,
            plain: type_name(&i.self_ty),
        });
        self.container(&i.attrs, |this| visit::visit_item_impl(this, i));
        self.owner.pop();
    }

    fn visit_item_trait(&mut self, t: &'a syn::ItemTrait) {
        self.owner.push(Owner::Trait(t.ident.to_string()));
        self.container(&t.attrs, |this| visit::visit_item_trait(this, t));
        self.owner.pop();
    }

    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        self.path.push(m.ident.to_string());
        let owners = std::mem::take(&mut self.owner);
        let items = m.content.as_ref().map_or(&[][..], |(_, items)| &items[..]);
        self.uses.push(names::uses_of(items));
        self.container(&m.attrs, |this| visit::visit_item_mod(this, m));
        self.uses.pop();
        self.owner = owners;
        self.path.pop();
    }

    fn visit_macro(&mut self, mac: &'a syn::Macro) {
        self.macro_fns(mac);
    }
}
