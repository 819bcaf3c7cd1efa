#!/usr/bin/python3
"""vdesk-channel: the in-container end of vdesk's persistent exec session.

Modes:
  vdesk-channel          serve requests: one JSON object per line on stdin, one reply per
                         line on stdout. Requests carry argument lists, never shell strings.
  vdesk-channel lease    hold the desktop's lease: block on stdin; when it closes (the host
                         process that opened it went away, however it died) stop the desktop.

Request:  {"id": 1, "argv": ["xdotool", "click", "1"], "stdin": null, "timeout": 10,
           "detach": false}
Reply:    {"id": 1, "rc": 0, "stdout": "...", "stderr": "..."}
A detached request starts the program in its own session and replies at once.
"""
import json
import os
import shutil
import signal
import subprocess
import sys


def run(request):
    argv = request["argv"]
    if not argv or not all(isinstance(arg, str) for arg in argv):
        return {"rc": 2, "stdout": "", "stderr": "argv must be a non-empty list of strings"}
    if shutil.which(argv[0]) is None:
        return {"rc": 127, "stdout": "", "stderr": f"{argv[0]}: command not found"}
    if request.get("detach"):
        # setsid -f forks, so the program is reaped by the container's init, not by us.
        subprocess.run(["setsid", "-f", *argv], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return {"rc": 0, "stdout": "", "stderr": ""}
    try:
        done = subprocess.run(argv, input=request.get("stdin"), capture_output=True,
                              text=True, errors="replace", timeout=request.get("timeout"),
                              check=False)
    except subprocess.TimeoutExpired:
        return {"rc": 124, "stdout": "", "stderr": f"timed out after {request.get('timeout')} s"}
    return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def serve():
    for line in sys.stdin:
        try:
            request = json.loads(line)
            reply = run(request)
        except Exception as error:  # a bad request must not end the channel
            request, reply = {}, {"rc": 2, "stdout": "", "stderr": f"bad request: {error}"}
        reply["id"] = request.get("id") if isinstance(request, dict) else None
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def hold_lease():
    sys.stdout.write("leased\n")
    sys.stdout.flush()
    while sys.stdin.buffer.read(4096):
        pass
    os.kill(1, signal.SIGTERM)


if __name__ == "__main__":
    hold_lease() if sys.argv[1:] == ["lease"] else serve()
