/* Pure parsers of the I/O sampler's /proc files (monitor/io_sampler.c): /proc/diskstats,
 * /proc/net/dev, /proc/pressure/{cpu,io,memory} and /proc/PID/io. Buffer in, structs out, no
 * NUL terminator needed, no allocation: the fuzzing entry points (fuzz/fuzz_io.c).
 *
 * A line that does not parse is counted in *bad and skipped; the others are kept, so one odd
 * line (a newer kernel's, a torn read) never loses the rest of the file.
 */
#ifndef RUNMON_IO_PARSE_H
#define RUNMON_IO_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define RM_IO_NAME_MAX 32 /* a device or interface name, with its NUL (the kernel's is 32) */

/* One /proc/diskstats line: "major minor name" and at least 11 counters (kernel 2.6.25 and
 * later). Newer kernels append discard and flush counters: columns past the 11th are
 * ignored. Sectors are 512 bytes whatever the device's own sector size. */
struct rm_disk_stat {
    unsigned major, minor;
    char name[RM_IO_NAME_MAX];
    uint64_t read_sectors, write_sectors;
    uint64_t io_ms; /* time with I/O in flight ("busy"), ms; 32 bits on older kernels */
};

/* Stores up to max devices in out, in the file's order; *n: how many; *bad: lines skipped
 * (too few columns, a counter that is not a decimal number or overflows 64 bits, a name too
 * long). Returns the number of valid lines (may exceed max). */
int rm_parse_diskstats(const char *buf, size_t len, struct rm_disk_stat *out, int max, int *n,
                       int *bad);

/* One /proc/net/dev interface line: "name: rx_bytes ... (8 receive counters) tx_bytes ...". */
struct rm_net_stat {
    char name[RM_IO_NAME_MAX];
    uint64_t rx_bytes, tx_bytes;
};

/* The two header lines (no ':') are skipped without counting; otherwise as
 * rm_parse_diskstats. */
int rm_parse_net_dev(const char *buf, size_t len, struct rm_net_stat *out, int max, int *n,
                     int *bad);

/* /proc/pressure/<resource>: "some avg10=.. avg60=.. avg300=.. total=US" and, on kernels that
 * have it (always for io and memory; cpu since 5.13), the same with "full". */
struct rm_pressure {
    int have_some, have_full;
    uint64_t some_us, full_us; /* stalled time since boot, microseconds */
};

/* 0, or -1 when no "some" line with a total parses. */
int rm_parse_pressure(const char *buf, size_t len, struct rm_pressure *out);

/* /proc/PID/io. read_bytes/write_bytes: what the process made the storage layer read and
 * write (page-cache hits are not in read_bytes); rchar/wchar: bytes through read()/write()
 * and the like, whatever their source. */
struct rm_pid_io {
    uint64_t rchar, wchar, read_bytes, write_bytes;
};

/* 0, or -1 when read_bytes or write_bytes is missing or not a number. */
int rm_parse_pid_io(const char *buf, size_t len, struct rm_pid_io *out);

#endif
