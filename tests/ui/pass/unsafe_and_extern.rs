#![deny(warnings)]

use tickprof::profile;

/// # Safety
///
/// `ptr` must be valid for reads.
#[profile]
unsafe fn read(ptr: *const u32) -> u32 {
    *ptr
}

#[profile]
extern "C" fn add_c(a: i32, b: i32) -> i32 {
    a + b
}

/// # Safety
///
/// `ptr` must be valid for reads.
#[profile]
pub unsafe extern "C" fn read_c(ptr: *const i32) -> i32 {
    *ptr
}

#[profile]
#[no_mangle]
pub extern "C" fn tickprof_ui_exported(x: u8) -> u8 {
    x.wrapping_mul(2)
}

fn main() {
    let value = 7;
    // SAFETY: `value` is a live local.
    assert_eq!(unsafe { read(&value) }, 7);
    assert_eq!(add_c(2, 3), 5);
    let c_fn: extern "C" fn(i32, i32) -> i32 = add_c;
    assert_eq!(c_fn(1, 1), 2);
    let signed = -4;
    // SAFETY: `signed` is a live local.
    assert_eq!(unsafe { read_c(&signed) }, -4);
    assert_eq!(tickprof_ui_exported(21), 42);
}
