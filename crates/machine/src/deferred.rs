//! Start-up work the guest does not wait for.
//!
//! A helper thread that only serves events the guest has to program first
//! (the RTC's or PL031's timer) is started once vCPU 0 has been let into the
//! guest, not before: a plain `trapline run` reaches its first KVM_RUN
//! without paying for that thread's creation, its allocator arena and its
//! seccomp filter (see docs/bench.md#footprint). The guest cannot tell: the
//! device keeps its registers without the thread, and the thread computes
//! its first deadline from them when it starts.

use crate::MachineError;

/// A started helper; dropping it stops and joins its thread.
pub(crate) type Helper = Box<dyn Send>;

/// How to start one helper.
pub(crate) type DeferredStart = Box<dyn FnOnce() -> Result<Helper, MachineError> + Send>;

/// Start every helper in order; stop at the first that fails (the ones
/// already started are dropped, which stops them).
pub(crate) fn start_all(starts: Vec<DeferredStart>) -> Result<Vec<Helper>, MachineError> {
    starts.into_iter().map(|s| s()).collect()
}

/// What a helper thread runs first: the helper threads' seccomp filter
/// (compiled here, on the main thread, when `seccomp`), with a warning
/// naming `thread` ("RTC timer") when it cannot be installed; the thread
/// runs on without it.
pub(crate) fn on_helper_start(
    seccomp: bool,
    thread: &'static str,
) -> Result<Box<dyn FnOnce() + Send>, MachineError> {
    let helper = trapline_seccomp::ThreadKind::Helper;
    let filter = if seccomp {
        Some(trapline_seccomp::filter(helper)?)
    } else {
        None
    };
    Ok(Box::new(move || {
        if let Some(f) = filter {
            if let Err(e) = trapline_seccomp::install_program(helper, &f) {
                eprintln!(
                    "trapline: warning: {thread} thread runs without seccomp: {}",
                    crate::words::clean(&e.to_string())
                );
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Guard(Arc<AtomicUsize>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn starts_in_order_and_stops_the_started_on_failure() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let d = dropped.clone();
        let ok: DeferredStart = Box::new(move || Ok(Box::new(Guard(d)) as Helper));
        let fail: DeferredStart = Box::new(|| Err(MachineError::Config("no".into())));
        assert!(start_all(vec![ok, fail]).is_err());
        assert_eq!(
            dropped.load(Ordering::SeqCst),
            1,
            "the started one was stopped"
        );
        let d = dropped.clone();
        let ok: DeferredStart = Box::new(move || Ok(Box::new(Guard(d)) as Helper));
        let helpers = start_all(vec![ok]).unwrap();
        assert_eq!(helpers.len(), 1);
        drop(helpers);
        assert_eq!(dropped.load(Ordering::SeqCst), 2);
    }
}
