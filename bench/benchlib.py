"""Helpers the bench scripts share: where the release binaries are, Debian
packages installed when missing, free ports and waiting for one to open."""

import os
import shutil
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def release_dir():
    """Where cargo puts release binaries: $CARGO_TARGET_DIR (relative to
    the checkout when relative, as cargo reads it) or target/."""
    return os.path.join(ROOT, os.environ.get("CARGO_TARGET_DIR") or "target", "release")


def need(cmd, pkg):
    """Installs Debian package `pkg` (as root) when `cmd` is missing."""
    if shutil.which(cmd) is None:
        if os.geteuid() == 0 and shutil.which("apt-get"):
            subprocess.run(["apt-get", "update", "-qq"], check=True)
            subprocess.run(["apt-get", "install", "-y", "-qq", pkg], check=True,
                           env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        else:
            sys.exit(f"{cmd} is missing: apt-get install {pkg}")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, timeout=10, proc=None):
    """Waits until `port` accepts; fails at once when `proc` (the process
    that should listen) has exited."""
    end = time.time() + timeout
    while time.time() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the process meant to listen on {port} exited ({proc.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} never opened")
