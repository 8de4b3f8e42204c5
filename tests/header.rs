//! The C header and the shared library as C sees them: the committed header is fresh,
//! documented, holds the contract's prototypes and compiles as C99 and C++17; the library
//! exports only `pqg_` symbols (exactly the header's functions) and has the SONAME
//! `libpqgpu.so.0`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn committed_header() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/pqgpu.h");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn committed_header_is_fresh() {
    // build.rs generates the header into OUT_DIR on every build of this crate.
    let fresh = std::fs::read_to_string(env!("PQGPU_GENERATED_HEADER")).unwrap();
    assert!(
        fresh == committed_header(),
        "include/pqgpu.h is stale: run scripts/gen-header.sh and commit the result"
    );
}

/// The functions the header declares, by name.
fn declared_functions(header: &str) -> BTreeSet<String> {
    header
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#') && !l.starts_with('/'))
        .filter_map(|l| {
            let open = l.find('(')?;
            let name = l[..open].rsplit([' ', '*']).next()?;
            name.starts_with("pqg_").then(|| name.to_string())
        })
        .collect()
}

#[test]
fn every_declaration_is_documented() {
    let header = committed_header();
    let lines: Vec<&str> = header.lines().collect();
    let mut undocumented = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let is_fn = !l.starts_with([' ', '#', '/']) && l.contains("pqg_") && l.contains('(');
        let is_define = l.starts_with("#define PQG_") && !l.starts_with("#define PQGPU_H");
        if (is_fn || is_define) && (i == 0 || lines[i - 1].trim() != "*/") {
            undocumented.push(*l);
        }
    }
    assert!(undocumented.is_empty(), "undocumented: {undocumented:#?}");
    assert!(declared_functions(&header).len() >= 29);
}

/// Collapses whitespace so multi-line prototypes compare as one line.
fn squash(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("( ", "(")
}

