/* Bench input: a large GPU file made from a real capture by repetition, times advancing.
 *
 *   gen_gpucsv LAYOUT MIB GPUS CAPTURE
 *
 * CAPTURE is a runmon gpu.csv (header ts,timestamp,index,uuid,name,pci.bus_id, then the eight
 * metrics of the default --query-gpu list) or, for LAYOUT dmon, an `nvidia-smi dmon` text
 * capture. Each capture row becomes GPUS rows (indexes 0..GPUS-1, the same values) and the
 * capture is repeated with its times moved on by its own span plus one interval, so the file
 * is one long recording. LAYOUT:
 *   runmon            runmon's gpu.csv (ts, timestamp, ... comma-separated, no units)
 *   smi-units-header  nvidia-smi --format=csv: ", " separators, header with units, "45 %"
 *   smi-nounits-header          --format=csv,nounits
 *   smi-units         --format=csv,noheader
 *   smi-nounits       --format=csv,noheader,nounits
 *   dmon              nvidia-smi dmon text: the capture's lines, header every 10 samples
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXROWS 4096

static char *rows[MAXROWS];
static int nrows;

static long long parse_ms(const char *s) /* "YYYY?MM?DD?hh:mm:ss.mmm", as UTC */
{
    struct tm tm = {0};
    int ms = 0;
    sscanf(s, "%4d%*c%2d%*c%2d%*c%2d:%2d:%2d.%3d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
           &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (long long)timegm(&tm) * 1000 + ms;
}

static void fmt_ms(char *out, size_t cap, long long ms, int iso)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    if (iso)
        snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03d+00:00", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
    else
        snprintf(out, cap, "%04d/%02d/%02d %02d:%02d:%02d.%03d", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

static const char *const units[8] = {" %", " %", " MiB", " MiB", " W", "", " MHz", " MHz"};
static const char *const smi_header_units =
    "timestamp, index, uuid, name, pci.bus_id, utilization.gpu [%], utilization.memory [%], "
    "memory.used [MiB], memory.total [MiB], power.draw [W], temperature.gpu, "
    "clocks.current.sm [MHz], clocks.current.memory [MHz]\n";

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: gen_gpucsv LAYOUT MIB GPUS CAPTURE\n");
        return 2;
    }
    const char *layout = argv[1];
    long long target = atoll(argv[2]) * 1024 * 1024, written = 0;
    int gpus = atoi(argv[3]);
    FILE *in = fopen(argv[4], "r");
    if (!in) {
        perror(argv[4]);
        return 1;
    }
    static char buf[1 << 16];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int dmon = !strcmp(layout, "dmon");
    while ((n = getline(&line, &cap, in)) > 0 && nrows < MAXROWS) {
        if (dmon ? line[0] == '#' : !strncmp(line, "ts,", 3)) continue;
        if (n > 1) rows[nrows++] = strdup(line);
    }
    fclose(in);
    if (nrows == 0) {
        fprintf(stderr, "gen_gpucsv: no rows in %s\n", argv[4]);
        return 1;
    }
    if (dmon) {
        /* dmon: the capture's GPU rows in groups of `gpus`, the two header lines every 10. */
        for (long long s = 0; written < target; s++) {
            if (s % 10 == 0)
                written +=
                    printf("# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa "
                           "  mclk   pclk \n# Idx      W      C      C      %%      %%      %% "
                           "     %%      %%      %%    MHz    MHz \n");
            for (int g = 0; g < gpus; g++) {
                const char *r = rows[s % nrows];
                while (*r == ' ')
                    r++;
                while (*r >= '0' && *r <= '9')
                    r++; /* the capture's index: ours instead */
                written += printf("%5d%s", g, r);
            }
        }
        return 0;
    }
    int iso_ts = !strcmp(layout, "runmon");
    int header = iso_ts || strstr(layout, "-header");
    int with_units = !strncmp(layout, "smi-units", 9);
    long long first = -1, last = 0;
    for (int i = 0; i < nrows; i++) {
        long long t = parse_ms(strchr(rows[i], ',') + 1);
        if (first < 0) first = t;
        last = t;
    }
    long long span = last - first + 500;
    if (header) {
        if (iso_ts)
            written += printf("ts,timestamp,index,uuid,name,pci.bus_id,utilization.gpu,"
                              "utilization.memory,memory.used,memory.total,power.draw,"
                              "temperature.gpu,clocks.current.sm,clocks.current.memory\n");
        else if (with_units)
            written += printf("%s", smi_header_units);
        else
            written += printf("%s", smi_header_units); /* nounits keeps the header's units */
    }
    for (long long rep = 0; written < target; rep++) {
        for (int i = 0; i < nrows && written < target; i++) {
            /* Fields: ts, timestamp, index, uuid, name, pci, 8 metrics. */
            char *f[16];
            int nf = 0;
            char tmp[1024];
            snprintf(tmp, sizeof tmp, "%s", rows[i]);
            tmp[strcspn(tmp, "\r\n")] = '\0';
            for (char *p = tmp; nf < 16;) {
                f[nf++] = p;
                char *c = strchr(p, ',');
                if (!c) break;
                *c = '\0';
                p = c + 1;
            }
            if (nf != 14) {
                fprintf(stderr, "gen_gpucsv: row %d has %d fields\n", i, nf);
                return 1;
            }
            long long off = rep * span;
            char ts[96], stamp[96];
            fmt_ms(ts, sizeof ts, parse_ms(f[0]) + off, 1);
            fmt_ms(stamp, sizeof stamp, parse_ms(f[1]) + off, 0);
            for (int g = 0; g < gpus; g++) {
                char uuid[64];
                snprintf(uuid, sizeof uuid, "%.*s%02x", (int)strlen(f[3]) - 2, f[3], g);
                if (iso_ts) {
                    written += printf("%s,%s,%d,%s,%s,00000000:%02X:00.0", ts, stamp, g, uuid, f[4],
                                      0x18 + g);
                    for (int m = 0; m < 8; m++)
                        written += printf(",%s", f[6 + m]);
                } else {
                    written += printf("%s, %d, %s, %s, 00000000:%02X:00.0", stamp, g, uuid, f[4],
                                      0x18 + g);
                    for (int m = 0; m < 8; m++)
                        written += printf(", %s%s", f[6 + m], with_units ? units[m] : "");
                }
                written += printf("\n");
            }
        }
    }
    return 0;
}
