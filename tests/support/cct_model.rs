//! A plain reference model of tickprof's recorder, for
//! `tests/recorder_model.rs`: per-thread calling-context trees with counts
//! per path, the shadow stack and its resynchronisation rule, the node cap
//! (`TICKPROF_MAX_NODES`), finished threads merged by name
//! (`TICKPROF_THREADS_KEPT`), reset, snapshots and their differences.
//!
//! No timing: a node holds its completed calls and the calls that ended by
//! unwinding. Sites are small numbers; the test maps them to names.
//!
//! The rules modelled, from `runtime/src/record/`:
//! - a push finds the child of the node on top of the stack for the site:
//!   once a (parent node, site) pair is given a node, it keeps it; a new
//!   regular node is made while the thread's nodes (root and overflow nodes
//!   included) are fewer than the cap and the parent is regular; otherwise
//!   the site's overflow node, "nested" when a frame of the same site is
//!   open on the stack;
//! - a drop records one call on the guard's node, whatever the stack holds;
//!   the stack: the top frame is popped if it holds the guard's node (the
//!   node is compared, not the depth); else, if the guard's own frame is
//!   still at its depth (for an overflow node, which the recorder finds
//!   by its node and the node under it: the newest frame of that pair), it
//!   and every frame above it are popped (those above are counted
//!   `resynced`); else nothing is popped and the drop is counted
//!   `orphaned`;
//! - at thread exit, the frames still open are counted `leaked`, and the
//!   thread's tree joins the finished threads' data and its name's row;
//! - a reset zeroes every live thread's counts (keeping its nodes, its
//!   stack and its node decisions) and forgets the finished threads.

use std::collections::{BTreeMap, HashMap};

/// A site: an index into the test's table of marks.
pub type Site = u8;

/// A node's identity across threads and snapshots, as reports match them.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    /// A regular node: the sites from the root's child down to it (the
    /// root is the empty path).
    Path(Vec<Site>),
    /// An overflow node of a site (the tree was full): nested or outer.
    Folded(Site, bool),
}

impl Key {
    /// The node's site (`None` for the root).
    pub fn site(&self) -> Option<Site> {
        match self {
            Key::Path(p) => p.last().copied(),
            Key::Folded(s, _) => Some(*s),
        }
    }
}

/// A node's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub calls: u64,
    pub unwound: u64,
}

impl Counts {
    fn add(&mut self, o: Counts) {
        self.calls += o.calls;
        self.unwound += o.unwound;
    }

    fn minus(self, earlier: Counts) -> Counts {
        Counts {
            calls: self.calls.saturating_sub(earlier.calls),
            unwound: self.unwound.saturating_sub(earlier.unwound),
        }
    }
}

/// A tree as plain data: every node that exists, with its counts (zero
/// for a node whose calls are all open or reset).
pub type Tree = BTreeMap<Key, Counts>;

fn merge(into: &mut Tree, t: &Tree) {
    for (k, c) in t {
        into.entry(k.clone()).or_default().add(*c);
    }
}

/// `later - earlier`, node by node: nodes `earlier` lacks are kept whole.
fn minus(later: &Tree, earlier: &Tree) -> Tree {
    later
        .iter()
        .map(|(k, c)| (k.clone(), earlier.get(k).map_or(*c, |e| c.minus(*e))))
        .collect()
}

/// Stack events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Events {
    pub resynced: u64,
    pub orphaned: u64,
    pub leaked: u64,
}

impl Events {
    fn add(&mut self, o: Events) {
        self.resynced += o.resynced;
        self.orphaned += o.orphaned;
        self.leaked += o.leaked;
    }

    fn minus(self, e: Events) -> Events {
        Events {
            resynced: self.resynced.saturating_sub(e.resynced),
            orphaned: self.orphaned.saturating_sub(e.orphaned),
            leaked: self.leaked.saturating_sub(e.leaked),
        }
    }
}

/// What a guard holds: its node and its frame's depth.
#[derive(Clone, Copy, Debug)]
pub struct Guard {
    node: usize,
    depth: usize,
    /// The node under it when it was pushed.
    parent: usize,
}

