# A one-node SLURM cluster for the tests, brought up and down in seconds (Debian's slurm-wlm
# and munge, no systemd). Sourced after lib.sh; needs root (slurmd runs jobs as any user).
#   slurm_up DIR NGPUS   -> 0, or 1 with the reason in $SLURM_SKIP (the test then skips)
#   slurm_down           -> stops the daemons by their pid files
# The node declares NGPUS "GPUs" as gres, backed by device files made with mknod (major 195,
# as /dev/nvidiaN); clients get SLURM_CONF. Ports are picked free, so tests can run beside a
# real SLURM or each other.
SLURM_DIR=
SLURM_SKIP=

_slurm_port() { # a free TCP port on loopback, or the one given if nothing else works
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo "$1"
}

slurm_up() {
    local dir=$1 ngpus=$2 host i
    SLURM_SKIP=
    if [ "$(id -u)" -ne 0 ]; then SLURM_SKIP="not root (slurmd must run jobs)"; return 1; fi
    for b in slurmctld slurmd munged sbatch squeue scontrol sinfo; do
        command -v "$b" >/dev/null 2>&1 && continue
        PATH=$PATH:/usr/sbin:/sbin
        command -v "$b" >/dev/null 2>&1 && continue
        SLURM_SKIP="$b not installed (apt-get install slurm-wlm munge; .ci/deps.sh test)"
        return 1
    done
    SLURM_DIR=$dir
    mkdir -p "$dir"/{munge,state,spool,log,run,dev}
    chmod 0700 "$dir/munge"
    head -c 1024 /dev/urandom >"$dir/munge/munge.key" && chmod 0600 "$dir/munge/munge.key"
    munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
        --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/munge/seed" -f 2>"$dir/log/munged.err" ||
        { SLURM_SKIP="munged would not start: $(tail -1 "$dir/log/munged.err")"; return 1; }
    for ((i = 0; i < ngpus; i++)); do
        mknod "$dir/dev/nvidia$i" c 195 "$i" 2>/dev/null ||
            { SLURM_SKIP="mknod is not allowed here"; slurm_down; return 1; }
    done
    host=$(hostname -s)
    echo "Name=gpu File=$dir/dev/nvidia[0-$((ngpus - 1))]" >"$dir/gres.conf"
    cat >"$dir/slurm.conf" <<CONF
ClusterName=runmontest
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$(_slurm_port 16817)
SlurmdPort=$(_slurm_port 16818)
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
MessageTimeout=10
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=2
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) RealMemory=1000 Gres=gpu:$ngpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
    export SLURM_CONF=$dir/slurm.conf
    slurmctld -f "$SLURM_CONF" -i 2>"$dir/log/slurmctld.err" ||
        { SLURM_SKIP="slurmctld would not start: $(tail -1 "$dir/log/slurmctld.err")"; slurm_down; return 1; }
    slurmd -f "$SLURM_CONF" 2>"$dir/log/slurmd.err" ||
        { SLURM_SKIP="slurmd would not start: $(tail -1 "$dir/log/slurmd.err")"; slurm_down; return 1; }
    # Up when the node is idle (it registers within a second or two).
    if ! wait_for "sinfo -h -o %t 2>/dev/null | grep -qx idle" 30; then
        SLURM_SKIP="the node never became idle: $(sinfo -h -o '%t %E' 2>&1 | head -1); $(tail -2 "$dir/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
        slurm_down
        return 1
    fi
    return 0
}

slurm_down() {
    local f pid
    [ -n "$SLURM_DIR" ] || return 0
    for f in slurmd slurmctld munged; do
        pid=$(cat "$SLURM_DIR/run/$f.pid" 2>/dev/null) || continue
        [ -n "$pid" ] && kill "$pid" 2>/dev/null
    done
    for f in slurmd slurmctld munged; do
        pid=$(cat "$SLURM_DIR/run/$f.pid" 2>/dev/null) || continue
        wait_for "! kill -0 $pid 2>/dev/null" 5 || kill -9 "$pid" 2>/dev/null
    done
}
