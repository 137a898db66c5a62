//! Differences of captures: what was recorded between two, node by node,
//! and each thread row's share of the earlier one.

use super::{Capture, ThreadTree, OTHER_THREADS};
use crate::record::trace::ThreadEvents;
use crate::tree::Tree;

impl Capture {
    /// What `earlier` had recorded of what `row` (one of this capture's
    /// thread rows) holds now: for a live thread, its own tree then; for a
    /// row of finished threads, that row then plus the trees of the threads
    /// live then that have since finished into it (merged by name, or into
    /// `<other threads>` when their name has no row).
    fn row_before(&self, row: &ThreadTree, earlier: &Capture) -> Tree {
        let mut before = Tree::new();
        if !row.finished {
            if let Some(p) = earlier
                .threads
                .iter()
                .find(|p| !p.finished && p.id == row.id)
            {
                before.merge(&p.tree);
            }
            return before;
        }
        let has_row = |name: &str| {
            self.threads
                .iter()
                .any(|t| t.finished && t.name == name && t.name != OTHER_THREADS)
        };
        for p in &earlier.threads {
            let into_row = if p.finished {
                p.name == row.name
            } else {
                let still_live = self.threads.iter().any(|t| !t.finished && t.id == p.id);
                // Its name now, if it was named after `earlier`.
                let name = self.renamed.get(&p.id).unwrap_or(&p.name);
                !still_live && (*name == row.name || (row.name == OTHER_THREADS && !has_row(name)))
            };
            if into_row {
                before.merge(&p.tree);
            }
        }
        before
    }

    /// What was recorded between `earlier` and `self`, node by node.
    pub(crate) fn minus(&self, earlier: &Capture) -> Capture {
        Capture {
            merged: self.merged.minus(&earlier.merged),
            threads: self
                .threads
                .iter()
                .map(|t| ThreadTree {
                    name: t.name.clone(),
                    id: t.id,
                    finished: t.finished,
                    count: t.count,
                    tree: t.tree.minus(&self.row_before(t, earlier)),
                })
                .collect(),
            events: self.events.minus(earlier.events),
            complete: self.complete && earlier.complete,
            at: self.at,
            renamed: self.renamed.clone(),
            traces: self
                .traces
                .iter()
                .map(|t| {
                    // A buffer only grows (until a reset empties it): the
                    // calls since `earlier` are the events past its length.
                    let before = earlier.traces.iter().find(|p| p.thread_id == t.thread_id);
                    let (len, dropped) = before.map_or((0, 0), |b| (b.events.len(), b.dropped));
                    let len = if len > t.events.len() { 0 } else { len };
                    ThreadEvents {
                        thread_id: t.thread_id,
                        thread_name: t.thread_name.clone(),
                        events: t.events[len..].to_vec(),
                        dropped: t.dropped.saturating_sub(dropped),
                    }
                })
                .collect(),
        }
    }
}
