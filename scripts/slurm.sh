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
# With PLEXITY_SLURM_MEMORY=enforce, a job's memory (--mem, --mem-per-cpu) is its limit, as on most clusters:
# memory is a consumable resource (SelectTypeParameters=CR_CPU_Memory, DefMemPerCPU=1024 for a job that asks for
# none), and slurmstepd kills a step whose processes' RSS adds up to more (JobAcctGatherType=jobacct_gather/linux,
# JobAcctGatherParams=OverMemoryKill, polled every second): no cgroup plugin needed.
# (tests/test_slurm_memory_probe53.py starts one such private cluster.)  With PLEXITY_SLURM_MEMORY=cgroup, the
# limit is the job's memory cgroup instead (TaskPlugin=task/cgroup, a cgroup.conf beside slurm.conf with
# ConstrainRAMSpace=yes; cgroup v1's memory controller must be writable): the kernel's out-of-memory killer ends
# the process that needs more, and Slurm marks the task FAILED ("Out Of Memory" in its log).
#
# Two places:
# - by default the config goes to /etc/slurm/slurm.conf, where sbatch/srun/squeue look for it,
#   on Slurm's standard ports 6817/6818, with the system's munged.  An existing slurm.conf that
#   this script did not write is never touched (start refuses instead).
# - with PLEXITY_SLURM_DIR=DIR (what the tests do), a private cluster: config, state, logs, pid
#   files, and a munged of its own (its own key and socket) all in DIR, on the ports
#   PLEXITY_SLURM_PORTS="CTLD_PORT D_PORT" (default: two free ones).  Use it with
#   SLURM_CONF=DIR/slurm.conf; `stop` stops its three daemons and nothing else.
set -euo pipefail

MARK="# written by plexity_plugins scripts/slurm.sh"
PARTITION="${PLEXITY_SLURM_PARTITION:-debug}"
PRIVATE="${PLEXITY_SLURM_DIR:-}"
if [[ -n "$PRIVATE" ]]; then
  mkdir -p "$PRIVATE"
  PRIVATE="$(cd "$PRIVATE" && pwd)"
  CONF="$PRIVATE/slurm.conf"
  STATE="$PRIVATE/state"
  RUN="$PRIVATE/run"
  LOG="$PRIVATE/log"
  MUNGE_DIR="$PRIVATE/munge"  # socket, pid, log (munged wants it open to all)
  MUNGE_KEY="$PRIVATE/munge-key/munge.key"  # (its key in a directory of its own)
  MUNGE_SOCKET="$MUNGE_DIR/munge.socket"
  export SLURM_CONF="$CONF"  # for sinfo / scontrol below
else
  CONF=/etc/slurm/slurm.conf
  STATE=/var/lib/slurm/plexity
  RUN=/run/plexity-slurm
  LOG=/var/log/slurm
  MUNGE_DIR=/run/munge
  MUNGE_KEY=/etc/munge/munge.key
  MUNGE_SOCKET=""
fi

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
  local memory_lines="SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none"
  case "${PLEXITY_SLURM_MEMORY:-}" in
    "") ;;
    enforce) memory_lines="SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=1024
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherParams=OverMemoryKill
JobAcctGatherFrequency=task=1" ;;
    cgroup) memory_lines="SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=1024
JobAcctGatherType=jobacct_gather/linux" ;;
    *) die "PLEXITY_SLURM_MEMORY=${PLEXITY_SLURM_MEMORY}: give enforce or cgroup, or leave it unset" ;;
  esac
  local task_plugin=task/none
  if [[ "${PLEXITY_SLURM_MEMORY:-}" == cgroup ]]; then
    # each job in a memory cgroup of its --mem (cgroup v1's memory controller, writable here): the kernel's
    # out-of-memory killer ends a process of a job that needs more, as on most clusters
    [[ -w /sys/fs/cgroup/memory/cgroup.procs ]] || \
      die "PLEXITY_SLURM_MEMORY=cgroup needs cgroup v1's memory controller writable at /sys/fs/cgroup/memory"
    task_plugin=task/cgroup
    cat > "$(dirname "$CONF")/cgroup.conf" <<EOF
$MARK
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainRAMSpace=yes
ConstrainSwapSpace=yes
AllowedSwapSpace=0
EOF
  fi
  local private_lines=""
  if [[ -n "$PRIVATE" ]]; then
    private_lines="SlurmctldPort=$CTLD_PORT
SlurmdPort=$D_PORT
AuthInfo=socket=$MUNGE_SOCKET"
  fi
  cat > "$CONF.tmp" <<EOF
$MARK
ClusterName=plexity
SlurmctldHost=${host}(127.0.0.1)
${private_lines}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=${task_plugin}
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
${memory_lines}
ReturnToService=2
AccountingStorageType=accounting_storage/none
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
# (no DependencyParameters=kill_invalid_depend, as most sites: plexity's Slurm executor asks for it per job,
# sbatch --kill-on-invalid-dep=yes, and the tests see that it does)
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

