#!/usr/bin/env bash
# The host's set-up: a Docker engine that answers, debootstrap (the image's base when no
# registry answers), docker-compose, and for the harness chromium (the report's browser check)
# and novnc (the page of `vdesk view`'s one-time links), and Tesseract's English model (text on
# screen), and CRIU >= 4.1 for checkpoints and forks (scripts/criu/). On a Debian/Ubuntu
# machine where we are root, missing pieces are installed from Debian's packages and dockerd is
# started in the background; elsewhere this says what to install and stops.
set -euo pipefail

engine_answers() { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; }
can_install() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }
have_debootstrap() { [ -x /usr/sbin/debootstrap ] || command -v debootstrap >/dev/null 2>&1; }
have_tessdata() { ls /usr/share/tesseract-ocr/*/tessdata/eng.traineddata >/dev/null 2>&1; }
have_tools() {
  have_debootstrap && command -v docker-compose >/dev/null 2>&1 && command -v chromium >/dev/null 2>&1 \
    && [ -d /usr/share/novnc ] && have_tessdata
}

here="$(cd "$(dirname "$0")" && pwd)"
# Checkpoints and forks are optional: a failed CRIU build is said, and the rest goes on.
if can_install; then "$here/criu/install-criu.sh" || echo "vdesk: CRIU was not installed: no checkpoints or forks" >&2; fi

if engine_answers && have_tools; then
  exit 0
fi
if ! can_install; then
  # The tests need every piece: a run without one would pass with that feature untested.
  if engine_answers; then
    echo "vdesk: the tests need debootstrap, docker-compose, chromium, novnc and tesseract-ocr-eng;" >&2
    echo "       install the missing ones (Debian packages of those names), or run this as root" >&2
    echo "       on Debian/Ubuntu to have them installed for you." >&2
  else
    echo "vdesk: no Docker engine answers. Install and start Docker (https://docs.docker.com/engine/install/)," >&2
    echo "       or run this as root on Debian/Ubuntu to have Debian's docker.io installed for you." >&2
  fi
  exit 1
fi

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io iptables ca-certificates)
have_debootstrap || missing+=(debootstrap)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ -d /usr/share/novnc ] || missing+=(novnc)
have_tessdata || missing+=(tesseract-ocr-eng)
if [ ${#missing[@]} -gt 0 ]; then
  echo "vdesk: installing ${missing[*]} ..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if engine_answers; then exit 0; fi
if ! pgrep -x dockerd >/dev/null 2>&1; then
  echo "vdesk: starting dockerd in the background (log: /var/log/vdesk-dockerd.log) ..."
  nohup dockerd >/var/log/vdesk-dockerd.log 2>&1 &  # reads the runtime install-criu.sh put in daemon.json
fi
for _ in $(seq 1 60); do
  if engine_answers; then echo "vdesk: Docker engine is up."; exit 0; fi
  sleep 0.5
done
echo "vdesk: dockerd did not answer within 30 s; see /var/log/vdesk-dockerd.log" >&2
tail -n 20 /var/log/vdesk-dockerd.log >&2 || true
exit 1
