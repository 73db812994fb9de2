/* The report of one session folder: stream the collector CSVs into downsampled series, read
 * the run log's phases and events, and write the HTML page (see report.h). */
#include <stdlib.h>
#include <string.h>

#include "base/rm_time.h"
#include "model/session.h"
#include "report/report_internal.h"

static const char css[] =
    "body{font:14px/1.4 'DejaVu Sans',Helvetica,Arial,sans-serif;margin:0;background:#f4f5f7;"
    "color:#222}header{background:#20242c;color:#eee;padding:14px 24px}header h1{margin:0;"
    "font-size:20px}header .meta{font-size:13px;color:#bbb;margin-top:4px;overflow-wrap:anywhere}"
    /* A command's word (--epochs) moves to the next line whole; only one longer than the line
       breaks inside. */
    "header .meta .w{display:inline-block;max-width:100%}"
    "main{padding:12px 24px;max-width:1400px;box-sizing:border-box}"
    ".cards{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}.card{background:#fff;"
    "border-radius:6px;padding:10px 14px;min-width:140px;box-shadow:0 1px 2px #0002}"
    ".card .label{font-size:12px;color:#666}.card .value{font-size:20px;font-weight:600}"
    ".card .sub{font-size:11px;color:#777;max-width:15em}"
    ".panel{background:#fff;border-radius:6px;padding:8px 12px;margin:10px 0;"
    "box-shadow:0 1px 2px #0002}.panel h3{margin:2px 0 4px;font-size:15px}"
    ".unit{color:#777;font-weight:400}svg.chart,svg.lane{width:100%;height:auto;display:block}"
    "svg.defs{position:absolute}.series polyline{fill:none;stroke-width:1.3;"
    "stroke-linejoin:round}.axis line{stroke:#e4e4e4;stroke-width:1}.axis text,.lane text{"
    "font-size:calc(11px*var(--k,1));fill:#555}.ref line{stroke-dasharray:6 3;stroke-width:1.2}"
    ".ref text,.alert text{font-size:calc(11px*var(--k,1));stroke:none}.ref text{fill:#333}"
    ".ref.warning line{stroke:#f0a020}.ref.critical line{stroke:#d02020}.lane text{fill:#111}"
    ".alert line{stroke-width:1.2}.alert.warning{stroke:#f0a020;fill:#f0a020}"
    ".alert.critical{stroke:#d02020;fill:#d02020}.end line{stroke:#555;stroke-dasharray:4 3}"
    ".cursor{stroke:#999;visibility:hidden}.legend{font-size:12px;color:#444}"
    ".legend span{margin-right:14px;white-space:nowrap}"
    /* A line's swatch is a piece of that line (svg.sw); a span's (throttle) and a phase's a bar. */
    ".legend svg.sw{vertical-align:middle;margin-right:4px}.legend svg.sw line{stroke-width:2.5}"
    ".legend i,i.sw{display:inline-block;width:14px;height:4px;margin-right:4px;"
    "vertical-align:middle}"
    /* Numbers right, text left (class l: text that wraps, t: short text), headers as their
       cells. */
    "table{border-collapse:collapse;font-size:13px;width:100%}td,th{padding:3px 8px;"
    "border-bottom:1px solid #eee;text-align:right;white-space:nowrap}th{background:#fafafa;"
    "font-weight:600;white-space:normal;vertical-align:bottom}td.l{text-align:left;"
    "white-space:normal;overflow-wrap:anywhere;min-width:8em}th.l,th.t,td.t{text-align:left}"
    ".warn{color:#b07000}.crit{color:#c01010}.note{color:#777;font-size:12px}"
    "#tip{position:fixed;display:none;background:#222d;color:#fff;font-size:12px;"
    "padding:6px 8px;border-radius:4px;pointer-events:none;white-space:pre;z-index:9}"
    /* A table wider than its card scrolls inside it. A shadow shows at an edge with more
       beyond it: white covers that scroll with the table (local) hide the edge shadows
       (scroll) where the table ends, so this needs no script; the script adds a .cue line. */
    ".tw{overflow-x:auto;max-width:100%;background:linear-gradient(90deg,#fff 40%,#fff0) 0 0/"
    "32px 100% no-repeat local,linear-gradient(270deg,#fff 40%,#fff0) 100% 0/32px 100% "
    "no-repeat local,linear-gradient(90deg,#0003,#0000) 0 0/14px 100% no-repeat scroll,"
    "linear-gradient(270deg,#0003,#0000) 100% 0/14px 100% no-repeat scroll}"
    ".cue{margin:2px 0;font-size:12px;color:#555;text-align:right}"
    "@media (max-width:600px){main{padding:8px}header{padding:10px 12px}"
    ".panel{padding:6px 8px}.card{min-width:0;flex:1 1 40%}"
    /* An entry moves to the next line whole (its swatch with its name); only one wider than
       the card wraps inside. */
    ".legend span{display:inline-block;max-width:100%;white-space:normal;"
    "overflow-wrap:anywhere}}"
    "svg.chart,svg.lane{touch-action:pan-y pinch-zoom;cursor:crosshair}.sel{fill:#4a90e2;"
    "fill-opacity:.15;stroke:#4a90e2;pointer-events:none}.zreset{position:fixed;top:8px;right:8px;"
    "z-index:10;font:13px sans-serif;padding:6px 10px}";

