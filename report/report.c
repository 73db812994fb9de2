/* The report of one session folder: stream the collector CSVs into downsampled series, read
 * the run log's phases and events, and write the HTML page (see report.h). */
#include <stdlib.h>
#include <string.h>

#include "base/rm_time.h"
#include "report/report_internal.h"

static const char css[] =
    "body{font:14px/1.4 'DejaVu Sans',Helvetica,Arial,sans-serif;margin:0;background:#f4f5f7;"
    "color:#222}header{background:#20242c;color:#eee;padding:14px 24px}header h1{margin:0;"
    "font-size:20px}header .meta{font-size:13px;color:#bbb;margin-top:4px;word-break:break-all}"
    "main{padding:12px "
    "24px;max-width:1400px;box-sizing:border-box}.cards{display:flex;flex-wrap:wrap;gap:10px;"
    "margin:8px 0}.card{background:#fff;border-radius:6px;padding:10px 14px;min-width:140px;"
    "box-shadow:0 1px 2px #0002}.card .label{font-size:12px;color:#666}.card .value{"
    "font-size:20px;font-weight:600}.panel{background:#fff;border-radius:6px;padding:8px 12px;"
    "margin:10px 0;box-shadow:0 1px 2px #0002}.panel h3{margin:2px 0 4px;font-size:15px}"
    ".unit{color:#777;font-weight:400}svg.chart,svg.lane{width:100%;height:auto;display:block}"
    "svg.defs{position:absolute}.series polyline{fill:none;stroke-width:1.3;"
    "stroke-linejoin:round}.axis line{stroke:#e4e4e4;stroke-width:1}.axis text,.lane text{"
    "font-size:calc(11px*var(--k,1));fill:#555}.ref line{stroke-dasharray:6 3;stroke-width:1.2}"
    ".ref text,.alert text{font-size:calc(11px*var(--k,1));stroke:none}.ref text{fill:#333}"
    ".ref.warning line{stroke:#f0a020}.ref.critical line{stroke:#d02020}.lane text{fill:#111}.alert line{stroke-width:1.2}.alert.warning"
    "{stroke:#f0a020;fill:#f0a020}.alert.critical{stroke:#d02020;fill:#d02020}.end line{"
    "stroke:#555;stroke-dasharray:4 3}.cursor{stroke:#999;visibility:hidden}.legend{"
    "font-size:12px;color:#444}.legend span{margin-right:14px;white-space:nowrap}.legend i,i.sw{"
    "display:inline-block;width:14px;height:4px;margin-right:4px;vertical-align:middle}"
    "table{border-collapse:collapse;font-size:13px;width:100%}td,th{padding:3px 8px;"
    "border-bottom:1px solid #eee;text-align:right;white-space:nowrap}th{background:#fafafa;"
    "font-weight:600}td.l{text-align:left;white-space:normal;overflow-wrap:anywhere;min-width:8em}."
    "warn{"
    "color:#b07000}.crit{color:#c01010}.note{color:#777;font-size:12px}#tip{position:fixed;"
    "display:none;background:#222d;color:#fff;font-size:12px;padding:6px 8px;border-radius:4px;"
    "pointer-events:none;white-space:pre;z-index:9}.tw{overflow-x:auto;max-width:100%}th{"
    "white-space:normal;vertical-align:bottom}@media (max-width:600px){main{padding:8px}"
    "header{padding:10px 12px}.panel{padding:6px 8px}.card{min-width:0;flex:1 1 40%}"
    ".legend span{white-space:normal;overflow-wrap:anywhere}}";

