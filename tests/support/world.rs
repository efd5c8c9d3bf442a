//! A snapshot built in code: a healthy machine to change one fact at a
//! time, for tests that judge exactly the situation they name.

use serde_json::{Value, json};

/// A healthy machine: Ubuntu, driver 580.95.05 read through NVML, one
/// RTX 4090, and one Python 3.11 environment with nothing installed.
#[derive(Clone)]
pub struct World(pub Value);

impl World {
    pub fn new() -> Self {
        World(json!({
            "schema_version": 1,
            "probed_by": "every_rule",
            "mode": "fast",
            "system": {"found": {"os": {"found": "Ubuntu 24.04"}, "kernel": {"found": "6.8.0"}, "arch": "x86_64",
                                 "glibc": {"found": "2.39"}, "container": null, "wsl": false}},
            "pythons": [{"executable": "/env/bin/python", "source": "flag", "version": {"found": "3.11.9"},
                         "kind": "venv", "interpreter": {"not_evaluated": "fixture"}, "site_dirs": [],
                         "distributions": {"found": []}, "imports": []}],
            "nvidia": {"found": {"nvml": {"state": "ok"},
                                 "driver": {"found": {"version": "580.95.05", "max_cuda": "13.0", "source": "nvml"}},
                                 "kernel_module": {"found": "580.95.05"},
                                 "gpus": {"found": [{"index": 0, "name": "NVIDIA GeForce RTX 4090",
                                                     "compute_capability": "8.9", "architecture": "Ada",
                                                     "memory_mib": 24564, "uuid": null}]}}}
        }))
    }

    pub fn env(&mut self) -> &mut Value {
        &mut self.0["pythons"][0]
    }

    pub fn nvidia(&mut self) -> &mut Value {
        &mut self.0["nvidia"]["found"]
    }

    pub fn python(mut self, v: &str) -> Self {
        self.env()["version"] = json!({"found": v});
        self
    }

    pub fn dist(mut self, name: &str, version: &str) -> Self {
        let dists = self.env()["distributions"]["found"].as_array_mut().unwrap();
        dists.retain(|d| d["name"] != name);
        dists
            .push(json!({"name": name, "version": version, "location": "/env/lib/python3.11/site-packages"}));
        self
    }

    pub fn dists(self, list: &[(&str, &str)]) -> Self {
        list.iter().fold(self, |w, (n, v)| w.dist(n, v))
    }

    pub fn with_dist(mut self, name: &str, key: &str, value: Value) -> Self {
        let dists = self.env()["distributions"]["found"].as_array_mut().unwrap();
        let d = dists.iter_mut().find(|d| d["name"] == name).expect("dist added first");
        d[key] = value;
        self
    }

    /// The probe imported `package` with these runtime facts.
    pub fn imported(mut self, package: &str, facts: Value) -> Self {
        self.0["mode"] = json!("full");
        self.env()["imports"]
            .as_array_mut()
            .unwrap()
            .push(json!({"package": package, "module": package, "status": {"state": "ok"}, "facts": facts}));
        self
    }

    pub fn import_status(mut self, package: &str, status: Value) -> Self {
        self.0["mode"] = json!("full");
        self.env()["imports"]
            .as_array_mut()
            .unwrap()
            .push(json!({"package": package, "module": package, "status": status}));
        self
    }

    pub fn driver(mut self, v: &str) -> Self {
        self.nvidia()["driver"]["found"]["version"] = json!(v);
        self.nvidia()["kernel_module"] = json!({"found": v});
        self
    }

    pub fn no_driver(mut self) -> Self {
        let n = self.nvidia();
        n["nvml"] = json!({"state": "no_library", "detail": "libnvidia-ml.so.1: not found"});
        n["driver"] = json!({"not_evaluated": "no NVIDIA driver"});
        n["kernel_module"] = json!({"not_evaluated": "no kernel module"});
        n["gpus"] = json!({"not_evaluated": "no driver"});
        self
    }

    pub fn gpu(mut self, name: &str, cc: &str) -> Self {
        self.nvidia()["gpus"]["found"][0]["name"] = json!(name);
        self.nvidia()["gpus"]["found"][0]["compute_capability"] = json!(cc);
        self
    }

    pub fn header(mut self, component: &str, version: &str) -> Self {
        let n = self.nvidia();
        if n.get("headers").is_none() {
            n["headers"] = json!([]);
        }
        n["headers"].as_array_mut().unwrap().push(
            json!({"component": component, "version": version, "path": format!("/usr/include/{component}.h")}),
        );
        self
    }

