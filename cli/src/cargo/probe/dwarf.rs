//! Which functions a built program keeps as functions of their own, read
//! from its DWARF.
//!
//! A function the optimiser kept has a `DW_TAG_subprogram` with code of
//! its own (an address range inside an executable section: a function the
//! linker dropped keeps its entry, with an address of 0 or a tombstone,
//! which no section holds). A function inlined somewhere is the
//! `DW_AT_abstract_origin` of a `DW_TAG_inlined_subroutine`. Either kind
//! names its declaration directly (`DW_AT_decl_file`, `DW_AT_decl_line`,
//! `DW_AT_name`) or through `DW_AT_abstract_origin` / `DW_AT_specification`
//! (an out-of-line copy of a function inlined elsewhere, a method declared
//! in its type), in this unit or another (`DW_FORM_ref_addr`, with LTO).
//!
//! rustc's `DW_AT_decl_line` is the line of the item's first token after
//! its attributes (`pub`, `fn`, `async`…), and `DW_AT_name` the bare name
//! with the generic arguments of the instance (`parse<u8>`), a closure's
//! `{closure#0}`, an `async fn` body's `{async_fn#0}`. Only declarations
//! in the files `wanted` accepts are recorded (the compiled packages'), so the
//! standard library's many entries cost a lookup each, nothing more. A
//! kept function's size is its largest copy's (its ranges, or its
//! symbol's size).

use gimli::{AttributeValue, EndianSlice, RunTimeEndian, Unit};
use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// A function as its declaration names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Decl {
    /// Its source file, as the compiler was given it (made absolute).
    pub(crate) file: PathBuf,
    /// The line of its first token after the attributes.
    pub(crate) line: u32,
    /// Its name without generic arguments (`parse`, `{closure#0}`).
    pub(crate) name: String,
}

/// What one program's debug info says of the wanted files' functions.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// Functions with code of their own (an out-of-line instance), with
    /// the size in bytes of their largest instance.
    pub(crate) kept: BTreeMap<Decl, u64>,
    /// Functions inlined into another somewhere (kept ones included).
    pub(crate) inlined: BTreeSet<Decl>,
    /// Kept functions, with the size in bytes of the largest function
    /// inlined at a call of their own code (not inside another inlined
    /// function) in any instance: what a body emitted several times would
    /// call from several places, and the optimiser might then keep out
    /// of line.
    pub(crate) holds: BTreeMap<Decl, u64>,
    /// Compilation units read (0: the program has no debug info).
    pub(crate) units: usize,
}

type R<'a> = EndianSlice<'a, RunTimeEndian>;

/// A subprogram entry: its declaration, or the entry that holds it.
enum Entry {
    Decl(usize),
    Ref(usize),
}

/// Reads the program at `path`; `wanted` says which declaration files
/// matter.
///
/// # Errors
///
/// A file that cannot be read, is not an object file, or whose debug
/// info does not parse (compressed sections included: not supported).
pub(crate) fn read(path: &Path, wanted: &dyn Fn(&Path) -> bool) -> Result<Seen, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", path.display()))?;
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let text: Vec<(u64, u64)> = file
        .sections()
        .filter(|s| s.kind() == SectionKind::Text)
        .map(|s| (s.address(), s.address().saturating_add(s.size())))
        .collect();
    let in_text = |a: u64| text.iter().any(|&(lo, hi)| a >= lo && a < hi);
    // Function symbols without their suffixes (`.llvm.123` of a promoted
    // local, `.cold`): the names the debug info gives.
    let mut symbols: HashMap<&[u8], u64> = HashMap::new();
    for s in file.symbols() {
        if s.is_definition() && s.kind() == SymbolKind::Text && in_text(s.address()) {
            if let Ok(name) = s.name_bytes() {
                let size = symbols.entry(unsuffixed(name)).or_default();
                *size = (*size).max(s.size());
            }
        }
    }
    let sections = gimli::DwarfSections::load(|id| -> Result<Cow<[u8]>, String> {
        match file.section_by_name(id.name()) {
            Some(s) => s
                .uncompressed_data()
                .map_err(|e| format!("{}: {}: {e}", path.display(), id.name())),
            None => Ok(Cow::Borrowed(&[][..])),
        }
    })?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    let bad = |e: gimli::Error| format!("{}: debug info: {e}", path.display());
    let mut walk = Walk {
        wanted,
        symbols: &symbols,
        decls: Vec::new(),
        entries: HashMap::new(),
        concrete: Vec::new(),
        inlined: HashSet::new(),
        holds: HashMap::new(),
        units: 0,
    };
    let mut headers = dwarf.units();
    while let Some(header) = headers.next().map_err(bad)? {
        let unit = dwarf.unit(header).map_err(bad)?;
        walk.unit(&dwarf, &unit, &in_text).map_err(bad)?;
    }
    let mut seen = Seen {
        units: walk.units,
        ..Seen::default()
    };
    for &(at, size) in &walk.concrete {
        if let Some(d) = walk.resolve(at) {
            let largest = seen.kept.entry(d.clone()).or_default();
            *largest = (*largest).max(size);
        }
    }
    for at in &walk.inlined {
        if let Some(d) = walk.resolve(*at) {
            seen.inlined.insert(d.clone());
        }
    }
    for (&at, &size) in &walk.holds {
        if let Some(d) = walk.resolve(at) {
            let largest = seen.holds.entry(d.clone()).or_default();
            *largest = (*largest).max(size);
        }
    }
    Ok(seen)
}

