#!/usr/bin/env bash
# A private Docker engine for the docker-universe tests and benchmark (tests/docker, bench/docker_bench.py).
#
#   scripts/dockerd.sh install     install Debian's docker.io, containerd, tini, busybox-static, runc, curl
#                                  when dockerd is missing (needs root and apt-get)
#   scripts/dockerd.sh start DIR   start dockerd with its socket, state and log under DIR (no iptables, no
#                                  bridge: containers get loopback only), wait for it, and build the tiny
#                                  image localhost/htcd-busybox:latest from busybox-static (no registry)
#   scripts/dockerd.sh stop DIR    stop that dockerd by the PID in DIR/dockerd.pid
#   scripts/dockerd.sh podman-install       install Debian's podman, catatonit (its init) and iptables when missing
#   scripts/dockerd.sh podman-start DIR     Podman's Docker-compatible service instead, with its storage,
#                                           its containers.conf (runc, cgroupfs, file events, ulimits within
#                                           the hard limits, no network by default) and log under DIR
#   scripts/dockerd.sh podman-stop DIR      stop it by the PID in DIR/podman.pid
#
# The socket is DIR/docker.sock; point DOCKER_HOST (or htcd's DOCKER_HOST knob) at unix://DIR/docker.sock.
set -euo pipefail
IMAGE=localhost/htcd-busybox:latest
PACKAGES=(docker.io containerd tini busybox-static runc curl)

install() {
  command -v dockerd >/dev/null 2>&1 && command -v busybox >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "dockerd.sh: dockerd is missing and cannot be installed here (needs root and apt-get)" >&2
    return 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PACKAGES[@]}" >/dev/null
}

api() {  # api DIR PATH: GET on the engine's socket
  curl -sf --max-time 5 --unix-socket "$1/docker.sock" "http://d$2"
}

build_image() {  # a 2 MB root: busybox and its applet links, passwd/group, a sticky /tmp
  local dir=$1 root="$1/image-root"
  api "$dir" "/images/$IMAGE/json" >/dev/null 2>&1 && return 0
  rm -rf "$root" && mkdir -p "$root/bin" "$root/etc" "$root/tmp"
  chmod 1777 "$root/tmp"
  cp "$(command -v busybox)" "$root/bin/busybox"
  local applet
  for applet in $("$root/bin/busybox" --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
  tar -C "$root" -cf "$dir/image.tar" .
  # POST /images/create?fromSrc=- is `docker import`; the changes give it a shell and a PATH.
  curl -sf --max-time 60 --unix-socket "$dir/docker.sock" -X POST -H 'Content-Type: application/x-tar' \
    --data-binary "@$dir/image.tar" \
    "http://d/images/create?fromSrc=-&repo=localhost/htcd-busybox&tag=latest&changes=CMD%20%5B%22%2Fbin%2Fsh%22%5D&changes=ENV%20PATH%3D%2Fbin" \
    >/dev/null
  rm -rf "$root" "$dir/image.tar"
  api "$dir" "/images/$IMAGE/json" >/dev/null
}

start() {
  local dir
  dir=$(realpath -m "$1")
  mkdir -p "$dir"
  if ! api "$dir" /_ping >/dev/null 2>&1; then
    command -v dockerd >/dev/null 2>&1 || { echo "dockerd.sh: dockerd is not installed" >&2; return 1; }
    setsid dockerd --data-root "$dir/data" --exec-root "$dir/exec" -H "unix://$dir/docker.sock" \
      --pidfile "$dir/dockerd.pid" --iptables=false --ip6tables=false --bridge=none \
      </dev/null >"$dir/dockerd.log" 2>&1 &
    local i
    for i in $(seq 1 600); do
      api "$dir" /_ping >/dev/null 2>&1 && break
      if ! kill -0 $! 2>/dev/null; then
        echo "dockerd.sh: dockerd exited; its log:" >&2
        tail -n 20 "$dir/dockerd.log" >&2
        return 1
      fi
      sleep 0.1
    done
    api "$dir" /_ping >/dev/null || { echo "dockerd.sh: dockerd did not answer in 60 s" >&2; return 1; }
  fi
  build_image "$dir"
  echo "unix://$dir/docker.sock"
}

stop() {
  local dir pid i
  dir=$(realpath -m "$1")
  [ -f "$dir/dockerd.pid" ] || return 0
  pid=$(cat "$dir/dockerd.pid")
  kill "$pid" 2>/dev/null || return 0
  for i in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}

podman_install() {
  command -v podman >/dev/null 2>&1 && command -v busybox >/dev/null 2>&1 && [ -x /usr/libexec/podman/catatonit ] \
    && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "dockerd.sh: podman is missing and cannot be installed here (needs root and apt-get)" >&2
    return 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman catatonit iptables busybox-static curl >/dev/null
}

podman_start() {
  local dir
  dir=$(realpath -m "$1")
  mkdir -p "$dir"
  if ! api "$dir" /_ping >/dev/null 2>&1; then
    command -v podman >/dev/null 2>&1 || { echo "dockerd.sh: podman is not installed" >&2; return 1; }
    # crun 1.8 rejects a hybrid cgroup layout (runc); no systemd (cgroupfs, file events); default ulimits
    # no higher than the hard ones; no network unless a job names one (as dockerd with --bridge=none).
    # Jobs' Init = true needs catatonit (podman 4.3's compatible API ignores init_path)
    cat >"$dir/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
netns = "none"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
    # started from DIR: conmon leaves files (an "oom" marker after an OOM kill) in the service's
    # working directory, which must not be the caller's
    local here=$PWD
    cd "$dir"
    CONTAINERS_CONF="$dir/containers.conf" setsid podman --root "$dir/root" --runroot "$dir/run" \
      --tmpdir "$dir/tmp" system service --time=0 "unix://$dir/docker.sock" </dev/null >"$dir/podman.log" 2>&1 &
    echo $! >"$dir/podman.pid"
    cd "$here"
    local i
    for i in $(seq 1 600); do
      api "$dir" /_ping >/dev/null 2>&1 && break
      if ! kill -0 "$(cat "$dir/podman.pid")" 2>/dev/null; then
        echo "dockerd.sh: podman system service exited; its log:" >&2
        tail -n 20 "$dir/podman.log" >&2
        return 1
      fi
      sleep 0.1
    done
    api "$dir" /_ping >/dev/null || { echo "dockerd.sh: podman did not answer in 60 s" >&2; return 1; }
  fi
  build_image "$dir"
  echo "unix://$dir/docker.sock"
}

podman_stop() {  # then undo the mounts its storage made under DIR (overlay bind-mounts its home)
  local dir pid i m
  dir=$(realpath -m "$1")
  if [ -f "$dir/podman.pid" ]; then
    pid=$(cat "$dir/podman.pid")
    if kill "$pid" 2>/dev/null; then
      for i in $(seq 1 300); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  for m in $(awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
}

case "${1:-}" in
  install) install ;;
  start) start "${2:?usage: dockerd.sh start DIR}" ;;
  stop) stop "${2:?usage: dockerd.sh stop DIR}" ;;
  podman-install) podman_install ;;
  podman-start) podman_start "${2:?usage: dockerd.sh podman-start DIR}" ;;
  podman-stop) podman_stop "${2:?usage: dockerd.sh podman-stop DIR}" ;;
  *) echo "usage: dockerd.sh install | start DIR | stop DIR | podman-install | podman-start DIR | podman-stop DIR" >&2
     exit 2 ;;
esac