free_ports() {  # two ports nothing listens on now
  python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])'
}

start() {
  [[ $EUID -eq 0 ]] || die "run as root"
  command -v slurmctld >/dev/null || die "slurmctld missing: apt-get install slurmctld slurmd slurm-client munge"
  CTLD_PORT=6817 D_PORT=6818
  if [[ -n "$PRIVATE" ]]; then
    if [[ -f "$CONF" ]]; then  # a private cluster started again keeps its ports
      CTLD_PORT="$(sed -n 's/^SlurmctldPort=//p' "$CONF")" D_PORT="$(sed -n 's/^SlurmdPort=//p' "$CONF")"
    else
      read -r CTLD_PORT D_PORT <<< "${PLEXITY_SLURM_PORTS:-$(free_ports)}"
    fi
  fi
  write_conf
  # munged runs as its own user; /run/munge is not created without systemd
  mkdir -p "$MUNGE_DIR" "$(dirname "$MUNGE_KEY")" && chown munge:munge "$MUNGE_DIR" && chmod 0755 "$MUNGE_DIR"
  if [[ ! -s "$MUNGE_KEY" ]]; then
    if [[ -n "$PRIVATE" ]]; then
      chown munge:munge "$(dirname "$MUNGE_KEY")" && chmod 0700 "$(dirname "$MUNGE_KEY")"
      dd if=/dev/urandom of="$MUNGE_KEY" bs=1024 count=1 2>/dev/null
    else
      mungekey --create --force >/dev/null 2>&1 || /usr/sbin/create-munge-key -f
    fi
    chown munge:munge "$MUNGE_KEY"; chmod 0400 "$MUNGE_KEY"
  fi
  if ! pid_alive "$MUNGE_DIR/munged.pid"; then
    if [[ -n "$PRIVATE" ]]; then
      runuser -u munge -- /usr/sbin/munged --socket="$MUNGE_SOCKET" --key-file="$MUNGE_KEY" \
        --pid-file="$MUNGE_DIR/munged.pid" --log-file="$MUNGE_DIR/munged.log" --seed-file="$MUNGE_DIR/munged.seed" \
        || die "munged failed to start; see $MUNGE_DIR/munged.log"
    else
      runuser -u munge -- /usr/sbin/munged || die "munged failed to start; see /var/log/munge/munged.log"
    fi
  fi
  if ! pid_alive "$RUN/slurmctld.pid"; then
    check_port "$CTLD_PORT" slurmctld
    slurmctld -f "$CONF" || die "slurmctld failed to start; see $LOG/slurmctld.log"
  fi
  if ! pid_alive "$RUN/slurmd.pid"; then
    check_port "$D_PORT" slurmd
    slurmd -f "$CONF" || die "slurmd failed to start; see $LOG/slurmd.log (it needs /sys/fs/cgroup mounted)"
  fi
  for _ in $(seq 60); do
    if node_ready; then
      echo "slurm.sh: single-node Slurm is up (partition $PARTITION${PRIVATE:+; SLURM_CONF=$CONF})"
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
  local pid
  local pids=()
  if [ -n "$PRIVATE" ] && pid_alive "$RUN/slurmctld.pid"; then
    # its jobs first (a private cluster's are the tests' own): a job still running when slurmd ends goes on, and
    # its step waits for ever for a slurmd to tell that it ended, adopted by init
    scancel --full --quiet --user "$(id -un)" >/dev/null 2>&1 || true
    for _ in $(seq 50); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.1; done
  fi
  # told all at once, then waited for: each takes ~2 s to end (one after the other, ~6 s)
  for pidfile in "$RUN/slurmd.pid" "$RUN/slurmctld.pid" "$MUNGE_DIR/munged.pid"; do
    if pid_alive "$pidfile"; then
      pid="$(cat "$pidfile")"
      kill "$pid"
      pids+=("$pid")
    fi
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  # (a step left all the same, its slurmd gone before it reported its end: known by its SLURM_CONF)
  if [ -n "$PRIVATE" ]; then
    local environ
    for environ in /proc/[0-9]*/environ; do
      pid="${environ#/proc/}"; pid="${pid%/environ}"
      [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmstepd ] || continue
      if { tr '\0' '\n' < "$environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$CONF"; then
        kill -9 "$pid" 2>/dev/null || true
      fi
    done
  fi
  if [[ -f "$(dirname "$CONF")/cgroup.conf" ]]; then  # (task/cgroup's: left behind by slurmd, empty once it ended)
    rmdir "/sys/fs/cgroup/memory/slurm_$(hostname -s)" 2>/dev/null || true
  fi
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
