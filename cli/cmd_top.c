/* runmon top: a live terminal view of a recording session, from the sink's files only. */
#include "cli/cmd_top.h"

#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <ncurses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/top.h"
#include "sink/sink.h"

static void top_usage(FILE *out)
{
    fprintf(out,
            "usage: runmon top [--once] [--width N] [SINK_OR_SESSION]\n\n"
            "A live view of a recording session, read from its sink's files: the sink's newest\n"
            "session, the one recording now included. Without SINK_OR_SESSION: the\n"
            "current folder when it is a sink or a session folder, else ./runmon.\n"
            "Per GPU utilization, memory, power, temperature and the last\n"
            "minute of utilization; host CPU and memory; the command's process tree; the GPU\n"
            "processes; open and completed phases, events, and each collector's health.\n\n"
            "  --once      print one frame as plain text and exit (no curses)\n"
            "  --width N   columns of the --once frame (default: $COLUMNS, else 100)\n"
            "  -h, --help  this help\n\n"
            "keys: q quit, space pause, arrows/PgUp/PgDn scroll. NO_COLOR turns colours off.\n"
            "Exit status: 0, or 2 for a path that is not a session or a sink.\n");
}

static double clamp_interval(double iv)
{
    if (!(iv >= 0.2)) return iv > 0 ? 0.2 : 1.0; /* unknown: 1 s */
    return iv > 2.0 ? 2.0 : iv;
}

static int run_curses(struct rm_top *t)
{
    int utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
    if (!initscr()) {
        fprintf(stderr, "runmon top: cannot start the terminal (try --once)\n");
        return 1;
    }
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    int color = !getenv("NO_COLOR") && has_colors();
    if (color) {
        start_color();
        use_default_colors();
        init_pair(1, COLOR_CYAN, -1);
        init_pair(2, COLOR_RED, -1);
        init_pair(3, COLOR_GREEN, -1);
    }
    struct rm_top_frame f = {0};
    int paused = 0, scroll = 0, quit = 0;
    rm_top_poll(t);
    while (!quit) {
        int rows, cols;
        getmaxyx(stdscr, rows, cols);
        if (!paused) rm_top_poll(t);
        rm_top_build(t, cols, utf8, paused, &f);
        int body = rows > 1 ? rows - 1 : 1;
        int maxscroll = (int)f.n > body ? (int)f.n - body : 0;
        if (scroll > maxscroll) scroll = maxscroll;
        if (scroll < 0) scroll = 0;
        erase();
        for (int y = 0; y < body && (size_t)(y + scroll) < f.n; y++) {
            size_t i = (size_t)(y + scroll);
            int attr = 0;
            switch (f.kind[i]) {
            case RM_TOP_TITLE:
                attr = A_BOLD | (color ? COLOR_PAIR(3) : A_REVERSE);
                break;
            case RM_TOP_HEAD:
                attr = color ? COLOR_PAIR(1) : A_UNDERLINE;
                break;
            case RM_TOP_WARN:
                attr = A_BOLD | (color ? COLOR_PAIR(2) : 0);
                break;
            default:
                break;
            }
            if (attr) attron(attr);
            mvaddnstr(y, 0, f.line[i], -1);
            if (attr) attroff(attr);
        }
        char foot[160];
        snprintf(foot, sizeof foot, "q quit  space %s  arrows scroll%s",
                 paused ? "resume" : "pause", maxscroll ? " (more below/above)" : "");
        attron(A_REVERSE);
        mvaddnstr(rows - 1, 0, foot, cols > 1 ? cols - 1 : 1);
        attroff(A_REVERSE);
        refresh();
        timeout((int)(clamp_interval(rm_top_interval(t)) * 1000));
        int ch = getch();
        switch (ch) {
        case 'q':
        case 'Q':
            quit = 1;
            break;
        case ' ':
            paused = !paused;
            break;
        case KEY_UP:
        case 'k':
            scroll--;
            break;
        case KEY_DOWN:
        case 'j':
            scroll++;
            break;
        case KEY_PPAGE:
            scroll -= body;
            break;
        case KEY_NPAGE:
            scroll += body;
            break;
        case KEY_HOME:
            scroll = 0;
            break;
        case KEY_END:
            scroll = maxscroll;
            break;
        default:
            break; /* KEY_RESIZE, a timeout: redraw */
        }
    }
    endwin();
    rm_top_frame_free(&f);
    return 0;
}

int rm_cmd_top(int argc, char **argv)
{
    static const struct option opts[] = {{"once", no_argument, NULL, 'o'},
                                         {"width", required_argument, NULL, 'w'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int once = 0, width = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            once = 1;
            break;
        case 'w': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 40 || v > 400) {
                fprintf(stderr, "runmon top: --width takes 40 to 400 columns\n");
                return 2;
            }
            width = (int)v;
            break;
        }
        case 'h':
            top_usage(stdout);
            return 0;
        default:
            top_usage(stderr);
            return 2;
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "runmon top: one SINK_OR_SESSION at most (see --help)\n");
        return 2;
    }
    char dir[4096], err[1024];
    const char *path = optind < argc ? argv[optind] : rm_default_sink_path(1, err, sizeof err);
    if (!path) {
        fprintf(stderr, "runmon top: %s\n", err);
        return 2;
    }
    int rc = rm_select_live_session("top", path, dir, sizeof dir, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "runmon top: %s\n", err);
        return 2;
    }
    struct rm_top *t = rm_top_open(dir, err, sizeof err);
    if (!t) {
        fprintf(stderr, "runmon top: %s\n", err);
        return 2;
    }
    if (once) {
        if (!width) {
            const char *cl = getenv("COLUMNS");
            width = cl ? atoi(cl) : 0;
            if (width < 40 || width > 400) width = 100;
        }
        struct rm_top_frame f = {0};
        rm_top_poll(t);
        rm_top_build(t, width, 0, 0, &f);
        for (size_t i = 0; i < f.n; i++)
            printf("%s\n", f.line[i]);
        rm_top_frame_free(&f);
        rm_top_free(t);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    setlocale(LC_CTYPE, ""); /* curses draws UTF-8 only in a UTF-8 locale */
    rc = run_curses(t);
    rm_top_free(t);
    return rc;
}
