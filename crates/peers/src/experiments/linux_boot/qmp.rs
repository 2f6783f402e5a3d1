//! Just enough of QEMU's machine protocol (QMP, JSON lines over a Unix
//! socket) for the linux-boot experiment: wait for the guest's power-off
//! (`SHUTDOWN` event; QEMU runs with `-no-shutdown` so the VM is still
//! there), read KVM's statistics for the VM and its vCPUs (`query-stats`,
//! QEMU 7.1 and later: the same binary statistics trapline's `--stat`
//! reads, so no debugfs is needed), then `quit`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A connected, negotiated QMP session.
pub struct Qmp {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Qmp {
    /// Connect to `socket` (retrying until QEMU has created it, for at
    /// most `wait`) and leave capabilities negotiation mode.
    pub fn connect(socket: &Path, wait: Duration) -> Result<Qmp, String> {
        let give_up = Instant::now() + wait;
        let stream = loop {
            match UnixStream::connect(socket) {
                Ok(s) => break s,
                Err(e) if Instant::now() >= give_up => {
                    return Err(format!("QMP socket {}: {e}", socket.display()))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        let writer = stream.try_clone().map_err(|e| format!("QMP: {e}"))?;
        let mut q = Qmp {
            reader: BufReader::new(stream),
            writer,
        };
        let greeting = q.next_message(wait)?;
        if greeting.get("QMP").is_none() {
            return Err(format!("QMP: unexpected greeting {greeting}"));
        }
        q.execute("qmp_capabilities", None)?;
        Ok(q)
    }

    /// The next JSON message, waiting at most `wait`.
    fn next_message(&mut self, wait: Duration) -> Result<Value, String> {
        self.reader
            .get_ref()
            .set_read_timeout(Some(wait.max(Duration::from_millis(1))))
            .map_err(|e| format!("QMP: {e}"))?;
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => Err("QMP: QEMU closed the connection".into()),
            Ok(_) => serde_json::from_str(&line).map_err(|e| format!("QMP: {e}: {line}")),
            Err(e) => Err(format!("QMP: {e}")),
        }
    }

    /// Run one command; its `return` value (events in between are skipped).
    pub fn execute(&mut self, command: &str, arguments: Option<Value>) -> Result<Value, String> {
        let mut msg = json!({ "execute": command });
        if let Some(a) = arguments {
            msg["arguments"] = a;
        }
        writeln!(self.writer, "{msg}").map_err(|e| format!("QMP {command}: {e}"))?;
        loop {
            let m = self.next_message(Duration::from_secs(30))?;
            if let Some(r) = m.get("return") {
                return Ok(r.clone());
            }
            if let Some(e) = m.get("error") {
                return Err(format!("QMP {command}: {e}"));
            }
        }
    }

    /// Wait for the `SHUTDOWN` event (the guest powered off), at most
    /// until `deadline`; the instant it arrived.
    pub fn wait_shutdown(&mut self, deadline: Instant) -> Result<Instant, String> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err("QMP: no SHUTDOWN event before the timeout".into());
            }
            let m = self.next_message(left)?;
            if m.get("event").and_then(Value::as_str) == Some("SHUTDOWN") {
                return Ok(Instant::now());
            }
        }
    }

    /// KVM's counters for the VM and its vCPUs (summed), by KVM's names.
    pub fn kvm_stats(&mut self) -> Result<BTreeMap<String, u64>, String> {
        let mut out = BTreeMap::new();
        for target in ["vm", "vcpu"] {
            let r = self.execute("query-stats", Some(json!({ "target": target })))?;
            add_stats(&r, &mut out);
        }
        Ok(out)
    }

    /// Ask QEMU to exit.
    pub fn quit(&mut self) {
        let _ = self.execute("quit", None);
    }
}

/// Sum the integer statistics of a `query-stats` reply into `out`
/// (histograms and booleans are left out).
pub fn add_stats(reply: &Value, out: &mut BTreeMap<String, u64>) {
    for result in reply.as_array().into_iter().flatten() {
        if result.get("provider").and_then(Value::as_str) != Some("kvm") {
            continue;
        }
        for s in result["stats"].as_array().into_iter().flatten() {
            if let (Some(name), Some(v)) = (s["name"].as_str(), s["value"].as_u64()) {
                *out.entry(name.to_string()).or_default() += v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_summed_over_vcpus_and_only_integers_kept() {
        let reply = json!([
            {"provider": "kvm", "qom-path": "/machine/a", "stats": [
                {"name": "exits", "value": 10}, {"name": "guest_mode", "value": false},
                {"name": "halt_wait_hist", "value": [0, 1]}]},
            {"provider": "kvm", "qom-path": "/machine/b", "stats": [{"name": "exits", "value": 5}]},
            {"provider": "other", "stats": [{"name": "exits", "value": 100}]}
        ]);
        let mut m = BTreeMap::new();
        add_stats(&reply, &mut m);
        assert_eq!(m.get("exits"), Some(&15));
        assert_eq!(m.len(), 1);
    }
}
