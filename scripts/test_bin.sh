# Sourced by the scripts that run one test binary or example of the
# testsuite, and by those that build it for behaviour only.
# test_bin NAME: the path of the test binary NAME (tests/NAME.rs: `all`,
# which holds most test files as modules, `alone` or `disabled`) as the
# README's `cargo test --workspace` builds it (PROFILE set: `--profile
# PROFILE`). A module's child runs as `"$bin" --exact MODULE::child_workload`;
# TPTEST_ALLOCATOR=system gives it the system allocator, as when each file
# was a binary of its own (tests/all.rs).
# The whole workspace's selection, not `--test NAME` or `--example NAME`:
# those build the dependencies as other artifacts (a CI step that asked for
# `--workspace --test thread_churn` after the README's run rebuilt runtime,
# tokio, criterion and the testsuite, 80 s of CI's 20 minutes, silently),
# so after the README's run this is a no-op.
test_bin() {
  built_bin "/deps/$1-[0-9a-f]*" "tests/$1.rs"
}

# example_bin NAME: the same for examples/NAME.rs (the README's run builds
# the testsuite's examples too).
example_bin() {
  built_bin "/examples/$1" "examples/$1.rs"
}

# built_bin PATTERN WHAT: the executable whose path ends with PATTERN.
built_bin() {
  local bin
  bin=$(cargo test ${PROFILE:+--profile "$PROFILE"} --workspace --no-run --message-format=json \
    | grep -o "\"executable\":\"[^\"]*$1\"" | tail -1 | cut -d'"' -f4 || true)
  if [ ! -x "$bin" ]; then
    echo "test_bin: no binary of $2 (cargo test --workspace --no-run)" >&2
    return 1
  fi
  echo "$bin"
}

# Cargo arguments for a test-profile build that checks behaviour only: the
# runtime, the facade and the testsuite unoptimised (the test profile asks
# opt-level 3 of them, for the timing tests; at 0 they build in a fraction
# of the CPU).
unoptimised=(--config 'profile.test.package.tickprof-runtime.opt-level=0'
  --config 'profile.test.package.tickprof.opt-level=0'
  --config 'profile.test.package.tickprof-testsuite.opt-level=0')