#[test]
fn header_has_the_contract_prototypes() {
    let header = squash(&committed_header());
    let contract = [
        "const char *pqg_status_str(pqg_status s);",
        "const char *pqg_version(void);",
        "size_t pqg_public_key_len(pqg_alg alg);",
        "size_t pqg_secret_key_len(pqg_alg alg);",
        "size_t pqg_signature_len(pqg_alg alg);",
        "size_t pqg_ciphertext_len(pqg_alg alg);",
        "size_t pqg_shared_secret_len(pqg_alg alg);",
        "pqg_status pqg_context_new(pqg_backend backend, pqg_context **out);",
        "void pqg_context_free(pqg_context *ctx);",
        "pqg_backend pqg_context_backend(const pqg_context *ctx);",
        "pqg_status pqg_mldsa_keygen(pqg_context *ctx, pqg_alg alg, const uint8_t *seed, uint8_t *pk, size_t pk_len, uint8_t *sk, size_t sk_len);",
        "pqg_status pqg_mldsa_sign(pqg_context *ctx, pqg_alg alg, const uint8_t *sk, size_t sk_len, const uint8_t *msg, size_t msg_len, const uint8_t *context, size_t context_len, const uint8_t *rnd, uint8_t *sig, size_t sig_len);",
        "pqg_status pqg_mldsa_verify(pqg_context *ctx, pqg_alg alg, const uint8_t *pk, size_t pk_len, const uint8_t *msg, size_t msg_len, const uint8_t *context, size_t context_len, const uint8_t *sig, size_t sig_len);",
        "pqg_status pqg_hash_mldsa_sign(pqg_context *ctx, pqg_alg alg, pqg_hash ph, const uint8_t *sk, size_t sk_len, const uint8_t *digest, size_t digest_len, const uint8_t *context, size_t context_len, const uint8_t *rnd, uint8_t *sig, size_t sig_len);",
        "pqg_status pqg_hash_mldsa_verify(pqg_context *ctx, pqg_alg alg, pqg_hash ph, const uint8_t *pk, size_t pk_len, const uint8_t *digest, size_t digest_len, const uint8_t *context, size_t context_len, const uint8_t *sig, size_t sig_len);",
        "pqg_status pqg_mldsa_sign_mu(pqg_context *ctx, pqg_alg alg, const uint8_t *sk, size_t sk_len, const uint8_t *mu, size_t mu_len, const uint8_t *rnd, uint8_t *sig, size_t sig_len);",
        "pqg_status pqg_mldsa_verify_mu(pqg_context *ctx, pqg_alg alg, const uint8_t *pk, size_t pk_len, const uint8_t *mu, size_t mu_len, const uint8_t *sig, size_t sig_len);",
        "pqg_status pqg_mldsa_keygen_submit(pqg_context *ctx, pqg_alg alg, size_t n, const uint8_t *seeds, uint8_t *pks, uint8_t *sks, pqg_status *statuses, pqg_job **job);",
        "pqg_status pqg_mldsa_sign_submit(pqg_context *ctx, pqg_alg alg, const pqg_sign_request *reqs, size_t n, pqg_status *statuses, pqg_job **job);",
        "pqg_status pqg_mldsa_verify_submit(pqg_context *ctx, pqg_alg alg, const pqg_verify_request *reqs, size_t n, pqg_status *statuses, pqg_job **job);",
        "pqg_status pqg_job_poll(const pqg_job *job);",
        "pqg_status pqg_job_wait(pqg_job *job, int64_t timeout_ms);",
        "void pqg_job_free(pqg_job *job);",
        "pqg_status pqg_kem_keygen(pqg_context *ctx, pqg_alg alg, const uint8_t *seed, uint8_t *pk, size_t pk_len, uint8_t *sk, size_t sk_len);",
        "pqg_status pqg_kem_encaps(pqg_context *ctx, pqg_alg alg, const uint8_t *pk, size_t pk_len, const uint8_t *coins, uint8_t *ct, size_t ct_len, uint8_t *ss, size_t ss_len);",
        "pqg_status pqg_kem_decaps(pqg_context *ctx, pqg_alg alg, const uint8_t *sk, size_t sk_len, const uint8_t *ct, size_t ct_len, uint8_t *ss, size_t ss_len);",
        "pqg_status pqg_kem_keygen_submit(pqg_context *ctx, pqg_alg alg, size_t n, const uint8_t *seeds, uint8_t *pks, uint8_t *sks, pqg_status *statuses, pqg_job **job);",
        "pqg_status pqg_kem_encaps_submit(pqg_context *ctx, pqg_alg alg, const pqg_encaps_request *reqs, size_t n, pqg_status *statuses, pqg_job **job);",
        "pqg_status pqg_kem_decaps_submit(pqg_context *ctx, pqg_alg alg, const pqg_decaps_request *reqs, size_t n, pqg_status *statuses, pqg_job **job);",
        "typedef int32_t pqg_status;",
        "typedef int32_t pqg_alg;",
        "typedef struct pqg_context pqg_context;",
        "typedef struct pqg_job pqg_job;",
        "PQG_BACKEND_AUTO = 0,",
        "PQG_BACKEND_GPU = 2, } pqg_backend;",
        "PQG_HASH_SHA2_224 = 1,",
        "PQG_HASH_SHAKE_256, } pqg_hash;",
        "typedef struct { const uint8_t *pk; const uint8_t *coins; uint8_t *ct; uint8_t *ss; } pqg_encaps_request;",
        "typedef struct { const uint8_t *sk; const uint8_t *ct; uint8_t *ss; } pqg_decaps_request;",
        "#define PQG_OK 0",
        "#define PQG_PENDING 1",
        "#define PQG_ERR_NULL_POINTER -1",
        "#define PQG_ERR_INVALID_ARGUMENT -2",
        "#define PQG_ERR_BAD_LENGTH -3",
        "#define PQG_ERR_BAD_KEY -4",
        "#define PQG_ERR_VERIFY_FAILED -5",
        "#define PQG_ERR_NO_DEVICE -6",
        "#define PQG_ERR_DEVICE -7",
        "#define PQG_ERR_TIMEOUT -8",
        "#define PQG_ERR_RNG -9",
        "#define PQG_ERR_PANIC -99",
        "#define PQG_ML_DSA_44 1",
        "#define PQG_ML_DSA_65 2",
        "#define PQG_ML_DSA_87 3",
        "#define PQG_CTRU_PRIME_653 16",
        "#define PQG_CTRU_PRIME_761 17",
        "#define PQG_CTRU_PRIME_1277 18",
        "#ifndef PQGPU_H",
        "extern \"C\" {",
    ];
    // Doc comments sit between struct fields; drop them before comparing the struct layouts.
    let no_docs = squash(&strip_comments(&committed_header()));
    for want in contract {
        let want = squash(want);
        assert!(
            header.contains(&want) || no_docs.contains(&want),
            "header lacks: {want}"
        );
    }
    // The sign/verify request structs, field by field.
    for want in [
        "typedef struct { const uint8_t *sk; const uint8_t *msg; size_t msg_len; const uint8_t *context; size_t context_len; const uint8_t *rnd; uint8_t *sig; } pqg_sign_request;",
        "typedef struct { const uint8_t *pk; const uint8_t *msg; size_t msg_len; const uint8_t *context; size_t context_len; const uint8_t *sig; size_t sig_len; } pqg_verify_request;",
    ] {
        assert!(no_docs.contains(want), "header lacks: {want}");
    }
}