/// One thread's recorded data (made at its first marked call).
#[derive(Debug)]
struct Arena {
    id: u64,
    nodes: Vec<(Key, Counts)>,
    /// (parent node, site) → node, decided at the pair's first push.
    children: HashMap<(usize, Site), usize>,
    folded: HashMap<(Site, bool), usize>,
    /// Open frames' nodes; `stack[0]` is the root.
    stack: Vec<usize>,
    resynced: u64,
    orphaned: u64,
}

impl Arena {
    fn new(id: u64) -> Arena {
        Arena {
            id,
            nodes: vec![(Key::Path(Vec::new()), Counts::default())],
            children: HashMap::new(),
            folded: HashMap::new(),
            stack: vec![0],
            resynced: 0,
            orphaned: 0,
        }
    }

    fn push(&mut self, site: Site, cap: usize) -> Guard {
        let parent = *self.stack.last().expect("the root is never popped");
        let node = match self.children.get(&(parent, site)) {
            Some(&n) => n,
            None => {
                let n = match &self.nodes[parent].0 {
                    Key::Path(p) if self.nodes.len() < cap => {
                        let mut path = p.clone();
                        path.push(site);
                        self.nodes.push((Key::Path(path), Counts::default()));
                        self.nodes.len() - 1
                    }
                    _ => {
                        let nested = self.stack[1..]
                            .iter()
                            .any(|&n| self.nodes[n].0.site() == Some(site));
                        match self.folded.get(&(site, nested)) {
                            Some(&n) => n,
                            None => {
                                let key = Key::Folded(site, nested);
                                self.nodes.push((key, Counts::default()));
                                let n = self.nodes.len() - 1;
                                self.folded.insert((site, nested), n);
                                n
                            }
                        }
                    }
                };
                self.children.insert((parent, site), n);
                n
            }
        };
        let parent = *self.stack.last().expect("the root is never popped");
        self.stack.push(node);
        Guard {
            node,
            depth: self.stack.len() - 1,
            parent,
        }
    }

    fn pop(&mut self, g: Guard, unwinding: bool) {
        let top = self.stack.len() - 1;
        let folded = matches!(self.nodes[g.node].0, Key::Folded(..));
        // A frame of an overflow node is found again by its node and the
        // node under it, the newest such (the recorder keeps no depth for
        // them: an overflow node is shared by every path it folds).
        let found = if folded {
            (1..=top)
                .rev()
                .find(|&i| self.stack[i] == g.node && self.stack[i - 1] == g.parent)
        } else {
            (g.depth >= 1 && g.depth <= top && self.stack[g.depth] == g.node).then_some(g.depth)
        };
        if self.stack[top] == g.node {
            self.stack.pop();
        } else if let Some(at) = found {
            self.resynced += (top - at) as u64;
            self.stack.truncate(at);
        } else {
            self.orphaned += 1;
        }
        let c = &mut self.nodes[g.node].1;
        c.calls += 1;
        if unwinding {
            c.unwound += 1;
        }
    }

    fn tree(&self) -> Tree {
        self.nodes.iter().cloned().collect()
    }

    fn events(&self) -> Events {
        Events {
            resynced: self.resynced,
            orphaned: self.orphaned,
            leaked: 0,
        }
    }
}

/// A per-thread row: a live thread, or the finished threads of one name.
#[derive(Clone, Debug)]
pub struct Row {
    pub name: String,
    pub id: u64,
    pub finished: bool,
    pub count: u64,
    pub tree: Tree,
}

/// The name of the row of finished threads past the bound on names.
pub const OTHER_THREADS: &str = "<other threads>";

#[derive(Debug)]
struct Thread {
    name: String,
    arena: Option<Arena>,
}

/// Everything recorded, as a report would capture it.
#[derive(Clone, Debug)]
pub struct Capture {
    pub merged: Tree,
    /// In order of thread number.
    pub threads: Vec<Row>,
    pub events: Events,
    /// Resets before the capture.
    pub resets: u64,
    /// A difference across a reset: counters are subtracted node by node,
    /// saturating at 0, so counts from before and after the reset mix (a
    /// node may show more unwound calls than calls), and the rows mean
    /// nothing.
    pub across_reset: bool,
    /// Whether each per-thread row holds exactly its threads' calls: false
    /// across a reset, where a difference's rows have no meaning.
    pub exact_rows: bool,
}

