#!/usr/bin/env bash
# Stops what tests/slurm/start-cluster.sh started, by the pids it kept: cancels every job first
# (running jobs otherwise outlive the daemons), then slurmd, slurmctld and munged.
#
#   tests/slurm/stop-cluster.sh [STATE_DIR]     (default /tmp/emission-factory-slurm)
set -uo pipefail

STATE=${1:-/tmp/emission-factory-slurm}
[ -d "$STATE" ] || exit 0

if command -v scancel >/dev/null && [ -s "$STATE/slurmctld.pid" ]; then
  timeout 10 scancel --user=root >/dev/null 2>&1 || true
  for _ in $(seq 1 50); do
    [ -z "$(timeout 5 squeue -h 2>/dev/null)" ] && break
    sleep 0.2
  done
fi

stop() { # pid file, name
  [ -s "$1" ] || return 0
  local pid
  pid=$(cat "$1")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "stop-cluster: $2 (pid $pid) ignored SIGTERM; killing it" >&2
      kill -KILL "$pid" 2>/dev/null
    fi
  fi
  rm -f "$1"
}
stop "$STATE/slurmd.pid" slurmd
stop "$STATE/slurmctld.pid" slurmctld
stop "$STATE/munged.pid" munged
echo "stop-cluster: stopped Slurm and munge ($STATE)"
