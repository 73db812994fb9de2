#include "report/output_io.h"

#include "base/termsafe.h"

/* A member's number with dec decimals, or "-"; a ring of buffers for one printf. */
static const char *num(const json_t *o, const char *key, int dec)
{
    static _Thread_local char ring[16][32];
    static _Thread_local unsigned next;
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) return "-";
    char *buf = ring[next++ % 16];
    snprintf(buf, sizeof ring[0], "%.*f", dec, json_number_value(v));
    return buf;
}

void rm_print_io_totals(FILE *out, const json_t *summary)
{
    const json_t *io = json_object_get(summary, "io");
    if (!json_is_object(io)) return;
    fprintf(out, "  I/O  disk read %s write %s MB/s   network rx %s tx %s MB/s\n",
            num(io, "disk_read_mb_s", 2), num(io, "disk_write_mb_s", 2), num(io, "net_rx_mb_s", 2),
            num(io, "net_tx_mb_s", 2));
    fprintf(out, "       pressure (some/full %% of the time)  cpu %s/%s  io %s/%s  memory %s/%s\n",
            num(io, "cpu_some_pct", 1), num(io, "cpu_full_pct", 1), num(io, "io_some_pct", 1),
            num(io, "io_full_pct", 1), num(io, "memory_some_pct", 1),
            num(io, "memory_full_pct", 1));
    fprintf(out, "       process tree: read %s MB (%s MB/s)  write %s MB (%s MB/s)",
            num(io, "tree_read_mb", 1), num(io, "tree_read_mb_s", 2), num(io, "tree_write_mb", 1),
            num(io, "tree_write_mb_s", 2));
    const json_t *u = json_object_get(io, "tree_unreadable_max");
    if (json_is_integer(u) && json_integer_value(u) > 0)
        fprintf(out, "  (up to %lld processes unreadable)", (long long)json_integer_value(u));
    fputc('\n', out);
    const json_t *r = json_object_get(io, "resets");
    if (json_is_integer(r) && json_integer_value(r) > 0)
        fprintf(out,
                "       %lld counters went back (a wrap or a device that came back): "
                "those intervals are left out\n",
                (long long)json_integer_value(r));
}

bool rm_io_phase_has(const json_t *phase)
{
    return json_is_object(json_object_get(phase, "io"));
}

void rm_print_io_phase_title(FILE *out)
{
    fprintf(out,
            "\nI/O by phase (MB/s; pressure: some %% of the time; tree: MB read/written)\n"
            "  %-30s %7s %7s %7s %7s %5s %5s %5s %8s %8s\n",
            "PATH", "DISK R", "DISK W", "NET RX", "NET TX", "CPU", "IO", "MEM", "TREE R", "TREE W");
}

void rm_print_io_phase_line(FILE *out, const json_t *p)
{
    const json_t *io = json_object_get(p, "io");
    if (!json_is_object(io)) return;
    const json_t *path = json_object_get(p, "path");
    char cell[1024];
    fprintf(out, "  %s %7s %7s %7s %7s %5s %5s %5s %8s %8s\n",
            rm_term_cell(cell, sizeof cell, json_is_string(path) ? json_string_value(path) : "-",
                         30, 30),
            num(io, "disk_read_mb_s", 2), num(io, "disk_write_mb_s", 2), num(io, "net_rx_mb_s", 2),
            num(io, "net_tx_mb_s", 2), num(io, "cpu_some_pct", 1), num(io, "io_some_pct", 1),
            num(io, "memory_some_pct", 1), num(io, "tree_read_mb", 1), num(io, "tree_write_mb", 1));
}

void rm_print_io_phases(FILE *out, const json_t *phases)
{
    size_t i;
    const json_t *p;
    bool any = false;
    json_array_foreach(phases, i, p) any |= rm_io_phase_has(p);
    if (!any) return;
    rm_print_io_phase_title(out);
    json_array_foreach(phases, i, p) rm_print_io_phase_line(out, p);
}
