//! NIST ACVP ML-DSA files (`vectors/acvp/<dir>/{prompt,expectedResults}.json`; layouts in
//! `shared/vectors/README.md`), read strictly: a missing field or answer fails the test.

use super::vectors_dir;
use pqgpu::mldsa::ParamSet;
use serde_json::Value;
use std::collections::HashMap;

/// One JSON file under `vectors/acvp`.
pub fn load(rel: &str) -> Value {
    let path = vectors_dir().join("acvp").join(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad JSON in {}: {e}", path.display()))
}

/// The parameter set an ACVP `parameterSet` names.
pub fn param_set(name: &str) -> ParamSet {
    match name {
        "ML-DSA-44" => ParamSet::MlDsa44,
        "ML-DSA-65" => ParamSet::MlDsa65,
        "ML-DSA-87" => ParamSet::MlDsa87,
        other => panic!("unknown parameter set {other}"),
    }
}

/// A string field that must be present.
pub fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("missing string field {key}"))
}

/// (prompt group, prompt test, expected test) for every case of a prompt/expectedResults pair.
pub fn cases(dir: &str) -> Vec<(Value, Value, Value)> {
    let prompt = load(&format!("{dir}/prompt.json"));
    let expected = load(&format!("{dir}/expectedResults.json"));
    let mut answers = HashMap::new();
    for g in expected["testGroups"].as_array().expect("testGroups") {
        for t in g["tests"].as_array().expect("tests") {
            answers.insert(t["tcId"].as_u64().expect("tcId"), t.clone());
        }
    }
    let mut out = Vec::new();
    for g in prompt["testGroups"].as_array().expect("testGroups") {
        for t in g["tests"].as_array().expect("tests") {
            let id = t["tcId"].as_u64().expect("tcId");
            let a = answers
                .remove(&id)
                .unwrap_or_else(|| panic!("{dir}: no answer for tcId {id}"));
            out.push((g.clone(), t.clone(), a));
        }
    }
    assert!(answers.is_empty(), "{dir}: answers without prompts");
    out
}
