use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};

/// A closure the library calls through a C function pointer: boxed, its address the
/// callback's `user_data`. A panic inside the closure is caught (it never unwinds into the
/// library), its message kept, and the closure is not called again.
pub(crate) struct ClosureSlot<T> {
    closure: Mutex<Option<T>>,
    panic: Mutex<Option<String>>,
}

fn lock<V>(mutex: &Mutex<V>) -> MutexGuard<'_, V> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<T> ClosureSlot<T> {
    /// A slot holding `closure`, boxed so that its address stays put.
    pub(crate) fn new(closure: T) -> Box<ClosureSlot<T>> {
        Box::new(ClosureSlot { closure: Mutex::new(Some(closure)), panic: Mutex::new(None) })
    }

    /// The slot behind a callback's `user_data`.
    ///
    /// # Safety
    /// `user_data` is the address of a live `ClosureSlot<T>` made by `new`.
    pub(crate) unsafe fn from_user_data<'a>(user_data: *mut std::ffi::c_void) -> Option<&'a ClosureSlot<T>> {
        (user_data as *const ClosureSlot<T>).as_ref()
    }

    /// The address to give the library as `user_data`.
    pub(crate) fn user_data(self: &Box<Self>) -> *mut std::ffi::c_void {
        &**self as *const ClosureSlot<T> as *mut std::ffi::c_void
    }

    /// Runs `body` on the closure, unless an earlier call panicked; catches a panic.
    pub(crate) fn call(&self, body: impl FnOnce(&mut T)) {
        let mut closure = lock(&self.closure);
        let Some(callable) = closure.as_mut() else { return };
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| body(callable))) {
            *closure = None;
            *lock(&self.panic) = Some(panic_text(payload.as_ref()));
        }
    }

    /// The message of the panic that stopped the closure, if one did.
    pub(crate) fn panic_message(&self) -> Option<String> {
        lock(&self.panic).clone()
    }
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a payload that is not text".to_string()
    }
}
