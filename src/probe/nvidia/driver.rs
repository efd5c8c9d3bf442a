//! The fallbacks for when NVML cannot answer: the kernel module's own
//! version file, and `nvidia-smi --query-gpu` (never its banner, whose
//! labels changed across drivers), asked field by field because old drivers
//! reject fields they do not know (`compute_cap` before R510 or so).

use std::ffi::OsString;

use crate::host::Host;
use crate::snapshot::nvidia::{Driver, Gpu};
use crate::version::Ver;

const FIELDS: &[&str] = &["index", "name", "driver_version", "compute_cap", "memory.total", "uuid"];

/// Asks nvidia-smi for the GPUs. Fields an old nvidia-smi rejects are
/// dropped one at a time and the query repeated.
pub(crate) fn query_nvidia_smi(host: &Host) -> Result<(Option<Driver>, Vec<Gpu>), String> {
    let smi = host.which("nvidia-smi").ok_or_else(|| "nvidia-smi is not on PATH".to_string())?;
    let mut fields: Vec<&str> = FIELDS.to_vec();
    loop {
        let args: Vec<OsString> =
            vec![format!("--query-gpu={}", fields.join(",")).into(), "--format=csv,noheader,nounits".into()];
        let out = host.run(&smi, &args).map_err(|e| e.to_string())?;
        let stdout = out.stdout_lossy();
        if out.success() {
            return Ok(parse_csv(&stdout, &fields));
        }
        let said = format!("{stdout}{}", out.stderr_lossy());
        let rejected = fields.iter().position(|f| said.contains(&format!("\"{f}\"")) && *f != "index");
        match rejected {
            Some(i) => {
                fields.remove(i);
            }
            None => {
                let first = said.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
                let exit = match out.exit {
                    crate::host::Exit::TimedOut(_) => {
                        format!("{} (a driver that hangs does this)", out.describe_exit())
                    }
                    _ => out.describe_exit(),
                };
                return Err(match first.is_empty() {
                    true => format!("nvidia-smi {exit}"),
                    false => format!("nvidia-smi {exit}: {first}"),
                });
            }
        }
    }
}

fn parse_csv(text: &str, fields: &[&str]) -> (Option<Driver>, Vec<Gpu>) {
    let mut driver = None;
    let mut gpus = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != fields.len() {
            continue; // garbage or a name with a comma: skip rather than misread
        }
        let get = |name: &str| {
            fields
                .iter()
                .position(|f| *f == name)
                .map(|i| cells[i])
                .filter(|v| !v.is_empty() && !v.starts_with('['))
        };
        let Some(index) = get("index").and_then(|i| i.parse().ok()) else { continue };
        if driver.is_none()
            && let Some(v) = get("driver_version")
        {
            driver = Some(Driver { version: Ver::new(v), max_cuda: None, source: "nvidia-smi".into() });
        }
        gpus.push(Gpu {
            index,
            name: get("name").unwrap_or("unknown GPU").to_string(),
            compute_capability: get("compute_cap").map(Ver::new).filter(|v| v.parsed().is_some()),
            architecture: None,
            memory_mib: get("memory.total").and_then(|m| m.parse().ok()),
            uuid: get("uuid").map(str::to_string),
        });
    }
    (driver, gpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_rows_with_unknown_values_and_garbage_are_tolerated() {
        let fields = ["index", "name", "driver_version", "compute_cap", "memory.total", "uuid"];
        let text = "0, NVIDIA GeForce RTX 5090, 570.124.06, 12.0, 32607, GPU-11111111-2222-3333-4444-555555555555\n\
                    1, Tesla T4, 570.124.06, [N/A], [N/A], GPU-x\n\
                    garbage line\n";
        let (driver, gpus) = parse_csv(text, &fields);
        assert_eq!(driver.unwrap().version.raw(), "570.124.06");
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[0].compute_capability.as_ref().unwrap().raw(), "12.0");
        assert_eq!(gpus[0].memory_mib, Some(32607));
        assert_eq!(gpus[1].compute_capability, None);
    }
}