/* The page's script: table scroll cues, charts sized for the screen, labels that fit, drag-to-zoom
 * on a shared time range, the hover read-out, and a self-check the tests read back from the DOM
 * (data-ok). */
static const char js[] =
    "(function(){var tip=document.getElementById('tip');\n"
    /* cues: a table wider than its card scrolls inside it; a line above it says so (and the fade
       at its edge, from the CSS, shows where more is). */
    "function cues(){[].forEach.call(document.querySelectorAll('.tw'),function(w){\n"
    "var "
    "c=w.previousElementSibling;if(!c||!c.classList.contains('cue')){c=document.createElement('p');"
    "\n"
    "c.className='cue';c.textContent='scroll the table sideways for more columns \\u2192';\n"
    "w.parentNode.insertBefore(c,w);}c.style.display=w.scrollWidth>w.clientWidth+1?'':'none';});}\n"
    "cues();window.addEventListener('resize',cues);\n"
    "var svgs=[].slice.call(document.querySelectorAll('svg.chart,svg.lane'));\n"
    "if(!svgs.length)return;var VW=1200,L=64,W=1120,R=VW-L-W,D=W,T0=+svgs[0].dataset.t0,\n"
    "T1=+svgs[0].dataset.t1,Z=null,CH=+(document.querySelector('svg.chart')||svgs[0]).dataset.vh;\n"
    "var NS='http://www.w3.org/2000/svg';\n"
    /* size: the plot's drawn width D (units). Where a chart drawn 1200 units wide would be less
       than HMIN px tall, it is drawn narrower (the time axis squeezed, the text not), so a phone
       gets charts of HMIN px. */
    "var HMIN=150;function size(){var w=svgs[0].getBoundingClientRect().width;if(!w)return;\n"
    "D=Math.round(Math.min(VW,Math.max(L+R+200,w*CH/HMIN))-L-R);}\n"
    /* fit: text stays >= 11 CSS px at any width: --k scales the labels up where the chart is drawn
       below 1 px a unit, overlapping axis labels are hidden, the viewBox grows to hold what sticks
       out (the zoomable layers, class z, excepted: they stay in the plot), and a phase name wider
       than its band is cut to fit it (cut), one over another one hidden. */
    "function over(b){return function(a){return "
    "b.left<a.right+3&&a.left<b.right+3&&b.top<a.bottom&&\n"
    "a.top<b.bottom;};}\n"
    /* cut: a phase name wider than its band is cut to what fits with an ellipsis (two
       characters at least, else hidden); the whole name stays in data-name and the tooltip. */
    "function cut(t,room){var full=t.dataset.name||t.textContent;t.textContent=full;\n"
    "if(t.getBBox().width<=room)return;var c=Array.from(full),lo=0,hi=c.length-1;\n"
    "while(lo<hi){var m=(lo+hi+1)>>1;t.textContent=c.slice(0,m).join('')+'\\u2026';\n"
    "if(t.getBBox().width<=room)lo=m;else hi=m-1;}\n"
    "t.textContent=c.slice(0,lo).join('')+'\\u2026';t.style.visibility=lo<2?'hidden':'';}\n"
    "function fit(){svgs.forEach(function(svg){\n"
    "var vw=L+D+R,vh=+svg.dataset.vh,x0=0,y0=0,y1=vh;\n"
    "svg.setAttribute('viewBox','0 0 '+vw+' '+vh);svg.style.setProperty('--k',1);\n"
    "var w=svg.getBoundingClientRect().width;if(!w)return;\n"
    "for(var it=0;it<2;it++){svg.style.setProperty('--k',Math.max(1,(vw-x0)/w));\n"
    "var shown=[];svg.querySelectorAll('g.axis text,g.ref text,g.alert "
    "text').forEach(function(t){\n"
    "t.style.visibility='';if(t.style.display=='none'||t.parentNode.style.display=='none')return;\n"
    "var b=t.getBoundingClientRect();if(shown.some(over(b)))t.style.visibility='hidden';\n"
    "else shown.push(b);});\n"
    "var names=[];svg.querySelectorAll('g.phase').forEach(function(g){var "
    "t=g.querySelector('text'),\n"
    "q=g.querySelector('rect');if(!t)return;t.style.visibility=g.style.display=='none'?'hidden':'';"
    "\n"
    "if(t.style.visibility)return;cut(t,q.width.baseVal.value-4);if(t.style.visibility)return;\n"
    "var b=t.getBoundingClientRect();if(names.some(over(b)))t.style.visibility='hidden';\n"
    "else names.push(b);});\n"
    "var bx=0,by=0,bx1=vw,by1=vh;[].forEach.call(svg.children,function(c){\n"
    "if(c.classList.contains('z')||c.classList.contains('sel')||!c.getBBox)return;var "
    "b=c.getBBox();\n"
    "if(!b.width&&!b.height)return;bx=Math.min(bx,b.x);by=Math.min(by,b.y);\n"
    "bx1=Math.max(bx1,b.x+b.width);by1=Math.max(by1,b.y+b.height);});\n"
    "x0=Math.min(0,Math.floor(bx-2));y0=Math.min(0,Math.floor(by-2));y1=Math.max(vh,Math.ceil(by1+"
    "2));\n"
    "svg.setAttribute('viewBox',x0+' '+y0+' '+(vw-x0)+' '+(y1-y0));}});}\n"
    /* Zoom: one time range [za, zb] (ms since the epoch) on every chart and the phase lane.
       Everything is written in plot units over the session's range [T0, T1] and a plot W wide:
       drawn D wide over [za, zb], plot x maps to L + (x - xa) * k; lines are clipped at the plot's
       edges, markers move and the time axis is redrawn. The originals are kept, so a reset at the
       written width restores the page exactly as written. */
    "function tOf(x){var a=Z?Z[0]:T0,b=Z?Z[1]:T1;return a+(x-L)/D*(b-a);}\n"
    "function pOf(t){return L+(t-T0)/(T1-T0)*W;}\n"
    "function keep(el,a){if(!('_o' in "
    "el)){el._o={};a.forEach(function(n){el._o[n]=el.getAttribute(n);});}\n"
    "return el._o;}\n"
    "function clip(P,k,o){var r=[],lo=L,hi=L+D;for(var i=0;i+1<P.length;i++){\n"
    "var x1=P[i][0]*k+o,y1=P[i][1],x2=P[i+1][0]*k+o,y2=P[i+1][1];if(x2<lo||x1>hi)continue;\n"
    "var ax=x1,ay=y1,bx=x2,by=y2;if(ax<lo){ay=y1+(y2-y1)*(lo-x1)/(x2-x1);ax=lo;}\n"
    "if(bx>hi){by=y1+(y2-y1)*(hi-x1)/(x2-x1);bx=hi;}var s=ax.toFixed(1)+','+ay.toFixed(1);\n"
    "if(r[r.length-1]!==s)r.push(s);r.push(bx.toFixed(1)+','+by.toFixed(1));}return r.join(' ');}\n"
    "var "
    "ST=[0.1,0.2,0.5,1,2,5,10,15,30,60,120,300,600,900,1800,3600,7200,10800,21600,43200,86400,\n"
    "172800,432000,864000,2592000];\n"
    "function p2(n){return(n<10?'0':'')+n;}\n"
    "function lab(s,step,last){if(step<1)return s.toFixed(1)+'s';if(last<120)return "
    "Math.round(s)+'s';\n"
    "var "
    "v=Math.round(s),d=Math.floor(v/86400),h=Math.floor(v%86400/3600),m=Math.floor(v%3600/"
    "60),c=v%60;\n"
    "if(d)return d+'d '+p2(h)+':'+p2(m);if(last<3600)return(h*60+m)+':'+p2(c);\n"
    "return step<60?h+':'+p2(m)+':'+p2(c):h+':'+p2(m);}\n"
    /* The time axis: a label per 70 units of plot at most, 10 on a plot of the written width. */
    "function axis(svg,g,a,b){if(!('_o' in g)){g._o=g.innerHTML;var l=g.querySelector('line');\n"
    "g._y=l?[+l.getAttribute('y1'),+l.getAttribute('y2')]:[8,158];}\n"
    "if(a==null){g.innerHTML=g._o;return;}g.innerHTML='';\n"
    "var "
    "ea=(a-T0)/1000,eb=(b-T0)/"
    "1000,span=eb-ea,step=ST[ST.length-1],nmax=Math.min(10,Math.max(4,Math.round(D/70)));\n"
    "for(var i=0;i<ST.length;i++)if(span/ST[i]<=nmax){step=ST[i];break;}\n"
    "for(var s=Math.ceil(ea/step-1e-9)*step;s<=eb+1e-9;s+=step){var x=L+(s-ea)/span*D;\n"
    "var ln=document.createElementNS(NS,'line');ln.setAttribute('x1',x.toFixed(1));\n"
    "ln.setAttribute('x2',x.toFixed(1));ln.setAttribute('y1',g._y[0]);ln.setAttribute('y2',g._y[1])"
    ";\n"
    "var t=document.createElementNS(NS,'text');t.setAttribute('x',x.toFixed(1));\n"
    "t.setAttribute('y',g._y[1]+14);t.setAttribute('text-anchor',x>L+D-30?'end':'middle');\n"
    "t.textContent=lab(s,step,eb);g.appendChild(ln);g.appendChild(t);}}\n"
    "function render(){var a=Z?Z[0]:T0,b=Z?Z[1]:T1,xa=pOf(a),k=D/(pOf(b)-xa),o=L-xa*k,hi=L+D,\n"
    "tf=!!Z||D!=W;\n"
    /* The clip applies in the stretched layers' own units: the range shown of the plot. */
    "cr.setAttribute('x',xa);cr.setAttribute('width',D/k);\n"
    /* The hatching keeps its look: its pattern is squeezed by what stretches the layers. */
    "var hatch=document.getElementById('hatch');if(hatch)hatch.setAttribute('patternTransform',\n"
    "(tf?'scale('+1/k+' 1) ':'')+'rotate(45)');\n"
    "svgs.forEach(function(svg){svg.dataset.z0=Math.round(a);svg.dataset.z1=Math.round(b);\n"
    "svg.dataset.pw=D;\n"
    "svg.querySelectorAll('g.axis.t').forEach(function(g){axis(svg,g,tf?a:null,b);});\n"
    "svg.querySelectorAll('use.z').forEach(function(u){if(tf){u.setAttribute('transform',\n"
    "'matrix('+k+' 0 0 1 '+o+' 0)');u.setAttribute('clip-path','url(#zclip)');}\n"
    "else{u.removeAttribute('transform');u.removeAttribute('clip-path');}});\n"
    "svg.querySelectorAll('polyline[data-series]').forEach(function(p){var O=keep(p,['points']);\n"
    "if(!p._p)p._p=O.points.trim().split(/\\s+/).map(function(q){return "
    "q.split(',').map(Number);});\n"
    "p.setAttribute('points',tf?clip(p._p,k,o):O.points);});\n"
    "svg.querySelectorAll('rect.thr,g.phase rect').forEach(function(r){var "
    "O=keep(r,['x','width']);\n"
    "if(!tf){r.setAttribute('x',O.x);r.setAttribute('width',O.width);r.style.display='';return;}\n"
    "var x1=Math.max(L,+O.x*k+o),x2=Math.min(hi,(+O.x+ +O.width)*k+o);\n"
    "r.style.display=x2<=x1?'none':'';r.setAttribute('x',x1.toFixed(1));\n"
    "r.setAttribute('width',Math.max(1,x2-x1).toFixed(1));});\n"
    "svg.querySelectorAll('g.phase').forEach(function(g){var t=g.querySelector('text'),\n"
    "r=g.querySelector('rect');g.style.display=r.style.display;if(!t)return;var O=keep(t,['x']);\n"
    "t.setAttribute('x',tf?(+r.getAttribute('x')+4).toFixed(1):O.x);});\n"
    "svg.querySelectorAll('g.alert').forEach(function(g){var "
    "x=+g.querySelector('line').getAttribute('x1'),\n"
    "nx=x*k+o;g.setAttribute('transform',tf?'translate('+(nx-x).toFixed(1)+' 0)':'');\n"
    "g.style.display=tf&&(nx<L||nx>hi)?'none':'';});\n"
    /* The grid's and reference lines' right ends and the reference labels follow the plot's width.
     */
    "svg.querySelectorAll('g.axis:not(.t) line,g.ref line').forEach(function(l){var "
    "O=keep(l,['x2']);\n"
    "l.setAttribute('x2',tf?hi:O.x2);});\n"
    "svg.querySelectorAll('g.ref text').forEach(function(t){var O=keep(t,['x']);\n"
    "t.setAttribute('x',tf?hi-4:O.x);});});\n"
    "document.body.dataset.zoom=Z?Math.round(a)+'-'+Math.round(b):'';\n"
    "reset.style.display=Z?'':'none';fit();}\n"
    "var reset=document.createElement('button');reset.className='zreset';\n"
    "reset.textContent='Reset zoom';reset.style.display='none';document.body.appendChild(reset);\n"
    "reset.addEventListener('click',function(){Z=null;render();});\n"
    "var cp=document.createElementNS(NS,'clipPath');cp.id='zclip';var "
    "cr=document.createElementNS(NS,'rect');\n"
    "cr.setAttribute('y',-1000);\n"
    "cr.setAttribute('height',3000);cp.appendChild(cr);var defs=document.querySelector('svg.defs "
    "defs');\n"
    "if(defs)defs.appendChild(cp);\n"
    "function px(svg,e){var r=svg.getBoundingClientRect(),vb=svg.viewBox.baseVal;\n"
    "return vb.x+(e.clientX-r.left)*vb.width/r.width;}\n"
    "svgs.forEach(function(svg){var d=null,sel=null;\n"
    "svg.addEventListener('pointerdown',function(e){if(e.button)return;var x=px(svg,e);\n"
    "if(x<L||x>L+D)return;d={x:x,cx:e.clientX};if(svg.setPointerCapture)svg.setPointerCapture(e."
    "pointerId);\n"
    "sel=document.createElementNS(NS,'rect');sel.setAttribute('class','sel');sel.setAttribute('y',"
    "0);\n"
    "sel.setAttribute('height',svg.dataset.vh);sel.setAttribute('x',x);sel.setAttribute('width',0);"
    "\n"
    "svg.appendChild(sel);e.preventDefault();});\n"
    "svg.addEventListener('pointermove',function(e){if(!d)return;var "
    "x=Math.max(L,Math.min(L+D,px(svg,e)));\n"
    "sel.setAttribute('x',Math.min(x,d.x));sel.setAttribute('width',Math.abs(x-d.x));});\n"
    "function end(e,cancel){if(!d)return;var x=Math.max(L,Math.min(L+D,px(svg,e)));sel.remove();\n"
    "var s=d;d=null;if(cancel||Math.abs(e.clientX-s.cx)<5)return;\n"
    "var a=tOf(Math.min(x,s.x)),b=tOf(Math.max(x,s.x));if(b-a<1)return;Z=[a,b];render();}\n"
    "svg.addEventListener('pointerup',function(e){end(e,false);});\n"
    "svg.addEventListener('pointercancel',function(e){end(e,true);});\n"
    "svg.addEventListener('dblclick',function(){if(Z){Z=null;render();}});});\n"
    "function layout(){size();render();}\n"
    "layout();window.addEventListener('resize',layout);\n"
    /* Hover read-out: the time under the pointer and each line's nearest value. */
    "document.querySelectorAll('svg.chart').forEach(function(svg){\n"
    "var d=svg.dataset,T=+d.pt,H=+d.ph,Y=+d.y1;\n"
    "var cur=svg.querySelector('.cursor');\n"
    "svg.addEventListener('mouseleave',function(){tip.style.display='none';\n"
    "cur.style.visibility='hidden';});\n"
    "svg.addEventListener('mousemove',function(e){var x=px(svg,e);\n"
    "if(x<L||x>L+D){tip.style.display='none';cur.style.visibility='hidden';return;}\n"
    "var best={};svg.querySelectorAll('polyline[data-series]').forEach(function(p){\n"
    "var k=p.getAttribute('data-label'),pts=p.points;\n"
    "for(var i=0;i<pts.numberOfItems;i++){var q=pts.getItem(i),dx=Math.abs(q.x-x);\n"
    "if(!(k in best)||dx<best[k].d)best[k]={d:dx,y:q.y};}});\n"
    "var s=new Date(tOf(x)).toISOString().replace('T',' ').slice(0,23)+' UTC';\n"
    "for(var k in best)if(best[k].d<D/100)s+='\\n'+k+': '+((T+H-best[k].y)/H*Y).toFixed(1)+' '\n"
    "+d.unit;tip.textContent=s;tip.style.display='block';\n"
    "tip.style.left=(e.clientX+14)+'px';tip.style.top=(e.clientY+10)+'px';\n"
    "cur.setAttribute('x1',x);cur.setAttribute('x2',x);cur.style.visibility='visible';});});\n"
    /* Self-check the tests read back from the DOM (data-ok). */
    "var n=0,bad=0,lines=0;document.querySelectorAll('svg.chart').forEach(function(s){\n"
    "var b=s.getBoundingClientRect(),w=0;if(b.width<300||b.height<40)bad++;\n"
    "s.querySelectorAll('polyline[data-series]').forEach(function(p){lines++;\n"
    "var bb=p.getBBox();if(bb.width>w)w=bb.width;});if(w>0)n++;else bad++;});\n"
    "document.body.setAttribute('data-charts',n);document.body.setAttribute('data-lines',lines);\n"
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
    const json_t *sig = rm_report_get(ses, "signal");
    if (json_is_integer(sig) && json_integer_value(sig) > 0) {
        char st[64]; /* " (SIGTERM)": the signal that stopped the run */
        rm_session_status_text(st, sizeof st, "", json_integer_value(sig));
        esc(o, st);
    }
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
            fputs("<span class=\"w\">", o);
            if (json_is_string(a)) esc(o, json_string_value(a));
            fputs("</span>", o);
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
        fprintf(
            o,
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