impl Capture {
    /// What was recorded between `earlier` and `self`: trees node by node;
    /// a live thread's row less its row then, a row of finished threads
    /// less that row then and the threads live then that have since
    /// finished into it (by name, or into `<other threads>` when their
    /// name has no row).
    pub fn minus(&self, earlier: &Capture) -> Capture {
        let across_reset = self.resets != earlier.resets;
        let has_row = |name: &str| {
            self.threads
                .iter()
                .any(|t| t.finished && t.name == name && t.name != OTHER_THREADS)
        };
        let before = |row: &Row| {
            let mut b = Tree::new();
            for e in &earlier.threads {
                let into = if !row.finished {
                    !e.finished && e.id == row.id
                } else if e.finished {
                    e.name == row.name
                } else {
                    !self.threads.iter().any(|t| !t.finished && t.id == e.id)
                        && (e.name == row.name || (row.name == OTHER_THREADS && !has_row(&e.name)))
                };
                if into {
                    merge(&mut b, &e.tree);
                }
            }
            b
        };
        Capture {
            resets: self.resets,
            across_reset,
            exact_rows: !across_reset,
            merged: minus(&self.merged, &earlier.merged),
            threads: self
                .threads
                .iter()
                .map(|t| Row {
                    tree: minus(&t.tree, &before(t)),
                    ..t.clone()
                })
                .collect(),
            events: self.events.minus(earlier.events),
        }
    }
}

/// The whole process as the recorder sees it.
#[derive(Debug)]
pub struct Model {
    /// `TICKPROF_MAX_NODES`.
    cap: usize,
    /// `TICKPROF_THREADS_KEPT`.
    kept: usize,
    next_id: u64,
    /// Live threads, by nesting level (a thread's parent is alive while it
    /// runs).
    live: Vec<Thread>,
    finished: Tree,
    rows: Vec<Row>,
    other: Option<Row>,
    events: Events,
    resets: u64,
}

impl Model {
    pub fn new(cap: usize, kept: usize) -> Model {
        Model {
            cap,
            kept,
            next_id: 0,
            live: Vec::new(),
            finished: Tree::new(),
            rows: Vec::new(),
            other: None,
            events: Events::default(),
            resets: 0,
        }
    }

    /// A thread starts (at nesting level `live.len()`), with no data yet.
    pub fn spawn(&mut self, name: &str) -> usize {
        self.live.push(Thread {
            name: name.to_owned(),
            arena: None,
        });
        self.live.len() - 1
    }

    /// A marked call starts on the thread at `level`.
    pub fn push(&mut self, level: usize, site: Site) -> Guard {
        let id = self.next_id;
        let t = &mut self.live[level];
        let arena = t.arena.get_or_insert_with(|| Arena::new(id));
        if arena.id == id {
            self.next_id += 1;
        }
        arena.push(site, self.cap)
    }

    /// A guard of the thread at `level` is dropped (`unwinding`: by a
    /// panic, through the guard's drop).
    pub fn pop(&mut self, level: usize, g: Guard, unwinding: bool) {
        if let Some(a) = self.live[level].arena.as_mut() {
            a.pop(g, unwinding);
        }
    }

    /// The innermost live thread exits.
    pub fn exit(&mut self) {
        let t = self.live.pop().expect("a live thread");
        let Some(a) = t.arena else { return };
        let tree = a.tree();
        merge(&mut self.finished, &tree);
        self.events.add(Events {
            leaked: (a.stack.len() - 1) as u64,
            ..a.events()
        });
        if let Some(row) = self.rows.iter_mut().find(|r| r.name == t.name) {
            row.count += 1;
            merge(&mut row.tree, &tree);
        } else if self.rows.len() < self.kept {
            self.rows.push(Row {
                name: t.name,
                id: a.id,
                finished: true,
                count: 1,
                tree,
            });
        } else {
            let row = self.other.get_or_insert_with(|| Row {
                name: OTHER_THREADS.to_owned(),
                id: a.id,
                finished: true,
                count: 0,
                tree: Tree::new(),
            });
            row.count += 1;
            merge(&mut row.tree, &tree);
        }
    }

