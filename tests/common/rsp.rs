//! `.rsp` known-answer files: blocks of `key = value` lines separated by blank lines, `#`
//! comments. The CTRU-Prime files are `vectors/ctru-prime/ctru-prime-<n>.rsp`.

use super::{unhex, vectors_dir};
use pqgpu::ctru::ParamSet;
use std::collections::HashMap;

/// One record of an `.rsp` file.
pub type Record = HashMap<String, String>;

/// The `key = value` blocks of an `.rsp` text, skipping `#` comments. A line without `=`
/// fails the test.
pub fn parse(text: &str) -> Vec<Record> {
    let mut records = Vec::new();
    let mut current = HashMap::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            if !current.is_empty() {
                records.push(std::mem::take(&mut current));
            }
            continue;
        }
        let (k, v) = line.split_once('=').expect("malformed .rsp line");
        current.insert(k.trim().to_string(), v.trim().to_string());
    }
    if !current.is_empty() {
        records.push(current);
    }
    records
}

/// The shared CTRU-Prime file's name for `p`.
pub fn ctru_file(p: ParamSet) -> &'static str {
    match p {
        ParamSet::Ctru653 => "ctru-prime-653.rsp",
        ParamSet::Ctru761 => "ctru-prime-761.rsp",
        ParamSet::Ctru1277 => "ctru-prime-1277.rsp",
    }
}

/// Every record of the shared CTRU-Prime KAT file of `p`.
pub fn ctru_records(p: ParamSet) -> Vec<Record> {
    let path = vectors_dir().join("ctru-prime").join(ctru_file(p));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse(&text)
}

/// A hex field that must be present.
pub fn field(r: &Record, key: &str) -> Vec<u8> {
    unhex(r.get(key).unwrap_or_else(|| panic!("missing field {key}")))
}
