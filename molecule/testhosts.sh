#!/usr/bin/env bash
# Test hosts on one machine: each "host" is a network namespace with its own address on a bridge,
# its own hostname, process table, IPC, /etc /var /usr /opt /root /home /srv (overlays) and an sshd,
# so Ansible, molecule and `htcd fleet` reach it over real SSH as they would a real machine.
#
#   testhosts.sh up N [APS]   start N hosts: host 1 is the central manager, the next APS (default 1)
#                             are access points, the rest execute points (fewer hosts: roles share one)
#   testhosts.sh down         end every process by PID, remove namespaces, links and state (idempotent)
#   testhosts.sh status       list the hosts and whether their sshd answers
#
# State lives under $HTCD_TESTHOSTS_DIR (default /var/tmp/htcd-testhosts): the SSH key, known_hosts,
# ssh_config, the Ansible inventory (inventory/hosts.yml: groups central_manager, access_point,
# execute_point as site.yml expects), ansible.cfg-style control paths (cp/),
# and per host its overlay layers and its own /etc/htcd, /var/lib/htcd, /var/log/htcd (hosts/NAME/).
# Needs root, iproute2, util-linux (unshare) and openssh-server; installs the last two packages
# with apt when missing.  Addresses: 10.213.0.0/24 only (bridge htcdbr0 = .1, host K = .(10+K)).
set -euo pipefail

STATE=${HTCD_TESTHOSTS_DIR:-/var/tmp/htcd-testhosts}
BRIDGE=htcdbr0
NET=10.213.0
OVERLAID=(etc var usr opt root home srv)
OWN_DIRS=(etc/htcd var/lib/htcd var/log/htcd)

die() { echo "testhosts: $*" >&2; exit 1; }