    pub fn toolkit(mut self, version: &str) -> Self {
        self.nvidia()["toolkits"] = json!([{"root": "/usr/local/cuda", "version": {"found": version},
                                            "found_via": "/usr/local/cuda"}]);
        self
    }

    pub fn link(mut self, role: &str, unresolved: &[&str]) -> Self {
        let n = self.nvidia();
        if n.get("links").is_none() {
            n["links"] = json!([]);
        }
        let missing: Vec<Value> = unresolved
            .iter()
            .map(|s| json!({"soname": s, "needed_by": "/env/lib/libprovider.so", "available_in": []}))
            .collect();
        n["links"].as_array_mut().unwrap().push(json!({
            "role": role, "library": "/env/lib/libprovider.so", "python": "/env/bin/python",
            "resolved": [], "unresolved": missing
        }));
        self
    }

    /// A Windows library whose DLLs, linked by toolset `built_with`, import
    /// the Visual C++ runtime: each DLL with the version Windows would load,
    /// `None` for one it would not find.
    pub fn vc_runtime(mut self, built_with: &str, dlls: &[(&str, Option<&str>)]) -> Self {
        let n = self.nvidia();
        if n.get("links").is_none() {
            n["links"] = json!([]);
        }
        let dlls: Vec<Value> = dlls
            .iter()
            .map(|(name, version)| match version {
                Some(v) => {
                    json!({"name": name, "path": format!("C:\\Windows\\System32\\{name}"), "version": v})
                }
                None => json!({"name": name}),
            })
            .collect();
        let library = "C:\\env\\Lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll";
        n["links"].as_array_mut().unwrap().push(json!({
            "role": "onnxruntime-cuda-provider", "library": library, "python": "/env/bin/python",
            "resolved": [], "unresolved": [],
            "vc_runtime": {"built_with": built_with, "built": library, "dlls": dlls}
        }));
        self
    }

    /// A library whose missing dependencies all have copies in this
    /// environment's own pip wheels (`nvidia/cu13/lib`), off the loader's path.
    pub fn link_in_wheels(mut self, role: &str, missing: &[&str]) -> Self {
        let site = "/env/lib/python3.11/site-packages";
        self.env()["site_dirs"] = json!([site]);
        let n = self.nvidia();
        if n.get("links").is_none() {
            n["links"] = json!([]);
        }
        let unresolved: Vec<Value> = missing
            .iter()
            .map(|s| {
                json!({"soname": s, "needed_by": "/env/lib/libprovider.so",
                       "available_in": [format!("{site}/nvidia/cu13/lib/{s}")]})
            })
            .collect();
        n["links"].as_array_mut().unwrap().push(json!({
            "role": role, "library": "/env/lib/libprovider.so", "python": "/env/bin/python",
            "resolved": [], "unresolved": unresolved
        }));
        self
    }

    pub fn model(mut self, ir: i64, opset: i64, ops: &[(&str, &str)]) -> Self {
        let mut by_domain = serde_json::Map::new();
        for (domain, op) in ops {
            let entry = by_domain.entry(domain.to_string()).or_insert_with(|| json!({}));
            entry[*op] = json!(1);
        }
        self.0["model"] = json!({
            "path": "/models/model.onnx", "file_bytes": 1000, "ir_version": ir, "producer": "pytorch 2.15.0",
            "opsets": {"ai.onnx": opset}, "ops": by_domain, "inputs": [], "outputs": [],
            "initializers": 0, "initializer_bytes": 0, "int64_initializers": 0,
            "subgraphs": 0, "functions": 0
        });
        self
    }

    pub fn model_set(mut self, key: &str, value: Value) -> Self {
        self.0["model"][key] = value;
        self
    }

    pub fn target(mut self, runtime: &str, version: &str) -> Self {
        self.0["targets"][runtime] = json!(version);
        self
    }

    /// Sets the value at a JSON pointer, adding the last key if it is new.
    pub fn set(mut self, pointer: &str, value: Value) -> Self {
        let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
        let parent = self.0.pointer_mut(parent).unwrap_or_else(|| panic!("{pointer}"));
        match parent {
            Value::Array(items) => items[key.parse::<usize>().unwrap()] = value,
            other => other[key] = value,
        }
        self
    }
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}
