#!/usr/bin/env bash
# `make pool`: this machine as a personal pool, deployed by Ansible (inventories/local: every
# role on localhost, files under .pool/ of the checkout), then one demo job through it.
set -euo pipefail
cd "$(dirname "$0")/.."
HTCD_POOL_DIR=${HTCD_POOL_DIR:-$PWD/.pool}
export HTCD_POOL_DIR
unset CONDOR_CONFIG
echo "== ansible-playbook -i inventories/local site.yml"
ansible-playbook -i inventories/local site.yml

export HTCD_CONFIG="$HTCD_POOL_DIR/etc/htcd_config"
state=$(htcd config_val LOCAL_DIR)
echo "== The pool runs in $HTCD_POOL_DIR (HTCD_CONFIG=$HTCD_CONFIG)"

deadline=$((SECONDS + 60))
until [ "$(htcd status -af Name 2>/dev/null | wc -l)" -gt 0 ]; do
  [ $SECONDS -lt $deadline ] || { echo "the pool did not come up; see $HTCD_POOL_DIR/log/MasterLog" >&2; exit 1; }
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
echo "== The pool keeps running. Use it with: export HTCD_CONFIG=$HTCD_CONFIG"
echo "== Stop it with: make stop"
