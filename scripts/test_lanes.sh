#!/usr/bin/env bash
# `make test` after lint: two lanes at once.  Lane 1 runs the pool, daemon and language tests;
# lane 2 runs the Ansible tests and then the molecule `default` scenario, which spend most of
# their time waiting on ansible-playbook and ssh, and after them the fuzz and docker tests (lane
# 1 is the longer one, so they balance the two; see LANE2_MARKS).  Lane 2's output
# goes to a file, printed after both lanes end, so the two never interleave.  Exit status: 0 only
# when both lanes pass.
set -uo pipefail
cd "$(dirname "$0")/.."
LANE2_MARKS="(fuzz or docker or netns or lane2) and not ansible"
log=$(mktemp /tmp/htcd-lane2-XXXXXX.log)
(
  make --no-print-directory test-ansible; a=$?
  make --no-print-directory test-pytest PYTEST_MARKS="$LANE2_MARKS"; b=$?
  exit $(( a != 0 || b != 0 ))
) >"$log" 2>&1 &
lane2=$!
cleanup() { kill -TERM "$lane2" 2>/dev/null; rm -f "$log"; }
trap cleanup INT TERM
make --no-print-directory test-pytest PYTEST_MARKS="not ansible and not ($LANE2_MARKS)"
rc1=$?
wait "$lane2"
rc2=$?
trap - INT TERM
echo "==== lane 2: the Ansible tests, molecule, then the fuzz and docker tests (exit status $rc2)"
cat "$log"
rm -f "$log"
echo "==== lane 1 (all tests but the Ansible, fuzz and docker ones): exit status $rc1; lane 2: exit status $rc2"
exit $(( rc1 != 0 || rc2 != 0 ))