    /// `tickprof::reset()`.
    pub fn reset(&mut self) {
        for a in self.live.iter_mut().filter_map(|t| t.arena.as_mut()) {
            for n in &mut a.nodes {
                n.1 = Counts::default();
            }
            a.resynced = 0;
            a.orphaned = 0;
        }
        self.finished.clear();
        self.rows.clear();
        self.other = None;
        self.events = Events::default();
        self.resets += 1;
    }

    /// What a report made now starts from.
    pub fn capture(&self) -> Capture {
        let mut c = Capture {
            merged: self.finished.clone(),
            threads: self.rows.iter().chain(&self.other).cloned().collect(),
            events: self.events,
            resets: self.resets,
            across_reset: false,
            exact_rows: true,
        };
        for t in &self.live {
            if let Some(a) = &t.arena {
                let tree = a.tree();
                merge(&mut c.merged, &tree);
                c.events.add(a.events());
                c.threads.push(Row {
                    name: t.name.clone(),
                    id: a.id,
                    finished: false,
                    count: 1,
                    tree,
                });
            }
        }
        c.threads.sort_by_key(|r| r.id);
        c
    }
}

/// The counts a report of a capture shows.
#[derive(Debug, PartialEq, Eq)]
pub struct Expected {
    /// Sites with calls: (calls, unwound), every node of the site counted.
    pub sites: BTreeMap<Site, (u64, u64)>,
    /// Calls on overflow nodes.
    pub folded: u64,
    /// Regular nodes below the root: path → calls.
    pub tree: BTreeMap<Vec<Site>, u64>,
    /// (caller, callee) → calls along regular nodes; caller `None` is the
    /// thread's root. Only edges with calls.
    pub edges: BTreeMap<(Option<Site>, Site), u64>,
    /// Per-thread rows with calls: (name, finished, threads, site → calls).
    pub threads: Vec<(String, bool, u64, BTreeMap<Site, u64>)>,
    pub out_of_order: u64,
    pub leaked: u64,
}

fn site_calls(t: &Tree) -> BTreeMap<Site, u64> {
    let mut m = BTreeMap::new();
    for (k, c) in t {
        if let (Some(s), true) = (k.site(), c.calls > 0) {
            *m.entry(s).or_insert(0) += c.calls;
        }
    }
    m
}

impl Capture {
    /// The report's counts.
    pub fn expect(&self) -> Expected {
        let mut sites: BTreeMap<Site, (u64, u64)> = BTreeMap::new();
        let mut tree = BTreeMap::new();
        let mut edges = BTreeMap::new();
        let mut folded = 0;
        for (k, c) in &self.merged {
            if let Some(s) = k.site() {
                let e = sites.entry(s).or_default();
                e.0 += c.calls;
                e.1 += c.unwound;
            }
            match k {
                Key::Path(p) if !p.is_empty() => {
                    tree.insert(p.clone(), c.calls);
                    let caller = p.len().checked_sub(2).map(|i| p[i]);
                    if c.calls > 0 {
                        *edges.entry((caller, p[p.len() - 1])).or_insert(0) += c.calls;
                    }
                }
                Key::Path(_) => {}
                Key::Folded(..) => folded += c.calls,
            }
        }
        // A site is listed when it has calls.
        sites.retain(|_, c| c.0 > 0);
        let mut threads: Vec<_> = self
            .threads
            .iter()
            .map(|r| (r.name.clone(), r.finished, r.count, site_calls(&r.tree)))
            .filter(|r| !r.3.is_empty())
            .collect();
        threads.sort();
        Expected {
            sites,
            folded,
            tree,
            edges,
            threads,
            out_of_order: self.events.resynced + self.events.orphaned,
            leaked: self.events.leaked,
        }
    }
}
