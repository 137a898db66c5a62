;; The pthread functions Rust's std (1.96) imports on wasm32-wasip1, for
;; a wasi-libc older than its stubs for single-threaded programs (Debian
;; 12's, of 2022; newer wasi-libc and rustup's self-contained one have
;; them). Threads cannot start: pthread_create fails with ENOTSUP (58 in
;; WASI's numbering), so `std::thread::Builder::spawn` returns an error
;; and `std::thread::spawn` panics, as with the stubs. The attribute calls
;; succeed and touch nothing (std reads the attribute only through them).
;; CI only (scripts/ci_platforms.sh): assembled with
;; `wat2wasm --relocatable` and linked into the wasm32-wasip1 programs.
(module
  (func $pthread_attr_init (export "pthread_attr_init") (param i32) (result i32) i32.const 0)
  (func $pthread_attr_destroy (export "pthread_attr_destroy") (param i32) (result i32) i32.const 0)
  (func $pthread_attr_setstacksize (export "pthread_attr_setstacksize") (param i32 i32) (result i32) i32.const 0)
  (func $pthread_create (export "pthread_create") (param i32 i32 i32 i32) (result i32) i32.const 58)
  (func $pthread_join (export "pthread_join") (param i32 i32) (result i32) i32.const 58)
  (func $pthread_detach (export "pthread_detach") (param i32) (result i32) i32.const 58))