fn strip_comments(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn header_compiles_as_c99_and_cxx17() {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let dir = std::env::temp_dir().join(format!("pqgpu-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = "#include \"pqgpu.h\"\n\
        int main(void) {\n\
          unsigned char pk[PQG_ML_DSA_44_PUBLIC_KEY_BYTES];\n\
          pqg_backend b = PQG_BACKEND_CPU; pqg_hash h = PQG_HASH_SHAKE_256;\n\
          pqg_sign_request r; pqg_encaps_request e; pqg_status s = PQG_OK;\n\
          (void)pk; (void)b; (void)h; (void)r; (void)e;\n\
          return s == PQG_OK ? 0 : 1;\n\
        }\n";
    for (compiler, file, std) in [("cc", "t.c", "-std=c99"), ("c++", "t.cpp", "-std=c++17")] {
        if !have(compiler) {
            println!("skipped {std}: no `{compiler}` on PATH");
            continue;
        }
        let path = dir.join(file);
        std::fs::write(&path, src).unwrap();
        let out = Command::new(compiler)
            .args([
                std,
                "-Wall",
                "-Wextra",
                "-Wpedantic",
                "-Werror",
                "-fsyntax-only",
                "-I",
            ])
            .arg(&include)
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{compiler} {std}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The shared library of this test's profile: `target/<profile>/libpqgpu.so`, found from the
/// test executable's path (`target/<profile>/deps/header-*`). `cargo test` need not leave the
/// cdylib there, so it is built here (same profile) when it is missing or older than the test:
/// once per process, however many tests ask at once (two `cargo build`s would only queue on
/// cargo's lock and repeat the work). The library's dependency features are those of
/// `cargo test` (see Cargo.toml), so this build reuses the test build's compiled crate.
fn shared_library() -> PathBuf {
    static LIB: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    LIB.get_or_init(build_shared_library).clone()
}

fn build_shared_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<exe>");
    let lib = profile_dir.join("libpqgpu.so");
    let modified = |p: &Path| p.metadata().and_then(|m| m.modified()).ok();
    if modified(&lib) < modified(&exe) {
        let mut cargo = Command::new(env!("CARGO"));
        cargo.args([
            "build",
            "--lib",
            "--manifest-path",
            concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
        ]);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            cargo.arg("--release");
        }
        let status = cargo.status().expect("run cargo build --lib");
        assert!(status.success(), "cargo build --lib failed");
    }
    assert!(lib.is_file(), "libpqgpu.so not found at {}", lib.display());
    lib
}

fn tool_output(tool: &str, args: &[&str], lib: &Path) -> Option<String> {
    if !have(tool) {
        println!("skipped: `{tool}` is not installed (binutils)");
        return None;
    }
    let out = Command::new(tool).args(args).arg(lib).output().unwrap();
    assert!(
        out.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn library_exports_exactly_the_header_functions() {
    let lib = shared_library();
    let Some(nm) = tool_output("nm", &["-D", "--defined-only"], &lib) else {
        return;
    };
    let exported: BTreeSet<String> = nm
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(|s| s.split('@').next().unwrap().to_string())
        .collect();
    let foreign: Vec<_> = exported.iter().filter(|s| !s.starts_with("pqg_")).collect();
    assert!(
        foreign.is_empty(),
        "{} exports non-pqg_ symbols: {foreign:?}",
        lib.display()
    );
    assert_eq!(
        exported,
        declared_functions(&committed_header()),
        "{}",
        lib.display()
    );
}

#[test]
fn library_has_the_major_version_soname() {
    let lib = shared_library();
    let Some(dynamic) = tool_output("readelf", &["-d"], &lib) else {
        return;
    };
    assert!(
        dynamic.contains("Library soname: [libpqgpu.so.0]"),
        "{}: {dynamic}",
        lib.display()
    );
}