/* Hover read-out, and a self-check the tests read back from the DOM (data-ok). */
static const char js[] =
    "(function(){var tip=document.getElementById('tip');"
    /* Text stays >= 11 CSS px at any width: --k scales the labels up where the chart is
     * drawn below its 1200-unit size, overlapping axis labels are hidden, the viewBox grows
     * to hold what sticks out, and a phase name wider than its band is hidden. */
    "function fit(){document.querySelectorAll('svg.chart,svg.lane').forEach(function(svg){"
    "var VW=1200,vh=+svg.dataset.vh,x0=0,y0=0,y1=vh;"
    "svg.setAttribute('viewBox','0 0 '+VW+' '+vh);svg.style.setProperty('--k',1);"
    "var w=svg.getBoundingClientRect().width;if(!w)return;"
    "for(var it=0;it<2;it++){svg.style.setProperty('--k',Math.max(1,(VW-x0)/w));"
    "var shown=[];svg.querySelectorAll('g.axis text,g.ref text,g.alert text').forEach(function(t){"
    "t.style.visibility='';var b=t.getBoundingClientRect();if(shown.some(function(a){"
    "return b.left<a.right+3&&a.left<b.right+3&&b.top<a.bottom&&a.top<b.bottom;}))"
    "t.style.visibility='hidden';else shown.push(b);});"
    "svg.querySelectorAll('g.phase').forEach(function(g){var t=g.querySelector('text'),"
    "q=g.querySelector('rect');if(t)t.style.visibility=t.getBBox().width+4>q.width.baseVal.value?"
    "'hidden':'';});"
    "var bb=svg.getBBox();x0=Math.min(0,Math.floor(bb.x-2));y0=Math.min(0,Math.floor(bb.y-2));"
    "y1=Math.max(vh,Math.ceil(bb.y+bb.height+2));"
    "svg.setAttribute('viewBox',x0+' '+y0+' '+(VW-x0)+' '+(y1-y0));}});}"
    "fit();window.addEventListener('resize',fit);"
    "document.querySelectorAll('svg.chart').forEach(function(svg){"
    "var d=svg.dataset,L=+d.l,W=+d.pw,T=+d.pt,H=+d.ph,Y=+d.y1,t0=+d.t0,t1=+d.t1;"
    "var cur=svg.querySelector('.cursor');"
    "svg.addEventListener('mouseleave',function(){tip.style.display='none';"
    "cur.style.visibility='hidden';});"
    "svg.addEventListener('mousemove',function(e){var r=svg.getBoundingClientRect();"
    "var vb=svg.viewBox.baseVal,x=vb.x+(e.clientX-r.left)*vb.width/r.width;"
    "if(x<L||x>L+W){tip.style.display='none';cur.style.visibility='hidden';return;}"
    "var best={};svg.querySelectorAll('polyline[data-series]').forEach(function(p){"
    "var k=p.getAttribute('data-label'),pts=p.points;"
    "for(var i=0;i<pts.numberOfItems;i++){var q=pts.getItem(i),dx=Math.abs(q.x-x);"
    "if(!(k in best)||dx<best[k].d)best[k]={d:dx,y:q.y};}});"
    "var s=new Date(t0+(x-L)/W*(t1-t0)).toISOString().replace('T',' ').slice(0,23)+' UTC';"
    "for(var k in best)if(best[k].d<W/100)s+='\\n'+k+': '+((T+H-best[k].y)/H*Y).toFixed(1)+' '"
    "+d.unit;tip.textContent=s;tip.style.display='block';"
    "tip.style.left=(e.clientX+14)+'px';tip.style.top=(e.clientY+10)+'px';"
    "cur.setAttribute('x1',x);cur.setAttribute('x2',x);cur.style.visibility='visible';});});"
    "var n=0,bad=0,lines=0;document.querySelectorAll('svg.chart').forEach(function(s){"
    "var b=s.getBoundingClientRect(),w=0;if(b.width<300||b.height<40)bad++;"
    "s.querySelectorAll('polyline[data-series]').forEach(function(p){lines++;"
    "var bb=p.getBBox();if(bb.width>w)w=bb.width;});if(w>0)n++;else bad++;});"
    "document.body.setAttribute('data-charts',n);document.body.setAttribute('data-lines',lines);"
    "document.body.setAttribute('data-ok',n>0&&!bad?'1':'0');})();";

