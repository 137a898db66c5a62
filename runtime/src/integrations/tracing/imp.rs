//! The layer's callbacks: sites per callsite, frames per entry.

use super::Layer;
use crate::record::span::{self, Entry};
use crate::site::CallSite;
use core::cell::RefCell;
use core::sync::atomic::{AtomicU64, Ordering};
use dashmap::DashMap;
use std::sync::OnceLock;
use tracing_core::callsite::Identifier;
use tracing_core::span::{Attributes, Id};
use tracing_core::{Metadata, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// Tracing callsite → tickprof site, shared by every layer and written by
/// every thread that creates spans.
fn sites() -> &'static DashMap<Identifier, &'static CallSite> {
    static SITES: OnceLock<DashMap<Identifier, &'static CallSite>> = OnceLock::new();
    SITES.get_or_init(DashMap::new)
}

/// The site of a tracing callsite, made on first use (and leaked: one per
/// callsite, like a mark's `static`).
fn site_of(meta: &'static Metadata<'static>) -> &'static CallSite {
    let id = meta.callsite();
    if let Some(s) = sites().get(&id) {
        return *s;
    }
    *sites().entry(id).or_insert_with(|| {
        let name: &'static str =
            Box::leak(format!("{}::{}", meta.target(), meta.name()).into_boxed_str());
        let file = meta.file().unwrap_or("<unknown>");
        Box::leak(Box::new(CallSite::tracing_span(
            name,
            file,
            meta.line().unwrap_or(0),
        )))
    })
}

/// Not entered yet.
const NEVER: u64 = u64::MAX;

/// What a span carries: its site, its summed time and its first entry.
struct Times {
    site: &'static CallSite,
    busy: AtomicU64,
    first: AtomicU64,
}

thread_local! {
    /// The frames of the spans entered on this thread and not exited, in
    /// order of entry.
    static ENTRIES: RefCell<Vec<(u64, Entry)>> = const { RefCell::new(Vec::new()) };
}

impl<S> tracing_subscriber::Layer<S> for Layer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        span.extensions_mut().insert(Times {
            site: site_of(attrs.metadata()),
            busy: AtomicU64::new(0),
            first: AtomicU64::new(NEVER),
        });
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let ext = span.extensions();
        let Some(times) = ext.get::<Times>() else {
            return;
        };
        let Some(entry) = span::enter(times.site) else {
            return;
        };
        let _ = times.first.compare_exchange(
            NEVER,
            entry.start(),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        drop(ext);
        let _ = ENTRIES.try_with(|e| e.borrow_mut().push((id.into_u64(), entry)));
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        let key = id.into_u64();
        let entry = ENTRIES
            .try_with(|e| {
                let mut v = e.borrow_mut();
                let at = v.iter().rposition(|(k, _)| *k == key)?;
                Some(v.remove(at).1)
            })
            .ok()
            .flatten();
        let Some(entry) = entry else {
            return;
        };
        let busy = span::exit(&entry);
        if let Some(span) = ctx.span(id) {
            if let Some(times) = span.extensions().get::<Times>() {
                times.busy.fetch_add(busy, Ordering::Relaxed);
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        // Ids are reused after close: drop any frame of this span left on
        // this thread (its exit never came here).
        let key = id.into_u64();
        let _ = ENTRIES.try_with(|e| e.borrow_mut().retain(|(k, _)| *k != key));
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let ext = span.extensions();
        let Some(times) = ext.get::<Times>() else {
            return;
        };
        let first = times.first.load(Ordering::Relaxed);
        if first != NEVER {
            span::close(times.site, times.busy.load(Ordering::Relaxed), first);
        }
    }
}
