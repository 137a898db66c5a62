//! Which addresses lie in the standard library's own compiled code (its
//! precompiled units: `std`, `core`, `alloc`, `compiler_builtins`, built
//! by the toolchain under `/rustc/<commit>`), told from the binary's
//! `.debug_aranges` and each such unit's compilation directory alone.
//!
//! An address there holds no function of the program and none of
//! tickprof's (those units were compiled before either existed): its
//! chain of functions is the standard library's only, which the report
//! counts as the marked call's own code (see the parent module). So it is
//! not resolved: resolving it parsed the whole line program and function
//! tree of the unit it lies in (the standard library's code in one unit
//! or a few), most of the exit copy's work on semver's workload, whose
//! samples fall in `core::fmt` a fifth of the time.
//!
//! Units without address ranges in `.debug_aranges`, and a binary whose
//! sections cannot be read, are resolved as before: nothing is skipped.

use std::sync::OnceLock;

/// The standard library's units' address ranges, as run-time addresses
/// (start, end), sorted.
fn ranges() -> &'static [(u64, u64)] {
    static R: OnceLock<Vec<(u64, u64)>> = OnceLock::new();
    R.get_or_init(|| load().unwrap_or_default())
}

/// Whether `pc` lies in the standard library's precompiled code.
pub(super) fn in_std_code(pc: u64) -> bool {
    let r = ranges();
    let i = r.partition_point(|&(start, _)| start <= pc);
    i > 0 && pc < r[i - 1].1
}

/// The object tickprof is linked into: its file (`/proc/self/exe` for
/// the program itself) and its load bias (run-time address − file
/// address), from the loader's list of objects.
fn own_object() -> Option<(std::path::PathBuf, u64)> {
    struct Find {
        addr: usize,
        found: Option<(std::path::PathBuf, u64)>,
    }
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid `info` for the call's length;
        // `data` is the `Find` given to `dl_iterate_phdr` below.
        let (info, find) = unsafe { (&*info, &mut *data.cast::<Find>()) };
        let headers = if info.dlpi_phdr.is_null() {
            &[][..]
        } else {
            // SAFETY: `dlpi_phnum` headers at `dlpi_phdr`, per the loader.
            unsafe { core::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
        };
        let base = info.dlpi_addr as usize;
        let holds = headers.iter().any(|h| {
            let start = base.wrapping_add(h.p_vaddr as usize);
            h.p_type == libc::PT_LOAD
                && find.addr >= start
                && find.addr < start.wrapping_add(h.p_memsz as usize)
        });
        if !holds {
            return 0;
        }
        let name = if info.dlpi_name.is_null() {
            Default::default()
        } else {
            // SAFETY: a NUL-terminated name, per the loader.
            unsafe { std::ffi::CStr::from_ptr(info.dlpi_name) }
                .to_string_lossy()
                .into_owned()
        };
        let path = if name.is_empty() {
            "/proc/self/exe".into()
        } else {
            name.into()
        };
        find.found = Some((path, base as u64));
        1
    }
    let mut find = Find {
        addr: own_object as *const () as usize,
        found: None,
    };
    // SAFETY: `each` matches the callback's type and only reads what the
    // loader passes; `find` outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut find as *mut Find).cast()) };
    find.found
}

/// The ranges, read from the object's file (mapped, read-only).
fn load() -> Option<Vec<(u64, u64)>> {
    let (path, bias) = own_object()?;
    let file = std::fs::File::open(path).ok()?;
    let len = usize::try_from(file.metadata().ok()?.len()).ok()?;
    let map = Map::new(&file, len)?;
    let mut out = std_ranges(map.bytes())?;
    for r in &mut out {
        *r = (r.0.wrapping_add(bias), r.1.wrapping_add(bias));
    }
    out.sort_unstable();
    Some(out)
}

/// A file mapped read-only, unmapped on drop.
struct Map {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Map {
    fn new(file: &std::fs::File, len: usize) -> Option<Map> {
        use std::os::fd::AsRawFd;
        if len == 0 {
            return None;
        }
        // SAFETY: a private read-only mapping of a file we hold open; no
        // memory of the program's is touched.
        let ptr = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then_some(Map { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes mapped at `ptr` while `self` lives.
        unsafe { core::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping `new` made, unmapped once.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// The file-address ranges of the units in an ELF file's `.debug_aranges`
/// whose compilation directory is the toolchain's (`/rustc/…`).
fn std_ranges(data: &[u8]) -> Option<Vec<(u64, u64)>> {
    use object::{Object, ObjectSection};
    let elf = object::File::parse(data).ok()?;
    let endian = if elf.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let section =
        |id: gimli::SectionId| -> Result<gimli::EndianSlice<'_, gimli::RunTimeEndian>, ()> {
            let bytes = elf
                .section_by_name(id.name())
                .and_then(|s| s.data().ok())
                .unwrap_or(&[]);
            Ok(gimli::EndianSlice::new(bytes, endian))
        };
    let dwarf = gimli::Dwarf::load(section).ok()?;
    let mut out = Vec::new();
    let mut headers = dwarf.debug_aranges.headers();
    while let Ok(Some(header)) = headers.next() {
        let Ok(unit) = dwarf
            .debug_info
            .header_from_offset(header.debug_info_offset())
            .and_then(|h| dwarf.unit(h))
        else {
            continue;
        };
        let is_std = unit
            .comp_dir
            .is_some_and(|d| d.slice().starts_with(b"/rustc/"));
        if !is_std {
            continue;
        }
        let mut entries = header.entries();
        while let Ok(Some(e)) = entries.next() {
            let r = e.range();
            if r.end > r.begin {
                out.push((r.begin, r.end));
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_librarys_code_is_found_and_this_crates_is_not() {
        // This test binary: the standard library's precompiled units have
        // address ranges; `Vec::new`'s code does not matter, a function of
        // std that is not generic does (`std::process::id`).
        let std_fn = std::process::id as fn() -> u32 as *const () as u64;
        let own = the_standard_librarys_code_is_found_and_this_crates_is_not as *const () as u64;
        assert!(!in_std_code(own));
        assert!(!in_std_code(0));
        // A toolchain without debug info for std (or without aranges)
        // finds nothing, and skips nothing: the test says which.
        if !ranges().is_empty() {
            assert!(in_std_code(std_fn), "{std_fn:#x} not in {:x?}", ranges());
        }
    }
}
