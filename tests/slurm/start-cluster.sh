#!/usr/bin/env bash
# Starts a single-node Slurm cluster on this machine, for tests/slurm.rs (run as root; Debian's
# slurmctld, slurmd, slurm-client and munge must be installed; no systemd needed).
#
#   tests/slurm/start-cluster.sh [STATE_DIR]     (default /tmp/emission-factory-slurm)
#
# It writes /etc/slurm/slurm.conf (refusing to replace one it did not write), keeps the daemons'
# state, logs and pid files in STATE_DIR, starts munged, slurmctld and slurmd directly, and waits
# until the node takes jobs. tests/slurm/stop-cluster.sh stops them by their pids.
# What each setting is for: /work/shared/notes/slurm-single-node.md, and README.md
# ("Spread an emission over many machines").
set -euo pipefail

STATE=${1:-/tmp/emission-factory-slurm}
CONF=/etc/slurm/slurm.conf
MARK="# written by emission-factory tests/slurm/start-cluster.sh"
started=$EPOCHREALTIME

die() { echo "start-cluster: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run me as root (the daemons run as root here)"
for tool in munged slurmctld slurmd sinfo sbatch; do
  command -v "$tool" >/dev/null || die "$tool is missing: apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge"
done
if [ -e "$CONF" ] && ! grep -qxF "$MARK" "$CONF"; then
  die "$CONF exists and was not written by this script; not replacing it"
fi

mkdir -p "$STATE"/{spool,slurmd,log}
chmod 755 "$STATE"

# munge: /run/munge does not exist without systemd; Debian's package ships a key.
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
chmod 755 /run/munge
# Only a munged started here is stopped by stop-cluster.sh.
if ! { [ -s /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; }; then
  runuser -u munge -- munged --force
  cp /run/munge/munged.pid "$STATE/munged.pid"
fi

# The node's shape, as slurmd itself sees it (a RealMemory above the hardware drains the node).
shape=$(slurmd -C | head -1 | sed -e 's/^NodeName=[^ ]* //' -e 's/ *$//')
host=$(hostname -s)
cat > "$CONF.new" <<CONFEOF
$MARK
ClusterName=emission-factory-ci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/spool
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerParameters=batch_sched_delay=0
MinJobAge=300
KillWait=10
NodeName=$host NodeAddr=127.0.0.1 $shape State=UNKNOWN
PartitionName=batch Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONFEOF
mv "$CONF.new" "$CONF"

running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
running "$STATE/slurmctld.pid" || slurmctld
running "$STATE/slurmd.pid" || slurmd

# Ready when the controller answers, the node has registered (slurmd -> slurmctld) and is idle.
for _ in $(seq 1 300); do
  state=$(sinfo -h -N -o '%T' 2>/dev/null | head -1 || true)
  case "$state" in
    idle|mixed|allocated)
      if scontrol show node "$host" 2>/dev/null | grep -q 'SlurmdStartTime=[0-9]'; then
        elapsed=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
        echo "start-cluster: Slurm is up in $elapsed s: node $host ($shape), state in $STATE"
        exit 0
      fi;;
  esac
  sleep 0.2
done
echo "start-cluster: the node did not become idle within 60 s; logs in $STATE/log" >&2
sinfo -N -l >&2 || true
tail -20 "$STATE/log/slurmctld.log" "$STATE/log/slurmd.log" >&2 || true
exit 1
