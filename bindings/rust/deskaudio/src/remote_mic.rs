use std::ffi::{c_void, CString};

use crate::closure_slot::ClosureSlot;
use crate::error::{check, Error, Result};

type RecordingClosure = Box<dyn FnMut(Recording) + Send>;

/// When applications start or stop recording from a remote microphone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recording {
    /// The first application started recording: ask the viewer to open its microphone.
    Started,
    /// The last one stopped.
    Stopped,
}

/// The remote microphone's counts (`deskaudio_remote_mic_stats`).
pub type RemoteMicStats = deskaudio_sys::deskaudio_remote_mic_stats;

/// The viewer's microphone made a microphone on this machine: applications record from it
/// by its name; the host feeds it the viewer's AudioFrames as they arrive, from any thread.
/// Dropping it removes it from the server.
pub struct RemoteMic {
    raw: *mut deskaudio_sys::deskaudio_remote_mic,
    _events: Box<ClosureSlot<RecordingClosure>>,
}

unsafe impl Send for RemoteMic {}
unsafe impl Sync for RemoteMic {}

unsafe extern "C" fn recording_trampoline(event: i32, user_data: *mut c_void) {
    let Some(slot) = ClosureSlot::<RecordingClosure>::from_user_data(user_data) else { return };
    let recording =
        if event == deskaudio_sys::DESKAUDIO_REMOTE_MIC_RECORDING_STARTED as i32 { Recording::Started } else { Recording::Stopped };
    slot.call(|closure| closure(recording));
}

impl RemoteMic {
    /// Puts a microphone named `name` (1–64 letters, digits, `_`, `-`, `.`), shown as
    /// `description`, on the session's audio server; `on_recording` hears when applications
    /// start and stop recording from it (a panic in it is caught and it is not called again).
    pub fn new(name: &str, description: &str, on_recording: impl FnMut(Recording) + Send + 'static) -> Result<RemoteMic> {
        let name_text = CString::new(name).map_err(|_| Error::invalid_argument("the name holds a NUL byte"))?;
        let description_text =
            CString::new(description).map_err(|_| Error::invalid_argument("the description holds a NUL byte"))?;
        let slot = ClosureSlot::<RecordingClosure>::new(Box::new(on_recording));
        let raw = unsafe {
            deskaudio_sys::deskaudio_remote_mic_create(
                name_text.as_ptr(), description_text.as_ptr(), Some(recording_trampoline), slot.user_data())
        };
        if raw.is_null() {
            return Err(Error::last(deskaudio_sys::DESKAUDIO_ERROR_INVALID_ARGUMENT));
        }
        Ok(RemoteMic { raw, _events: slot })
    }

    /// Feeds one AudioFrame as it arrived; bad bytes are an error and change nothing.
    pub fn feed(&self, frame: &[u8]) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_remote_mic_feed(self.raw, frame.as_ptr(), frame.len() as deskaudio_sys::size_t) }).map(drop)
    }

    /// Counts and the delay from feed to playback.
    pub fn stats(&self) -> Result<RemoteMicStats> {
        let mut stats: RemoteMicStats = unsafe { std::mem::zeroed() };
        check(unsafe { deskaudio_sys::deskaudio_remote_mic_get_stats(self.raw, &mut stats, std::mem::size_of::<RemoteMicStats>() as deskaudio_sys::size_t) })?;
        Ok(stats)
    }
}

impl Drop for RemoteMic {
    fn drop(&mut self) {
        unsafe { deskaudio_sys::deskaudio_remote_mic_destroy(self.raw) };
    }
}
