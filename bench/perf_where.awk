# Where a recorder's CPU goes: reads `perf script -F comm,ip,sym` of a cpu-clock profile with
# call stacks (perf record -g) and prints, per thread, the share of the samples by the system
# call (and /proc file) they were taken under, or "user space" when under none. Each sample is
# put under the first frame, from the leaf up, that names one; the seq_file read path common to
# every /proc file is "pread (seq_file, any /proc file)".
function classify(    i, s) {
    for (i = 0; i < n; i++) {
        s = st[i]
        if (s ~ /^show_stat/) return "pread /proc/stat"
        if (s ~ /^meminfo_proc_show/) return "pread /proc/meminfo"
        if (s ~ /^do_task_stat/) return "pread /proc/PID/stat"
        if (s ~ /^loadavg_proc_show/) return "pread /proc/loadavg"
        if (s ~ /^(diskstats_show|dev_seq_show|dev_seq_printf_stats|psi_show|do_io_accounting|proc_pid_io)/)
            return "pread I/O sample files"
        if (s ~ /^__x64_sys_pread64/) return "pread (seq_file, any /proc file)"
        if (s ~ /^__x64_sys_epoll_pwait2|^__x64_sys_clock_nanosleep/) return "sleep and wakeup"
        if (s ~ /^__x64_sys_epoll_wait/) return "epoll_wait (which pipes hold rows)"
        if (s ~ /^ksys_read|^__x64_sys_read$/) return "read (nvidia-smi pipes)"
        if (s ~ /^ksys_write|^__x64_sys_write$/) return "write (rows)"
        if (s ~ /fdatasync|do_fsync/) return "fdatasync"
        if (s ~ /sync_file_range/) return "sync_file_range"
        if (s ~ /^do_syscall_64/) return "other system calls"
        if (s ~ /^(asm_|sysvec_|__sysvec|irq_exit)/) return "interrupts"
    }
    return "user space"
}
function take() {
    if (!n) return
    k = comm SUBSEP classify()
    c[k]++
    tot++
    n = 0
}
/^[^ \t]/ { take(); comm = $1; next }
NF >= 2 { st[n++] = $2 }
END {
    take()
    if (!tot) { print "  (no samples)"; exit }
    for (k in c) {
        split(k, p, SUBSEP)
        printf "%s\t%.1f\t%s\n", p[1], 100 * c[k] / tot, p[2]
    }
}
