/* The two nvidia-smi collectors (query-gpu loop -> gpu.csv, dmon -> dmon.csv) and the
 * one-shot GPU inventory taken before they start. */
#ifndef RUNMON_GPU_COLLECTORS_H
#define RUNMON_GPU_COLLECTORS_H

#include <csv.h>

#include "base/rm_time.h"
#include "model/energy.h"
#include "model/session.h"
#include "monitor/collector.h"
#include "monitor/policy.h"
#include "monitor/port.h"
#include "monitor/smi_collectors.h"
#include "monitor/smi_time.h"
#include "monitor/stream.h"

#define RM_GPU_MAX_FIELDS 64

#define RM_DEFAULT_GPU_FIELDS                                                                      \
    "timestamp,index,uuid,name,pci.bus_id,utilization.gpu,utilization.memory,memory.used,"         \
    "memory.total,power.draw,temperature.gpu,clocks.current.sm,clocks.current.memory"
/* p: power and temperature, u: utilization, c: clocks, m: framebuffer and BAR1 memory. */
#define RM_DEFAULT_DMON_METRICS "pucm"

struct rm_gpu_ctx {
    const struct rm_port *port;
    struct rm_stream out;
    struct csv_parser csv;
    char fieldbuf[8192];
    size_t fieldbuf_used;
    const char *field[RM_GPU_MAX_FIELDS];
    size_t field_len[RM_GPU_MAX_FIELDS];
    int nf, overflow;
    /* The asked-for columns. */
    char names_store[2048];
    const char *names[RM_GPU_MAX_FIELDS];
    int nnames;
    int col_index, col_uuid, col_timestamp;
    int row_in_group;
    int64_t last_row_ts; /* the last row's ts: samples without an index */
    /* A row's ts is its converted `timestamp` unless that is further than the guard from
     * its arrival (monitor/policy.h); those rows are counted in the session's health. */
    struct rm_ts_cache ts_cache;
    struct rm_ts_fallback fallback;
    enum rm_level level[RM_MAX_GPUS];
    /* The metric (model/gpu_metrics.h) each column feeds, -1 for none: the latest values. */
    signed char metric[RM_GPU_MAX_FIELDS];
    int64_t gap_ns;            /* the energy rule's gap threshold (model/energy.h) */
    char query[2200], lms[32]; /* the child's arguments */
};

struct rm_dmon_ctx {
    const struct rm_port *port;
    struct rm_stream out;
    char names_store[1024];
    const char *names[64];
    int nnames;
    int have_header;
    int skip[2];            /* dmon's Date and Time columns (-o DT): not written, -1: none */
    struct rm_smi_time clk; /* the rows' ts (monitor/smi_time.h) */
    char dsec[16];          /* the child's -d */
};

/* Splits the comma-separated field list into ctx->names. 0, or -1 (message in err). */
int rm_gpu_ctx_init(struct rm_gpu_ctx *g, const struct rm_port *port, const char *fields, char *err,
                    size_t errsz);
void rm_gpu_ctx_fini(struct rm_gpu_ctx *g);
enum rm_line_kind rm_gpu_on_line(void *ctx, char *line, size_t len, int64_t ts_ns);
void rm_gpu_on_flush(void *ctx);
/* The collector's read_due: the pipe is read when the stream's write is due (rm_stream_batch),
 * so a batch's rows are parsed in one go, right before their write; the rows wait in the pipe
 * meanwhile. Their ts is nvidia-smi's timestamp, whenever they are read. Rows stamped with
 * their arrival instead (no timestamp column, a fallback stretch) are read at every slot. */
int rm_gpu_read_due(void *ctx);

/* dmon's period in whole seconds for record's interval: its -d takes seconds. */
int rm_dmon_interval_s(double interval_s);

/* Their rows of rm_smi_collectors (gpu.csv, dmon.csv). */
extern const struct rm_smi_collector rm_gpu_collector, rm_dmon_collector;

/* period_ns: dmon's -d (the guard of its rows' ts). */
void rm_dmon_ctx_init(struct rm_dmon_ctx *d, const struct rm_port *port, int64_t period_ns);
enum rm_line_kind rm_dmon_on_line(void *ctx, char *line, size_t len, int64_t ts_ns);
void rm_dmon_on_flush(void *ctx);
void rm_dmon_on_window(void *ctx, int64_t since_real);

/* Runs `nvidia-smi -L` (for MIG UUIDs: monitor/gpu_select.h) into out. 0, or -1. */
int rm_smi_list(const char *nvidia_smi, char *out, size_t cap, int timeout_ms);

/* Runs `nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.total,driver_version` once
 * (at most timeout_ms) and fills sess->gpus and driver_version. Returns 0; -1 with err set
 * when it could not run or printed no GPU (spawn_errno = ENOENT when there is no nvidia-smi). */
/* Asks the driver once which of rm_power_fields (model/energy.h) it offers: one query of
 * all, or on an older driver that rejects a field it does not know, one query each. Sets
 * sess->power_probed, power_known and power_supported (a number on some GPU, not [N/A] or
 * [Not Supported]). */
void rm_gpu_power_probe(const char *nvidia_smi, struct rm_session *sess, int timeout_ms);

/* The clock fields the power probe asks for in its one query (not one at a time: a driver
 * that rejects the query is older than the throttle reasons' event_reasons spelling): the
 * SM clock's maximum and the throttle reasons' mask, which the summary's "held back by"
 * rules read. Their bits: sess->clock_supported. */
#define RM_GPU_CLOCK_FIELDS 2
extern const char *const rm_gpu_clock_fields[RM_GPU_CLOCK_FIELDS];

/* The default query fields plus the clock fields and then the power fields the probe found
 * (power.draw is already there), into buf; returns buf. */
const char *rm_gpu_fields_with_power(const struct rm_session *sess, char *buf, size_t cap);

int rm_gpu_inventory(const char *nvidia_smi, struct rm_session *sess, int timeout_ms, char *err,
                     size_t errsz, int *spawn_errno);

/* Parses one CSV line of nvidia-smi output into fields (libcsv; unquoted fields are trimmed).
 * Returns the field count, or -1 if it has more than max fields or is not valid CSV. The
 * pointers point into store. *plain (when not NULL): the line held no quote, CR or LF, so its
 * fields can be written as they are (rm_stream_field_plain). */
int rm_smi_split(struct csv_parser *p, const char *line, size_t len, char *store, size_t cap,
                 const char **field, size_t *flen, int max, bool *plain);

/* nvidia-smi's number, or NaN for any missing-value spelling or non-number. */
double rm_smi_number(const char *s, size_t n);

#endif
