//! Canonicalization's memory, measured by a counting allocator: the work space stays within the bound
//! jcs.rs states, and an allocation that fails is the typed OUT_OF_MEMORY, never an abort (which in
//! WebAssembly is a trap that leaves the instance unusable).

use aigenora_core::jcs;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the live bytes allocated by the current thread while `measure` runs, and refuses an
/// allocation that would take them over its budget.
struct Counting;

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
    static BUDGET: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn grow(by: usize) -> bool {
    ON.with(|on| {
        if !on.get() {
            return true;
        }
        let live = LIVE.get().saturating_add(by);
        if live > BUDGET.get() {
            return false;
        }
        LIVE.set(live);
        PEAK.set(PEAK.get().max(live));
        true
    })
}

fn shrink(by: usize) {
    // Blocks allocated before `measure` started may be freed inside it: saturate rather than wrap.
    if ON.with(Cell::get) {
        LIVE.set(LIVE.get().saturating_sub(by));
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !grow(layout.size()) {
            return std::ptr::null_mut();
        }
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrink(layout.size());
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as the allocator of a WebAssembly instance may have to do it: old and new at once.
        if !grow(new_size) {
            return std::ptr::null_mut();
        }
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            shrink(new_size);
        } else {
            shrink(layout.size());
        }
        p
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Runs `f` with allocations over `budget` live bytes refused; returns its result and the peak.
fn measure<T>(budget: usize, f: impl FnOnce() -> T) -> (T, usize) {
    LIVE.set(0);
    PEAK.set(0);
    BUDGET.set(budget);
    ON.set(true);
    let r = f();
    ON.set(false);
    (r, PEAK.get())
}

fn zeros(n: usize) -> String {
    let mut s = "[0".to_owned();
    s.push_str(&",0".repeat(n - 1));
    s.push(']');
    s
}

#[test]
fn an_array_of_zeros_needs_only_its_own_size() {
    let text = zeros(500_000); // 1 MB
    let (out, peak) = measure(usize::MAX, || jcs::canonicalize(&text).map(|o| o.len()));
    assert_eq!(out, Ok(text.len()));
    // The output buffer, reserved once at the input's length; nothing per element.
    assert!(peak <= text.len() + 4096, "peak {peak} for {} bytes", text.len());
}

#[test]
fn an_unsorted_object_needs_a_copy_of_itself_and_a_few_words_per_member() {
    let n = 20_000;
    let text = format!("{{{}}}", (0..n).rev().map(|i| format!("\"k{i:05}\":[0,0,0,0,0,0,0,0]")).collect::<Vec<_>>().join(","));
    let (out, peak) = measure(usize::MAX, || jcs::canonicalize(&text));
    let out = out.unwrap();
    assert!(out.starts_with(b"{\"k00000\":[0,0,0,0,0,0,0,0],\"k00001\""));
    // Output + its reordered copy + four words per member, on a stack that grows by doubling.
    let bound = 2 * text.len() + 2 * n * std::mem::size_of::<[usize; 4]>();
    assert!(peak <= bound, "peak {peak}, bound {bound} for {} bytes", text.len());
}

#[test]
fn running_out_of_memory_is_a_typed_error() {
    let code = |r: aigenora_core::Result<Vec<u8>>| r.map(|_| ()).map_err(|e| e.code());
    // The output buffer cannot be reserved.
    let text = zeros(500_000);
    assert_eq!(measure(text.len() / 2, || code(jcs::canonicalize(&text))).0, Err("OUT_OF_MEMORY"));
    // The output outgrows the input (each 1e20 becomes 21 digits) and cannot grow.
    let text = format!("[{}]", vec!["1e20"; 50_000].join(","));
    assert_eq!(measure(2 * text.len(), || code(jcs::canonicalize(&text))).0, Err("OUT_OF_MEMORY"));
    assert_eq!(measure(usize::MAX, || code(jcs::canonicalize(&text))).0, Ok(()));
    // Reordering an object needs a copy of it.
    let text = format!("{{\"b\":{},\"a\":0}}", zeros(100_000));
    assert_eq!(measure(text.len() + text.len() / 2, || code(jcs::canonicalize(&text))).0, Err("OUT_OF_MEMORY"));
    assert_eq!(measure(3 * text.len(), || code(jcs::canonicalize(&text))).0, Ok(()));
}

#[test]
fn text_over_the_limit_is_refused_before_it_is_read() {
    let text = " ".repeat(jcs::MAX_INPUT_BYTES + 1);
    let (r, peak) = measure(usize::MAX, || jcs::canonicalize(&text));
    assert_eq!(r.unwrap_err().code(), "JSON_TOO_LARGE");
    assert_eq!(peak, 0);
    assert_eq!(jcs::canonicalize_bytes(text.as_bytes()).unwrap_err().code(), "JSON_TOO_LARGE");
    // At the limit exactly, the text is read (and here found empty).
    assert_eq!(jcs::canonicalize(&text[1..]).unwrap_err().code(), "JSON_SYNTAX");
}