/// The walk over every unit's entries.
struct Walk<'w> {
    wanted: &'w dyn Fn(&Path) -> bool,
    /// The program's function symbols, and their sizes.
    symbols: &'w HashMap<&'w [u8], u64>,
    decls: Vec<Decl>,
    /// Subprogram entries by their offset in `.debug_info`.
    entries: HashMap<usize, Entry>,
    /// Subprograms with code of their own, and its size.
    concrete: Vec<(usize, u64)>,
    /// The origins of inlined instances.
    inlined: HashSet<usize>,
    /// Subprograms with code of their own, and the largest function
    /// inlined directly into that code (see [`Seen::holds`]).
    holds: HashMap<usize, u64>,
    units: usize,
}

impl Walk<'_> {
    fn unit(
        &mut self,
        dwarf: &gimli::Dwarf<R>,
        unit: &Unit<R>,
        in_text: &dyn Fn(u64) -> bool,
    ) -> gimli::Result<()> {
        let Some(base) = unit.header.offset().as_debug_info_offset() else {
            return Ok(());
        };
        self.units += 1;
        let base = base.0;
        // File index → the wanted path, if it is one.
        let mut files: HashMap<u64, Option<PathBuf>> = HashMap::new();
        let mut cursor = unit.entries();
        // The depth of the entry, and of the innermost open subprogram
        // with code (and its offset) and inlined instance, if any.
        let mut depth = 0isize;
        let mut in_code: Option<(isize, usize)> = None;
        let mut in_inlined: Option<isize> = None;
        while let Some((delta, e)) = cursor.next_dfs()? {
            depth += delta;
            if in_code.is_some_and(|(d, _)| depth <= d) {
                in_code = None;
            }
            if in_inlined.is_some_and(|d| depth <= d) {
                in_inlined = None;
            }
            let reference = |name| -> gimli::Result<Option<usize>> {
                Ok(match e.attr_value(name)? {
                    Some(AttributeValue::UnitRef(o)) => Some(base + o.0),
                    Some(AttributeValue::DebugInfoRef(o)) => Some(o.0),
                    _ => None,
                })
            };
            if e.tag() == gimli::DW_TAG_inlined_subroutine {
                if let Some(origin) = reference(gimli::DW_AT_abstract_origin)? {
                    self.inlined.insert(origin);
                }
                if let (Some((_, holder)), None) = (in_code, in_inlined) {
                    let size = code_size(dwarf, unit, e, in_text)?;
                    let largest = self.holds.entry(holder).or_default();
                    *largest = (*largest).max(size);
                }
                if in_inlined.is_none() {
                    in_inlined = Some(depth);
                }
                continue;
            }
            if e.tag() != gimli::DW_TAG_subprogram {
                continue;
            }
            let at = base + e.offset().0;
            let size = code_size(dwarf, unit, e, in_text)?;
            if size > 0 {
                self.concrete.push((at, size));
                in_code = Some((depth, at));
                in_inlined = None;
            }
            let file = match e.attr_value(gimli::DW_AT_decl_file)? {
                Some(AttributeValue::FileIndex(i) | AttributeValue::Udata(i)) => Some(i),
                _ => None,
            };
            let line = e
                .attr_value(gimli::DW_AT_decl_line)?
                .and_then(|v| v.udata_value());
            if let (Some(file), Some(line)) = (file, line) {
                let path = files
                    .entry(file)
                    .or_insert_with(|| file_path(dwarf, unit, file).filter(|p| (self.wanted)(p)));
                let (Some(path), Some(name)) = (path, e.attr_value(gimli::DW_AT_name)?) else {
                    continue;
                };
                let name = dwarf.attr_string(unit, name)?;
                let name = String::from_utf8_lossy(name.slice());
                let bare = name.split('<').next().unwrap_or(&name);
                self.decls.push(Decl {
                    file: path.clone(),
                    line: u32::try_from(line).unwrap_or(u32::MAX),
                    name: bare.to_string(),
                });
                self.entries.insert(at, Entry::Decl(self.decls.len() - 1));
                let linkage = e
                    .attr_value(gimli::DW_AT_linkage_name)?
                    .map(|v| dwarf.attr_string(unit, v))
                    .transpose()?;
                if let Some(size) = linkage.and_then(|l| self.symbols.get(l.slice())) {
                    self.concrete.push((at, *size));
                }
            } else if let Some(origin) =
                reference(gimli::DW_AT_abstract_origin)?.or(reference(gimli::DW_AT_specification)?)
            {
                self.entries.insert(at, Entry::Ref(origin));
            }
        }
        Ok(())
    }

    /// The declaration of the subprogram entry at `at`, through at most a
    /// few references.
    fn resolve(&self, mut at: usize) -> Option<&Decl> {
        for _ in 0..8 {
            match self.entries.get(&at)? {
                Entry::Decl(i) => return self.decls.get(*i),
                Entry::Ref(to) => at = *to,
            }
        }
        None
    }
}

