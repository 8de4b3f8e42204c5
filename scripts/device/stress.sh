#!/usr/bin/env bash
# The long stress run on the GPU machine: tests/stress.rs with the shared context on the GPU
# backend for STRESS_SECS (default 120) seconds. 8 threads mix single sign / verify / keygen
# calls, ML-DSA-44 sign and verify batches, CTRU-Prime-761 decapsulation batches, registered
# memory unregistered under a running job, contexts freed under their batch, jobs freed out of
# order, and a fork whose child signs a batch on a fresh context; every result is compared with
# one-at-a-time calls on a CPU context. It prints the operations per kind, the results checked
# and the mismatches (the test fails on any mismatch, hang or wrong status).
# stage: tests="stress"
source "$(dirname "$0")/common.sh"
SHOW="stress:|test result|panicked|FAILED|SKIPPED"
secs=${STRESS_SECS:-120}
machine
step stress_gpu $((secs + 90)) env PQGPU_STRESS_BACKEND=gpu PQGPU_STRESS_SECS="$secs" ./stress --nocapture
finish
