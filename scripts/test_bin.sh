# Sourced by the scripts that run one test binary of the testsuite.
# test_bin NAME: the path of tests/NAME.rs's binary as the README's
# `cargo test --workspace` builds it (PROFILE set: `--profile PROFILE`).
# The whole workspace's selection, not `--test NAME`: the two build the dependencies as different artifacts
# (a CI step that asked for `--workspace --test thread_churn` after the
# README's run rebuilt runtime, tokio, criterion and the testsuite, 80 s
# of CI's 20 minutes, silently), so after the README's run this is a no-op.
test_bin() {
  local bin
  bin=$(cargo test ${PROFILE:+--profile "$PROFILE"} --workspace --no-run --message-format=json \
    | grep -o "\"executable\":\"[^\"]*/deps/$1-[0-9a-f]*\"" | tail -1 | cut -d'"' -f4 || true)
  if [ ! -x "$bin" ]; then
    echo "test_bin: no test binary tests/$1.rs (cargo test --workspace --no-run)" >&2
    return 1
  fi
  echo "$bin"
}