/* <head> and the page's header: the session's id, host, status, times and command. */
static void write_head(struct report *r)
{
    FILE *o = r->out;
    const json_t *ses = rm_report_get(r->summary, "session");
    if (!json_is_object(ses)) ses = r->session;
    const json_t *id = rm_report_get(ses, "id");
    if (!json_is_string(id)) id = rm_report_get(r->session, "session_id");
    fprintf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
               "<meta name=\"viewport\" content=\"width=device-width\">"
               "<meta name=\"generator\" content=\"runmon report\"><title>runmon report ");
    if (json_is_string(id)) esc(o, json_string_value(id));
    fprintf(o, "</title><style>%s</style></head>\n<body>\n<header><h1>runmon report", css);
    if (json_is_string(id)) {
        fprintf(o, " &#8212; ");
        esc(o, json_string_value(id));
    }
    fprintf(o, "</h1><div class=\"meta\">host <strong>");
    rm_report_str_or_dash(o, rm_report_get(ses, "host"));
    fprintf(o, "</strong> &#183; status <strong>");
    rm_report_str_or_dash(o, rm_report_get(ses, "status"));
    fprintf(o, "</strong> &#183; exit code ");
    rm_report_str_or_dash(o, rm_report_get(ses, "exit_code"));
    fprintf(o, " &#183; ");
    rm_report_str_or_dash(o, rm_report_get(ses, "started_at"));
    fprintf(o, " &#8594; ");
    rm_report_str_or_dash(o, rm_report_get(ses, "ended_at"));
    fprintf(o, " &#183; interval ");
    rm_report_num(o, rm_report_get(ses, "interval_s"), -1, " s", 1);
    const json_t *drv = rm_report_get(ses, "driver_version");
    if (json_is_string(drv)) {
        fprintf(o, " &#183; driver ");
        esc(o, json_string_value(drv));
    }
    fprintf(o, "</div><div class=\"meta\">command: <code>");
    const json_t *cmd = rm_report_get(ses, "command");
    size_t i;
    json_t *a;
    if (json_is_array(cmd)) {
        json_array_foreach(cmd, i, a)
        {
            if (i) fputc(' ', o);
            if (json_is_string(a)) esc(o, json_string_value(a));
        }
    } else {
        rm_report_str_or_dash(o, cmd);
    }
    fprintf(o, "</code></div></header>\n<main>\n");
}

static void write_page(struct report *r)
{
    FILE *o = r->out;
    write_head(r);
    rm_report_write_cards(r);
    struct band *bands;
    size_t dropped, nb = rm_report_make_bands(r, &bands, &dropped);
    rm_report_write_defs(r, bands, nb);
    if (r->t1 > r->t0) {
        char from[RM_TS_BUFSZ], to[RM_TS_BUFSZ];
        rm_format_ts(r->t0, from);
        rm_format_ts(r->t1, to);
        fprintf(o,
                "<p class=\"note\">Time axis: elapsed since %s (UTC) to %s. Hatched: a "
                "collector was down; orange/red marks: VRAM alerts (on the GPU memory chart); dashed "
                "vertical: session end; "
                "breaks in a line: no samples, or the collector was down.</p>\n",
                from, to);
    }
    rm_report_write_lane(r, bands, nb, dropped);
    free(bands);
    rm_report_write_charts(r);
    rm_report_write_gpu_table(r);
    rm_report_write_processes(r);
    rm_report_write_phase_table(r);
    rm_report_write_phase_memory(r);
    rm_report_write_events(r);
    rm_report_write_quality(r);
    fprintf(o, "</main><div id=\"tip\"></div>\n<script>%s</script>\n</body></html>\n", js);
}

/* ---- building ------------------------------------------------------------------------- */

int rm_report_build(const char *dir, const json_t *summary, char **html, size_t *len, char *err,
                    size_t errsz)
{
    struct report r;
    *html = NULL;
    *len = 0;
    int rc = rm_report_collect(&r, dir, summary, err, errsz);
    if (!rc) {
        r.out = open_memstream(html, len);
        if (!r.out) {
            snprintf(err, errsz, "out of memory");
            rc = 1;
        } else {
            write_page(&r);
            if (fclose(r.out)) {
                snprintf(err, errsz, "out of memory");
                rc = 1;
            }
        }
    }
    if (rc && *html) {
        free(*html);
        *html = NULL;
        *len = 0;
    }
    rm_report_free(&r);
    return rc;
}