/// The bytes of code an entry's address ranges cover in executable
/// sections.
fn code_size(
    dwarf: &gimli::Dwarf<R>,
    unit: &Unit<R>,
    e: &gimli::DebuggingInformationEntry<R>,
    in_text: &dyn Fn(u64) -> bool,
) -> gimli::Result<u64> {
    let mut ranges = dwarf.die_ranges(unit, e)?;
    let mut size = 0;
    while let Some(r) = ranges.next()? {
        if r.begin < r.end && in_text(r.begin) {
            size += r.end - r.begin;
        }
    }
    Ok(size)
}

/// A symbol's name without what LLVM appends to it (`.llvm.123` to a
/// promoted local, `.cold.1` to a split part): a legacy Rust name
/// (`_ZN` + length-prefixed segments + `E`, whose segments may hold `..`)
/// up to its `E`, any other name up to its first `.`.
fn unsuffixed(name: &[u8]) -> &[u8] {
    if let Some(mut rest) = name.strip_prefix(b"_ZN") {
        loop {
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            if digits == 0 {
                break;
            }
            let len: usize = std::str::from_utf8(&rest[..digits])
                .ok()
                .and_then(|d| d.parse().ok())
                .unwrap_or(usize::MAX);
            match rest.get(digits.saturating_add(len)..) {
                Some(r) => rest = r,
                None => return name,
            }
        }
        if rest.first() == Some(&b'E') {
            return &name[..name.len() - rest.len() + 1];
        }
        return name;
    }
    match name.iter().position(|&b| b == b'.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

/// The path of file `index` of `unit`'s line program: the unit's
/// compilation directory, the file's directory, its name (each absolute
/// one replaces what came before, as a path joins).
fn file_path(dwarf: &gimli::Dwarf<R>, unit: &Unit<R>, index: u64) -> Option<PathBuf> {
    let program = unit.line_program.as_ref()?;
    let header = program.header();
    let entry = header.file(index)?;
    let mut path = PathBuf::new();
    if let Some(dir) = &unit.comp_dir {
        path.push(os_path(dir.slice()));
    }
    if let Some(dir) = entry.directory(header) {
        path.push(os_path(dwarf.attr_string(unit, dir).ok()?.slice()));
    }
    path.push(os_path(
        dwarf.attr_string(unit, entry.path_name()).ok()?.slice(),
    ));
    Some(path)
}

#[cfg(unix)]
fn os_path(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn os_path(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::unsuffixed;

    #[test]
    fn symbol_suffixes() {
        let u = |s: &str| String::from_utf8_lossy(unsuffixed(s.as_bytes())).into_owned();
        let legacy = "_ZN83_$LT$pulldown_cmark..strings..CowStr$u20$as$u20$core..convert..AsRef$LT$str$GT$$GT$6as_ref17h7a132b15e4c8a703E";
        assert_eq!(u(legacy), legacy);
        assert_eq!(u(&format!("{legacy}.llvm.1234")), legacy);
        assert_eq!(
            u("_ZN4core3fmt5Write9write_fmt17h0123456789abcdefE.cold.1"),
            "_ZN4core3fmt5Write9write_fmt17h0123456789abcdefE"
        );
        assert_eq!(u("_RNvCs1_4test4main.llvm.9"), "_RNvCs1_4test4main");
        assert_eq!(u("memcpy"), "memcpy");
        assert_eq!(u(".hidden"), ".hidden");
        // A broken length never reads past the name.
        assert_eq!(u("_ZN99abcE"), "_ZN99abcE");
    }
}
