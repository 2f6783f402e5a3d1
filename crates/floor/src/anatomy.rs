//! The floor's side of the anatomy of a user exit: a raw VM's guest stamps
//! its clock just before and just after each access, and a bare KVM_RUN
//! loop (each architecture's `anatomy`) stamps the host's when KVM_RUN returns and just before it enters
//! it again (into arrays allocated before the run: the same two clock
//! reads and a few stores per exit that trapline's armed run loop does).
//! With KVM's clock offset the lab splits each access into the same legs
//! as trapline's (`trapline_abi::legs`).

use trapline_abi::{ClockAlign, Stamps};

/// One path's stamped accesses on the raw floor.
#[derive(Clone, Debug)]
pub struct FloorAnatomy {
    /// The path's scenario name.
    pub path: &'static str,
    /// Each access's four stamps.
    pub stamps: Vec<Stamps>,
    /// The median cost of the guest's two stamps with no access between
    /// them (0 where not measured).
    pub stamp_cost: u64,
    /// The guest's clock minus the host's, its error and how it was found;
    /// or why it could not be.
    pub offset: Result<(u64, u64, ClockAlign), String>,
}
