#!/bin/bash
# vdesk desktop supervisor: Xvfb -> openbox -> x11vnc.
#
# Runs as the unprivileged desktop user under tini. It restarts the window manager or the
# VNC server when they die, exits (stopping the container) when the X server dies, and
# stops the desktop when its time-to-live runs out. Configuration comes from environment
# variables only; nothing here is evaluated as shell code.
set -euo pipefail

: "${VDESK_WIDTH:=1280}" "${VDESK_HEIGHT:=800}" "${VDESK_DEPTH:=24}" "${VDESK_DPI:=96}"
: "${VDESK_VNC_POLL_MS:=3}" "${VDESK_EXPIRES_AT:=0}" "${VDESK_VNC_PASSWORD:=}" "${VDESK_LEASED:=0}" "${VDESK_LEASE_GRACE:=15}"
display_number=0
export DISPLAY=":${display_number}"
state_dir=/tmp/vdesk
log() { echo "vdesk-entrypoint: $*" >&2; }

for value in "$VDESK_WIDTH" "$VDESK_HEIGHT" "$VDESK_DEPTH" "$VDESK_DPI" "$VDESK_EXPIRES_AT" "$VDESK_LEASE_GRACE" "$VDESK_VNC_POLL_MS"; do
  [[ "$value" =~ ^[0-9]+$ ]] || { log "not a whole number: '$value'"; exit 2; }
done
if [ -z "$VDESK_VNC_PASSWORD" ]; then
  log "VDESK_VNC_PASSWORD is empty: refusing to serve VNC without a password"; exit 2
fi

# A desktop that was stopped and started again finds the previous X server's lock files.
rm -f "/tmp/.X${display_number}-lock" "/tmp/.X11-unix/X${display_number}"
mkdir -p /tmp/.X11-unix "$state_dir" && chmod 1777 /tmp/.X11-unix 2>/dev/null || true
chmod 700 "$state_dir"
umask 077
printf '%s\n' "$VDESK_VNC_PASSWORD" > "$state_dir/vnc-password"
unset VDESK_VNC_PASSWORD

children=()
stop_all() {
  trap - TERM INT
  for pid in "${children[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  exit "${1:-0}"
}
trap 'stop_all 0' TERM INT

start_x() {
  Xvfb "$DISPLAY" -screen 0 "${VDESK_WIDTH}x${VDESK_HEIGHT}x${VDESK_DEPTH}" -dpi "$VDESK_DPI" \
    -nolisten tcp -noreset +extension XTEST +extension DAMAGE &
  x_pid=$!
  for _ in $(seq 1 200); do
    [ -S "/tmp/.X11-unix/X${display_number}" ] && xdpyinfo >/dev/null 2>&1 && return 0
    kill -0 "$x_pid" 2>/dev/null || { log "the X server exited while starting"; exit 1; }
    sleep 0.01
  done
  log "the X server did not answer within 2 s"; exit 1
}

start_wm() { openbox >/dev/null 2>&1 & wm_pid=$!; }

# A window mapped before the window manager manages the screen stays unmanaged; wait for it
# to announce itself on the root window.
wait_for_wm() {
  for _ in $(seq 1 500); do
    xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q "window id" && return 0
    sleep 0.01
  done
  log "the window manager did not start within 5 s"
}

# -noxdamage: x11vnc then polls the framebuffer itself; trusting X DAMAGE hints delays
# changes by 100-400 ms here, polling sees them within a few milliseconds. Polling costs an
# idle desktop CPU (about 13% of a core at 3 ms, 6% at 20 ms): VDESK_VNC_POLL_MS trades one
# for the other.
start_vnc() {
  x11vnc -display "$DISPLAY" -rfbport 5900 -passwdfile "$state_dir/vnc-password" \
    -forever -shared -noxrecord -nocursor -quiet -norc -no6 \
    -noxdamage -wait "$VDESK_VNC_POLL_MS" -defer 3 -nonap -xkb >"$state_dir/x11vnc.log" 2>&1 &
  vnc_pid=$!
}

start_x
start_wm
wait_for_wm
start_vnc
children=("$vnc_pid" "$wm_pid" "$x_pid")

if [ "$VDESK_EXPIRES_AT" -gt 0 ]; then
  remaining=$(( VDESK_EXPIRES_AT - $(date +%s) ))
  [ "$remaining" -gt 0 ] || { log "time-to-live already over"; stop_all 0; }
  ( sleep "$remaining"; log "time-to-live over: stopping"; kill -TERM $$ ) &
  children+=("$!")
fi

if [ "$VDESK_LEASED" = 1 ]; then
  # A leased desktop whose holder never shows up (it died right after `docker run`) stops.
  ( sleep "$VDESK_LEASE_GRACE"
    pgrep -f "vdesk-channel lease" >/dev/null || { log "no lease holder: stopping"; kill -TERM $$; } ) &
fi

log "ready: ${VDESK_WIDTH}x${VDESK_HEIGHT}x${VDESK_DEPTH} at ${VDESK_DPI} dpi"
while true; do
  wait -n || true
  if ! kill -0 "$x_pid" 2>/dev/null; then log "the X server died"; stop_all 1; fi
  if ! kill -0 "$vnc_pid" 2>/dev/null; then log "restarting the VNC server"; start_vnc; fi
  if ! kill -0 "$wm_pid" 2>/dev/null; then log "restarting the window manager"; start_wm; fi
  children=("$vnc_pid" "$wm_pid" "$x_pid")
done
