#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for `plexity run --executor slurm` and its tests.
#
#   bash scripts/slurm.sh start    # write the config (first time), start munged, slurmctld, slurmd
#   bash scripts/slurm.sh status   # sinfo; exit 0 when the node accepts jobs
#   bash scripts/slurm.sh stop     # stop the three daemons started by `start`
#
# Needs Debian's slurmctld, slurmd, slurm-client and munge packages (scripts/ci/60-slurm.sh
# installs them) and root.  Deliberately minimal: no accounting, ProctrackType=proctrack/linuxproc
# and TaskPlugin=task/none (no cgroup plugins; Debian's slurmd still needs /sys/fs/cgroup mounted
# to start, so a container or chroot must provide it), one partition `debug`
# holding this machine with its real CPU count and memory (from `slurmd -C`).  Jobs run as the
# submitting user; the "shared filesystem" is the local disk.
#
# The config goes to /etc/slurm/slurm.conf, where sbatch/srun/squeue look for it.  An existing
# slurm.conf that this script did not write is never touched (start refuses instead).
set -euo pipefail

CONF=/etc/slurm/slurm.conf
MARK="# written by plexity_plugins scripts/slurm.sh"
STATE=/var/lib/slurm/plexity
RUN=/run/plexity-slurm
LOG=/var/log/slurm
PARTITION="${PLEXITY_SLURM_PARTITION:-debug}"

die() { echo "slurm.sh: $*" >&2; exit 1; }

write_conf() {
  if [[ -f "$CONF" ]] && ! grep -qF "$MARK" "$CONF"; then
    die "$CONF exists and was not written by this script; not touching it"
  fi
  local host node
  host="$(hostname -s)"
  # `slurmd -C` prints this machine's NodeName=... CPUs=... RealMemory=... line.
  node="$(slurmd -C | head -n1)"
  [[ "$node" == NodeName=* ]] || die "slurmd -C gave no node line: $node"
  mkdir -p "$(dirname "$CONF")" "$STATE/ctld" "$STATE/d" "$RUN" "$LOG"
  cat > "$CONF.tmp" <<EOF
$MARK
ClusterName=plexity
SlurmctldHost=${host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
MaxArraySize=10001
# a job whose dependency can never be met (a failed array task) is cancelled, not left pending
DependencyParameters=kill_invalid_depend
${node} NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=${PARTITION} Nodes=${host} Default=YES MaxTime=INFINITE State=UP
EOF
  if ! cmp -s "$CONF.tmp" "$CONF" 2>/dev/null; then
    mv "$CONF.tmp" "$CONF"
    echo "slurm.sh: wrote $CONF"
  else
    rm -f "$CONF.tmp"
  fi
}

pid_alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# port_in_use PORT: something listens on 127.0.0.1:PORT (a connection is accepted)
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Before starting a daemon of ours: its port must be free, or the daemon dies with a line in
# its log file that names no cause a user would look for.
check_port() {
  if port_in_use "$1"; then
    die "port $1 is in use (another Slurm?): $2 cannot start; stop the other one, or use it instead of this script"
  fi
}

node_ready() {
  # the node is up when sinfo shows it idle, mixed or allocated (not down/drained/unknown)
  sinfo -h -p "$PARTITION" -o "%T" 2>/dev/null | grep -qE '^(idle|mixed|allocated|completing)'
}

start() {
  [[ $EUID -eq 0 ]] || die "run as root"
  command -v slurmctld >/dev/null || die "slurmctld missing: apt-get install slurmctld slurmd slurm-client munge"
  write_conf
  # munged runs as its own user; /run/munge is not created without systemd
  mkdir -p /run/munge && chown munge:munge /run/munge && chmod 0755 /run/munge
  [[ -s /etc/munge/munge.key ]] || { mungekey --create --force >/dev/null 2>&1 || /usr/sbin/create-munge-key -f; chown munge:munge /etc/munge/munge.key; chmod 0400 /etc/munge/munge.key; }
  if ! pid_alive /run/munge/munged.pid; then
    runuser -u munge -- /usr/sbin/munged || die "munged failed to start; see /var/log/munge/munged.log"
  fi
  if ! pid_alive "$RUN/slurmctld.pid"; then
    check_port 6817 slurmctld
    slurmctld || die "slurmctld failed to start; see $LOG/slurmctld.log"
  fi
  if ! pid_alive "$RUN/slurmd.pid"; then
    check_port 6818 slurmd
    slurmd || die "slurmd failed to start; see $LOG/slurmd.log (it needs /sys/fs/cgroup mounted)"
  fi
  for _ in $(seq 60); do
    if node_ready; then
      echo "slurm.sh: single-node Slurm is up (partition $PARTITION)"
      return 0
    fi
    # a node that went down (e.g. after an unclean stop) is brought back
    scontrol update NodeName="$(hostname -s)" State=RESUME >/dev/null 2>&1 || true
    sleep 1
  done
  sinfo || true
  die "the node did not come up; see $LOG/slurmctld.log and $LOG/slurmd.log"
}

stop() {
  local pidfile
  for pidfile in "$RUN/slurmd.pid" "$RUN/slurmctld.pid" /run/munge/munged.pid; do
    if pid_alive "$pidfile"; then
      kill "$(cat "$pidfile")"
    fi
  done
  echo "slurm.sh: stopped"
}

status() {
  sinfo
  node_ready
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) die "usage: $0 start|stop|status" ;;
esac
