# Sourced by a desktop's session script: VDESK_FAKETIME (an offset in seconds, "+N" or "-N", from
# `Desktop.up(clock=...)`) gives the session's programs, and what they start, the desktop's clock.
# Needs the session's log function.
if [ -n "${VDESK_FAKETIME:-}" ]; then
  if [[ "$VDESK_FAKETIME" =~ ^[+-][0-9]+$ ]]; then
    export LD_PRELOAD=/usr/local/lib/libfaketime.so.1 FAKETIME="$VDESK_FAKETIME" FAKETIME_DONT_FAKE_MONOTONIC=1
  else
    log "VDESK_FAKETIME is not an offset in seconds: '$VDESK_FAKETIME' (the clock stays real)"
  fi
fi
