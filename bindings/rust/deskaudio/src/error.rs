use std::ffi::CStr;
use std::fmt;

/// A failed call: the library's `deskaudio_status` (negative) and its explanation, the text
/// `deskaudio_last_error()` held on the calling thread right after the failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: i32,
    message: String,
}

/// What every fallible call returns.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The error of the call that just failed on this thread with `status`.
    pub(crate) fn last(status: i32) -> Error {
        let text = unsafe { deskaudio_sys::deskaudio_last_error() };
        let message = if text.is_null() {
            String::new()
        } else {
            unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
        };
        Error { status, message }
    }

    /// An error the crate itself found before calling the library (a name with a NUL byte).
    pub(crate) fn invalid_argument(message: impl Into<String>) -> Error {
        Error { status: deskaudio_sys::DESKAUDIO_ERROR_INVALID_ARGUMENT, message: message.into() }
    }

    /// The library's status code (a negative `DESKAUDIO_ERROR_*`).
    pub fn status(&self) -> i32 {
        self.status
    }

    /// The status's name, as `deskaudio_strerror()` gives it ("invalid argument", …).
    pub fn name(&self) -> String {
        let text = unsafe { deskaudio_sys::deskaudio_strerror(self.status) };
        if text.is_null() {
            return format!("status {}", self.status);
        }
        unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
    }

    /// What went wrong, in the library's words.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}: {}", self.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// `Ok(value)` for a status or value that is not negative, else the call's error.
pub(crate) fn check(status: i32) -> Result<i32> {
    if status < 0 {
        Err(Error::last(status))
    } else {
        Ok(status)
    }
}
