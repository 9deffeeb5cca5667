use std::ffi::{c_char, c_void, CStr};

use crate::error::{check, Result};

/// Sink or source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// An output: capturing it records its monitor (app audio).
    Sink,
    /// An input that is not a monitor: a microphone.
    Source,
}

/// A capture device of the audio server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Sink or source.
    pub kind: DeviceKind,
    /// The stable name `Capture::set_app_device`/`set_mic_device` take.
    pub name: String,
    /// A name for people.
    pub description: String,
    /// The server's default sink, or default source.
    pub is_default: bool,
}

/// An application stream playing now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct App {
    /// The application's name.
    pub application_name: String,
    /// Its binary.
    pub binary: String,
    /// Its process id.
    pub pid: i32,
    /// The stream's id on the server.
    pub stream_id: u32,
    /// False while it is corked (paused).
    pub running: bool,
}

fn owned(text: *const c_char) -> String {
    if text.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
    }
}

unsafe extern "C" fn add_device(
    kind: i32, name: *const c_char, description: *const c_char, is_default: bool, user_data: *mut c_void,
) {
    let devices = &mut *(user_data as *mut Vec<Device>);
    let kind = if kind == deskaudio_sys::DESKAUDIO_DEVICE_SOURCE as i32 { DeviceKind::Source } else { DeviceKind::Sink };
    devices.push(Device { kind, name: owned(name), description: owned(description), is_default });
}

unsafe extern "C" fn add_app(
    application_name: *const c_char, binary: *const c_char, pid: i32, stream_id: u32, running: bool,
    user_data: *mut c_void,
) {
    let apps = &mut *(user_data as *mut Vec<App>);
    apps.push(App { application_name: owned(application_name), binary: owned(binary), pid, stream_id, running });
}

/// The audio server's capture devices: every sink (its monitor is app audio) and every
/// source that is not a monitor, defaults marked. Blocks up to 3 s for the server.
pub fn devices() -> Result<Vec<Device>> {
    let mut devices: Vec<Device> = Vec::new();
    check(unsafe { deskaudio_sys::deskaudio_list_devices(Some(add_device), &mut devices as *mut Vec<Device> as *mut c_void) })?;
    Ok(devices)
}

/// The streams applications play now. Blocks up to 3 s for the server.
pub fn apps() -> Result<Vec<App>> {
    let mut apps: Vec<App> = Vec::new();
    check(unsafe { deskaudio_sys::deskaudio_list_apps(Some(add_app), &mut apps as *mut Vec<App> as *mut c_void) })?;
    Ok(apps)
}