need_tools() {
    [[ $(id -u) == 0 ]] || die "must run as root (network namespaces, mounts)"
    local pkgs=()
    command -v ip >/dev/null 2>&1 || pkgs+=(iproute2)
    [[ -x /usr/sbin/sshd ]] || pkgs+=(openssh-server)
    command -v ssh-keygen >/dev/null 2>&1 || pkgs+=(openssh-client)
    command -v unshare >/dev/null 2>&1 || pkgs+=(util-linux)
    if ((${#pkgs[@]})); then
        echo "testhosts: installing ${pkgs[*]}" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
    fi
}

# The host names in order: cm1, ap1..apA, ep1..epE (N=1: cm1 plays every role; N=2: cm1 + ap1 as EP).
host_names() {
    local n=$1 aps=$2 i
    echo cm1
    for ((i = 1; i <= aps && i < n; i++)); do echo "ap$i"; done
    for ((i = 1; i <= n - 1 - aps; i++)); do echo "ep$i"; done
}

# --- down -----------------------------------------------------------------------------------------

kill_pids() {  # kill_pids SIGNAL PID...: signal the PIDs that still exist
    local sig=$1 p
    shift
    for p in "$@"; do
        [[ -n $p ]] && kill -0 "$p" 2>/dev/null && kill "-$sig" "$p" 2>/dev/null || true
    done
}

wait_gone() {  # wait_gone PID...: up to 5 s for the PIDs to exit
    local p t
    for ((t = 0; t < 50; t++)); do
        local alive=0
        for p in "$@"; do  # a zombie counts as gone: only its parent can reap it
            [[ -r /proc/$p/stat ]] && [[ $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) != Z ]] && alive=1
        done
        ((alive)) || return 0
        sleep 0.1
    done
    return 1
}

cmd_down() {
    # Ansible/ssh ControlPersist masters: ask each to exit, then end what is left by PID.
    if [[ -d $STATE/cp ]]; then
        local sock
        for sock in "$STATE"/cp/*; do
            [[ -S $sock ]] || continue
            ssh -o ControlPath="$sock" -O exit dummy >/dev/null 2>&1 || true
        done
        local p masters=()
        for p in $(pgrep -f "ControlPath=$STATE/cp/" 2>/dev/null || true) \
                 $(pgrep -f "ControlPath=\"$STATE/cp/" 2>/dev/null || true); do
            [[ $p != "$$" ]] && masters+=("$p")
        done
        if ((${#masters[@]})); then kill_pids TERM "${masters[@]}"; wait_gone "${masters[@]}" || kill_pids KILL "${masters[@]}"; fi
    fi
    local ns name
    for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^htcd-/ {print $1}'); do
        name=${ns#htcd-}
        local pids=()
        [[ -f $STATE/hosts/$name/unshare.pid ]] && pids+=("$(cat "$STATE/hosts/$name/unshare.pid")")
        [[ -f $STATE/hosts/$name/sshd.pid ]] && pids+=("$(cat "$STATE/hosts/$name/sshd.pid")")
        # The unshare parent's SIGKILL to its child (PID 1 of the host) ends the host's PID namespace.
        if ((${#pids[@]})); then kill_pids TERM "${pids[@]}"; wait_gone "${pids[@]}" || kill_pids KILL "${pids[@]}"; fi
        # Anything else that entered the network namespace.
        local rest
        rest=($(ip netns pids "$ns" 2>/dev/null || true))
        if ((${#rest[@]})); then kill_pids KILL "${rest[@]}"; wait_gone "${rest[@]}" || true; fi
        ip link del "htcdv-$name" 2>/dev/null || true
        ip netns del "$ns" 2>/dev/null || true
    done
    ip link del "$BRIDGE" 2>/dev/null || true
    if command -v iptables >/dev/null 2>&1; then
        while iptables -D FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null; do :; done
    fi
    # Overlay and bind mounts live in the hosts' own mount namespaces, gone with them: plain files remain.
    rm -rf "$STATE"
}

# --- up -------------------------------------------------------------------------------------------

write_init() {  # write_init NAME DIR: the host's PID 1 until it execs sshd
    local name=$1 dir=$2 d
    {
        echo '#!/usr/bin/env bash'
        echo '# PID 1 of a test host: its hostname, file systems and sshd.  Written by testhosts.sh.'
        echo 'set -euo pipefail'
        echo "hostname $name"
        echo 'mount -t tmpfs -o mode=755 tmpfs /run'
        echo 'mkdir -p /run/sshd /run/lock /run/testhost'
        # The host's state dir lies under /var: reach it through a bind mount made before /var is
        # overlaid (an overlay cannot be an upper layer, and writes must land in the real dirs).
        echo "mount --bind $dir /run/testhost"
        for d in "${OVERLAID[@]}"; do
            echo "mount -t overlay overlay -o lowerdir=/$d,upperdir=/run/testhost/upper/$d,workdir=/run/testhost/work/$d /$d"
        done
        for d in "${OWN_DIRS[@]}"; do
            echo "mkdir -p /$d && mount --bind /run/testhost/$d /$d"
        done
        echo "cp $STATE/etc_hosts /etc/hosts"
        echo "echo $name > /etc/hostname"
        echo "exec /usr/sbin/sshd -D -e -f /run/testhost/sshd_config"
    } >"$dir/init.sh"
    chmod 755 "$dir/init.sh"
}

write_sshd_config() {  # write_sshd_config DIR ADDR
    local dir=$1 addr=$2
    cat >"$dir/sshd_config" <<EOF
# sshd of a test host (written by testhosts.sh): root by key only, on the host's own address.
ListenAddress $addr
Port 22
HostKey /run/testhost/ssh_host_ed25519_key
PidFile /run/sshd.pid
AuthorizedKeysFile $STATE/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
MaxStartups 64:30:128
MaxSessions 64
Subsystem sftp internal-sftp
EOF
}

start_host() {  # start_host NAME ADDR
    local name=$1 addr=$2 ns="htcd-$1" dir="$STATE/hosts/$1" d
    for d in "${OVERLAID[@]}"; do mkdir -p "$dir/upper/$d" "$dir/work/$d"; done
    for d in "${OWN_DIRS[@]}"; do mkdir -p "$dir/$d"; done
    ssh-keygen -q -t ed25519 -N '' -C "$name" -f "$dir/ssh_host_ed25519_key"
    echo "$name,$addr $(cut -d' ' -f1,2 "$dir/ssh_host_ed25519_key.pub")" >>"$STATE/known_hosts"
    write_sshd_config "$dir" "$addr"
    write_init "$name" "$dir"

    ip netns add "$ns"
    ip link add "htcdv-$name" type veth peer name "htcdp-$name"
    ip link set "htcdp-$name" netns "$ns"
    ip link set "htcdv-$name" master "$BRIDGE" up
    ip -n "$ns" link set "htcdp-$name" name eth0
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up

    # setsid: the host outlives this script and its terminal; the PID written is the unshare parent's.
    setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$dir/unshare.pid" \
        ip netns exec "$ns" unshare --uts --ipc --mount --pid --fork --kill-child --mount-proc \
        --propagation private -- "$dir/init.sh" </dev/null >"$dir/init.log" 2>&1 &
}

wait_ssh() {  # wait_ssh NAME...: until each sshd accepts a login (30 s)
    local name t
    for name in "$@"; do
        for ((t = 0; t < 300; t++)); do
            if ssh -F "$STATE/ssh_config" -o ConnectTimeout=2 -o BatchMode=yes "$name" true 2>/dev/null; then
                break
            fi
            if ((t == 299)); then
                cat "$STATE/hosts/$name/init.log" >&2 || true
                die "$name: sshd did not answer within 30 s"
            fi
            sleep 0.1
        done
        # the sshd's own PID (outside view): the child of the unshare parent
        pgrep -P "$(cat "$STATE/hosts/$name/unshare.pid")" >"$STATE/hosts/$name/sshd.pid" || true
    done
}

write_client_files() {  # write_client_files NAME...
    local name addr k=0
    : >"$STATE/ssh_config"
    for name in "$@"; do
        k=$((k + 1))
        addr="$NET.$((10 + k))"
        cat >>"$STATE/ssh_config" <<EOF
Host $name $addr
    HostName $addr
    User root
    IdentityFile $STATE/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $STATE/known_hosts
    StrictHostKeyChecking yes
    GlobalKnownHostsFile /dev/null
    BatchMode yes
EOF
    done
}

write_inventory() {  # write_inventory N APS NAME...
    local n=$1 aps=$2 name k=0
    shift 2
    local names=("$@") cm aps_list=() eps_list=()
    cm=${names[0]}
    local i
    for ((i = 1; i < n; i++)); do
        if [[ ${names[i]} == ap* ]]; then aps_list+=("${names[i]}"); else eps_list+=("${names[i]}"); fi
    done
    ((${#aps_list[@]})) || aps_list=("$cm")
    ((${#eps_list[@]})) || eps_list=("${names[n - 1]}")
    mkdir -p "$STATE/inventory"
    {
        echo "# Test hosts written by molecule/testhosts.sh ($n hosts); removed by 'testhosts.sh down'."
        echo "all:"
        echo "  vars:"
        echo "    ansible_user: root"
        echo "    ansible_ssh_private_key_file: $STATE/id_ed25519"
        echo "    ansible_ssh_common_args: -F $STATE/ssh_config"
        echo "    ansible_python_interpreter: /usr/bin/python3"
        echo "    ansible_remote_tmp: /var/tmp/ansible-remote"
        echo "  hosts:"
        for name in "${names[@]}"; do
            k=$((k + 1))
            echo "    $name:"
            echo "      ansible_host: $NET.$((10 + k))"
        done
        echo "  children:"
        echo "    central_manager:"
        echo "      hosts:"
        echo "        $cm:"
        echo "    access_point:"
        echo "      hosts:"
        for name in "${aps_list[@]}"; do echo "        $name:"; done
        echo "    execute_point:"
        echo "      hosts:"
        for name in "${eps_list[@]}"; do echo "        $name:"; done
    } >"$STATE/inventory/hosts.yml"
}

cmd_up() {
    local n=${1:-} aps=${2:-1}
    [[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 200)) || die "usage: testhosts.sh up N [APS]  (1 <= N <= 200)"
    [[ $aps =~ ^[0-9]+$ ]] || die "APS must be a number"
    need_tools
    cmd_down  # `up` over an old set of hosts starts from nothing
    mkdir -p "$STATE/hosts" "$STATE/cp" "$STATE/ansible"
    chmod 700 "$STATE"
    local names
    mapfile -t names < <(host_names "$n" "$aps")
    ssh-keygen -q -t ed25519 -N '' -C htcd-testhosts -f "$STATE/id_ed25519"
    cp "$STATE/id_ed25519.pub" "$STATE/authorized_keys"
    : >"$STATE/known_hosts"
    {
        echo "127.0.0.1 localhost"
        echo "::1 localhost ip6-localhost ip6-loopback"
        echo "$NET.1 controller"
        local k=0 name
        for name in "${names[@]}"; do k=$((k + 1)); echo "$NET.$((10 + k)) $name.htcd.test $name"; done
    } >"$STATE/etc_hosts"

    ip link add "$BRIDGE" type bridge
    ip addr add "$NET.1/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    # With br_netfilter loaded, bridged frames pass iptables' FORWARD chain, whose policy a container
    # engine may have set to DROP: let traffic between the hosts through.
    if command -v iptables >/dev/null 2>&1 && ! iptables -C FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null; then
        iptables -I FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null || true
    fi
    write_client_files "${names[@]}"
    local k=0 name
    for name in "${names[@]}"; do
        k=$((k + 1))
        start_host "$name" "$NET.$((10 + k))"
    done
    write_inventory "$n" "$aps" "${names[@]}"
    wait_ssh "${names[@]}"
    echo "testhosts: up: ${names[*]} (inventory $STATE/inventory/hosts.yml, ssh -F $STATE/ssh_config NAME)"
}

cmd_status() {
    [[ -d $STATE/hosts ]] || { echo "testhosts: no hosts (state dir $STATE)"; return 0; }
    local dir name addr ok
    for dir in "$STATE"/hosts/*/; do
        name=$(basename "$dir")
        addr=$(awk '/^ListenAddress/ {print $2}' "$dir/sshd_config")
        ok=down
        ssh -F "$STATE/ssh_config" -o ConnectTimeout=2 "$name" true 2>/dev/null && ok=up
        printf '%-6s %-14s sshd pid %-8s %s\n' "$name" "$addr" "$(cat "$dir/sshd.pid" 2>/dev/null || echo '?')" "$ok"
    done
}

case ${1:-} in
    up) shift; cmd_up "$@" ;;
    down) [[ $(id -u) == 0 ]] || die "must run as root"; cmd_down ;;
    status) cmd_status ;;
    *) die "usage: testhosts.sh up N [APS] | down | status" ;;
esac
