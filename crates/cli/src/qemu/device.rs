//! What one `-device` asked for, on either machine: the answer
//! [`values`](super::values) gives for the `pc` and [`virt`](super::virt)
//! for the `virt` machine, read by [`parse`](super::parse).

use crate::args::DeviceArg;

/// What a `-device` value asked for.
pub(super) enum DeviceSpec {
    /// A device to add (`None`: isa-debug-exit, which is always there).
    Add(Option<DeviceArg>),
    /// A piece of chr-testdev (`virt`).
    Serial(SerialPart),
    List,
    Options(&'static str),
}

/// A piece of chr-testdev given by `-device`.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum SerialPart {
    /// `-device virtio-serial-device`.
    Bus,
    /// `-device virtconsole,chardev=ID`.
    Console {
        /// The chardev's id.
        chardev: String,
    },
}
