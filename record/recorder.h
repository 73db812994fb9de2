/* The recorder: one `runmon record` session. It owns the session's threads and wires the
 * workers (monitor/), the sink (sink/) and the exporters (record/exporters.h) together; each
 * worker gets a narrow port (monitor/port.h), never the recorder.
 *
 * Threads: main (signals, the workload, the exporters), the supervisor (nvidia-smi collectors;
 * it must live as long as they do, because PR_SET_PDEATHSIG follows the spawning thread, and
 * the /proc samplers' tick), without it a thread for that tick alone (rm-sampler), and the
 * sink's thread. Every signal runmon handles is blocked in all threads and
 * read by the main thread from a signalfd, so no handler runs in the middle of a library call.
 */
#ifndef RUNMON_RECORD_RECORDER_H
#define RUNMON_RECORD_RECORDER_H

#include "model/workload.h"
#include "monitor/proc_samplers.h"

#define RM_DEFAULT_WARN_PCT 90.0
#define RM_DEFAULT_CRIT_PCT 98.0
#define RM_DEFAULT_KILL_GRACE_S 10.0

/* What `runmon record` was asked for (cli/cmd_record.c fills it from the command line). */
struct rm_record_opts {
    const char *output_dir;
    double interval_s;
    const char *gpu_fields;
    const char *dmon_metrics;
    const char *nvidia_smi;
    int no_gpu;
    int no_apps;  /* --no-apps: no per-process collector (nvidia-smi pmon) */
    int all_gpus; /* --all-gpus: every GPU nvidia-smi shows, whatever the environment names */
    /* The /proc samplers' own (--per-cpu, --no-io, --io-*, RUNMON_PROC_ROOT, ...): passed to
     * them as they are (monitor/proc_samplers.h). */
    struct rm_proc_opts procs;
    int quiet;
    double warn_pct, crit_pct;
    double duration_s; /* 0: until a signal (or the command's end) */
    char *const *command;
    /* Who the workload is (--pid, --cgroup; zero: the command's tree, or the SLURM step's
     * cgroup where the recorder finds one): monitor/workload.h. */
    struct rm_workload workload;
    const char *sweep;         /* --sweep NAME, or NULL */
    const char *params_json;   /* --param KEY=VALUE as one JSON object's text, or NULL */
    const char *prom_textfile; /* --prom-textfile PATH, NULL: no export */
    const char *pushgateway;   /* --pushgateway URL (record/export_push.c), NULL: none */
    double push_interval_s;    /* --push-interval S: also push while recording (0: at the end) */
    const char *influx;        /* --influx URL (record/export_influx.c), NULL: none */
    const char *influx_file;   /* --influx-file PATH: the same lines into a file, NULL: none */
    /* The telemetry sink (sink/sink.h). */
    double flush_s;            /* --flush-seconds: fdatasync + manifest at least this often */
    double rollover_mb;        /* --rollover-mb: seal the active file at this size (0: never) */
    int retention_files;       /* --retention-files: sealed segments kept per stream (0: all) */
    double retention_total_mb; /* --retention-total-mb: retained bytes in the sink (0: all) */
    int private_files;         /* --private: files 0600, folders 0700 (base/fileio.h) */
    double kill_grace_s;       /* --kill-grace: a stopped command's processes get SIGKILL this
                                  long after the stop signal */
};

/* What can be refused before anything is made (the session's folder, -o's): the exporters'
 * checks (record/exporter.h). 0, or -1 with the reason printed. rm_record_run checks it too;
 * runmon record checks it before it makes -o's folder. */
int rm_record_check(const struct rm_record_opts *opts);

/* Records one session as opts says; runs the command if there is one. Returns the exit
 * status `runmon record` exits with: the command's (128+N for signal N, 127 not found, 126 not
 * runnable), 0 without a command, 1 or 2 when the session could not be set up. */
int rm_record_run(const struct rm_record_opts *opts);

#endif
