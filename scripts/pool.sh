#!/usr/bin/env bash
# `make pool`: a personal pool from the embedded default (no config file), one demo job through it.
set -euo pipefail
unset HTCD_CONFIG CONDOR_CONFIG
if [ -e /etc/htcd/htcd_config ] || [ -e "${HOME}/.config/htcd/htcd_config" ]; then
  echo "note: a config file exists, so this pool uses it rather than the embedded default" >&2
fi

state=$(htcd config_val LOCAL_DIR)
if htcd ping MASTER >/dev/null 2>&1; then
  echo "== A personal pool is already running in $state"
else
  echo "== Starting a personal pool in $state"
  htcd master
fi

deadline=$((SECONDS + 60))
until [ "$(htcd status -af Name 2>/dev/null | wc -l)" -gt 0 ]; do
  [ $SECONDS -lt $deadline ] || { echo "the pool did not come up; see $state/log/MasterLog" >&2; exit 1; }
  sleep 0.2
done

demo="$state/demo"
mkdir -p "$demo"
cat > "$demo/hello.sh" <<'JOB'
#!/bin/sh
echo "Hello from job $1 on $(hostname), running in $_CONDOR_SCRATCH_DIR"
JOB
chmod +x "$demo/hello.sh"
cat > "$demo/hello.sub" <<'SUB'
executable     = hello.sh
arguments      = $(Cluster).$(Process)
output         = hello.$(Cluster).$(Process).out
error          = hello.$(Cluster).$(Process).err
log            = hello.log
request_cpus   = 1
request_memory = 64M
queue
SUB
cd "$demo"
echo "== htcd submit hello.sub"
out=$(htcd submit -terse hello.sub)
id=${out%% *}
cluster=${id%%.*}
echo "submitted job $id"

deadline=$((SECONDS + 120))
until grep -q "^005 ($(printf '%03d' "$cluster").000.000)" hello.log 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || { echo "the job did not finish in time; htcd q:" >&2; htcd q -nobatch >&2; exit 1; }
  sleep 0.2
done

echo "== The job's output ($demo/hello.$id.out):"
cat "hello.$id.out"
echo "== Its event log ($demo/hello.log), last events:"
tail -n 20 hello.log
echo "== htcd status"
htcd status
echo "== htcd q"
htcd q
echo "== The pool keeps running. Stop it with: make stop"
