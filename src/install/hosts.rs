//! The hosts baton registers with, as install and doctor name them: the one host model
//! lives in [`crate::host`] ([`HostKind`](crate::host::HostKind), its events, scopes and
//! settings paths); this file keeps install's names for it and the path display.

pub use crate::host::{EventSpec, HostKind as Host, Places, Scope, show_path};
