#!/usr/bin/env bash
# The node's private mount namespace. Started by node.ts as
#   unshare --mount --propagation private -- bash namespace.sh DIR
# it mounts what the kubelet and containerd would otherwise write on the host, prints "ready", and
# holds the namespace open until it is killed; containerd and the kubelet join it with nsenter.
# Every mount made here, and by them, lives and dies with the namespace.
set -euo pipefail
dir="$1"
# Shim sockets and runtime state the runtime keeps under /run.
mount -n -t tmpfs -o mode=755 tmpfs /run
# The kubelet's /var/log/containers links; /var/lib/kubelet/device-plugins and pki, which it uses
# whatever --root-dir says.
mkdir -p "$dir/var-log" "$dir/kubelet" "$dir/sysctl"
mount -n --bind "$dir/var-log" /var/log
mount -n -t tmpfs -o mode=755 tmpfs /var/lib
mkdir -p /var/lib/kubelet
mount -n --bind "$dir/kubelet" /var/lib/kubelet
# The kubelet sets these machine-wide unless they already hold its values: here they seem to.
for setting in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
  kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
  key="${setting%=*}"
  value="${setting#*=}"
  if [ "$(cat "/proc/sys/$key")" != "$value" ]; then
    file="$dir/sysctl/${key//\//_}"
    echo "$value" > "$file"
    mount -n --bind -o ro "$file" "/proc/sys/$key"
  fi
done
echo ready
exec sleep infinity
