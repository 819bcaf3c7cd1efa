#!/usr/bin/env bash
# CRIU for `vdesk checkpoint` / `vdesk fork` (see scripts/criu/README.md for why it is built
# here): Debian sid's 4.2.1 source, with our rlimits-from-proc.patch, installed as
# /usr/local/sbin/criu (first on dockerd's PATH, so runc uses it); and the runtime that restores
# forks (vdesk-runc), registered with dockerd as `vdesk`. Idempotent: builds nothing when that
# binary already reports this version and keeps its kernel facts in $KDAT_DIR. Root on Debian
# only; elsewhere it says what to install and exits 0 (checkpoints are optional; vdesk says what
# is missing when asked).
set -euo pipefail

VERSION=4.2.1
DEB_VERSION=4.2.1-1
TARGET="${VDESK_CRIU_TARGET:-/usr/local/sbin/criu}"  # overridable to test the build
HERE="$(cd "$(dirname "$0")" && pwd)"

# CRIU reads this file for every dump and restore runc asks for: options Docker cannot pass.
# Each only lets a dump succeed that would fail without it (see README.md), for any container.
RUNC_CONF=/etc/criu/runc.conf
# vdesk's own checkpoints read this file first (vdesk names it in CRIU_CONFIG_FILE): no network
# lock, which runs iptables-restore twice in the dump and twice in every fork's restore (0.05 s
# each) to guard TCP connections a desktop's checkpoint never holds.
CHECKPOINT_CONF=/etc/criu/vdesk-checkpoint.conf
runc_options() {
  [ "$(id -u)" = 0 ] || return 0
  mkdir -p "$(dirname "$RUNC_CONF")" && touch "$RUNC_CONF"
  local option
  local scan
  for scan in /usr/share/dbus-1 /usr/share/fonts /usr/share/poppler /usr/local/share /etc /usr/share/applications \
      /usr/share/desktop-directories /usr/share/backgrounds /usr/share/thumbnailers /usr/lib/gnome-settings-daemon-3.0; do
    option="irmap-scan-path $scan"
    grep -qx "$option" "$RUNC_CONF" || echo "$option" >>"$RUNC_CONF"
  done
  for option in "ghost-limit 256M" "file-locks"; do
    grep -qx "$option" "$RUNC_CONF" || echo "$option" >>"$RUNC_CONF"
  done
  echo "network-lock skip" >"$CHECKPOINT_CONF"
}

# CRIU keeps what it learns of the kernel (30 ms of tests at every dump and restore, a network
# namespace made and dropped among them) in $KDAT_DIR/criu.kdat, but only on a tmpfs. This host's
# /run is not one, so the build names a small tmpfs of its own, mounted here (again after a reboot:
# setup-host.sh runs this script whenever it starts the engine). Without it CRIU just tests anew.
KDAT_DIR=/run/vdesk-criu
kernel_facts_cache() {
  [ "$(id -u)" = 0 ] || return 0
  mkdir -p "$KDAT_DIR"
  [ "$(stat -f -c %T "$KDAT_DIR")" = tmpfs ] && return 0
  mount -t tmpfs -o size=1m,mode=0700 vdesk-criu "$KDAT_DIR" ||
    echo "vdesk: warning: no tmpfs at $KDAT_DIR; CRIU tests the kernel at every run (30 ms)." >&2
}

# The runtime `vdesk` (vdesk-runc: runc, but a fork is restored at its create) in dockerd's
# daemon.json, keeping what else the file says; a running dockerd reloads it on SIGHUP, which
# touches no running container (only the runtimes list and a few settings are re-read).
RUNTIME=/usr/local/sbin/vdesk-runc
DAEMON_JSON=/etc/docker/daemon.json
fork_runtime() {
  [ "$(id -u)" = 0 ] || return 0
  install -m 0755 "$HERE/vdesk-runc" "$RUNTIME"
  install -m 0755 "$HERE/vdesk-network-hook" /usr/local/sbin/vdesk-network-hook
  mkdir -p "$(dirname "$DAEMON_JSON")"
  local changed
  changed=$(python3 - "$DAEMON_JSON" "$RUNTIME" <<'PY'
import json, os, sys
path, runtime = sys.argv[1], sys.argv[2]
config = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else {}
if config.get("runtimes", {}).get("vdesk", {}).get("path") == runtime:
    print("no")
else:
    config.setdefault("runtimes", {})["vdesk"] = {"path": runtime}
    with open(path + ".new", "w") as out:
        json.dump(config, out, indent=2)
    os.replace(path + ".new", path)
    print("yes")
PY
)
  if [ "$changed" = yes ] && pid=$(pgrep -o -x dockerd); then kill -HUP "$pid"; fi
}

if [ -x "$TARGET" ] && "$TARGET" --version 2>/dev/null | grep -qx "Version: $VERSION" &&
  grep -qaF "$KDAT_DIR/criu.kdat" "$TARGET"; then
  runc_options
  kernel_facts_cache
  fork_runtime
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "vdesk: checkpoints and forks need CRIU >= 4.1 (install it as $TARGET or on dockerd's PATH)." >&2
  exit 0
fi

echo "vdesk: building CRIU $VERSION for checkpoints and forks (about a minute) ..."
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends build-essential libbsd-dev libcap-dev libnet1-dev \
  libnl-3-dev libprotobuf-c-dev libprotobuf-dev protobuf-c-compiler protobuf-compiler pkgconf \
  uuid-dev libgnutls28-dev libnftables-dev python3-protobuf xz-utils >/dev/null

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Only sid's orig tarball is fetched (its .debian tarball is not on every mirror): a
# temporary source list, so the host's own apt sources stay untouched.
echo "deb-src http://deb.debian.org/debian sid main" >"$work/sid-src.list"
apt_src=(-o "Dir::Etc::sourcelist=$work/sid-src.list" -o Dir::Etc::sourceparts=-
  -o APT::Get::List-Cleanup=0 -o "Dir::State::Lists=$work/lists")
mkdir -p "$work/lists/partial"
apt-get update -qq "${apt_src[@]}"
(cd "$work" && apt-get source -qq --download-only "${apt_src[@]}" "criu=$DEB_VERSION" >/dev/null 2>&1 || true)
orig="$work/criu_$VERSION.orig.tar.xz"
if [ ! -f "$orig" ]; then
  echo "vdesk: could not download criu_$VERSION.orig.tar.xz from Debian's mirror." >&2
  exit 1
fi
tar -C "$work" -xf "$orig"
src="$work/criu-$VERSION"
patch -d "$src" -p1 --quiet <"$HERE/rlimits-from-proc.patch"
make -C "$src" -j"$(nproc)" RUNDIR="$KDAT_DIR" criu >"$work/build.log" 2>&1 || { tail -n 30 "$work/build.log" >&2; exit 1; }
install -m 0755 "$src/criu/criu" "$TARGET"
runc_options
kernel_facts_cache
fork_runtime
"$TARGET" check >/dev/null 2>&1 || echo "vdesk: warning: '$TARGET check' fails on this kernel." >&2
echo "vdesk: CRIU $VERSION installed as $TARGET."
